// secure_front.hpp — the words libvam-secure.so (secure.cpp) writes around
// every object, and how a reader tells them from any other bytes. secure.cpp
// writes and checks them; secure_copy.cpp reads them to check a memcpy.
//
// Every object is asked of vam 64 bytes larger: the program's object q starts
// `pad` bytes into vam's object p (kFront, or the alignment asked when
// larger). The kFront bytes before q hold two canary words, then the size
// word (the size asked, the form that made the object and the pad, mixed
// with q's key) and its seal; the kCanary bytes after q's last byte hold four
// canary words. A live front's seal ends in kEdgeByte, the byte next to q.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vam/check.hpp"

#if defined(VAM_SECURE)

#define VAM_SECURE_INLINE inline __attribute__((always_inline))

namespace alloclab::vam::secure {

constexpr std::size_t kFront = 32;   // two canary words, the size word and the seal
constexpr std::size_t kCanary = 32;  // four canary words after the object

// The size word, before it is mixed with the key: the size asked from bit
// kSizeShift, the form the object was made by from bit kFormShift (two bits:
// kFormMalloc, kFormNew, kFormNewArray; instrument.hpp), log2 of the pad
// (5..30) below it.
constexpr unsigned kFormShift = 5;
constexpr unsigned kSizeShift = 8;
VAM_SECURE_INLINE std::uint64_t size_word_of(std::size_t n, unsigned form, std::size_t pad) noexcept {
  return n << kSizeShift | std::uint64_t{form} << kFormShift | static_cast<std::uint64_t>(__builtin_ctzll(pad));
}

// The per-process secret, set at the first allocation (secure.cpp, arm): a
// front or a copy looked at before it cannot be an object's, and reads the
// secret as zero, so only allocation pays for the test.
extern std::uint64_t g_secret VAM_HIDDEN;

// q's key: the secret mixed with q's address, so that no two objects' fronts
// and canaries are alike.
VAM_SECURE_INLINE std::uint64_t key(const void *q) noexcept {
  return g_secret ^ (reinterpret_cast<std::uintptr_t>(q) * 0x9e3779b97f4a7c15ull);
}

VAM_SECURE_INLINE std::uint64_t rotate(std::uint64_t x, unsigned r) noexcept { return x << r | x >> (64 - r); }

// What a live object's second front word holds beside the size word (a freed
// one's holds its complement): the size word mixed with q's key k. Rewriting
// the size word, or writing both words with anything but arm's, breaks it
// (but once in 2^56). One multiply of the size word is all the mixing it
// needs: a change to both words by the same xor or the same increment then
// breaks it too. More would hide nothing: the size word is the size asked
// xor k, so whoever can read a front and knows the size has k already. Its last
// byte, the one next to the object, is fixed (kEdgeByte, or its complement
// when freed), as is the canary's first: a one-byte underflow or overflow is
// then found whatever the byte written, but for that one value, rather than
// missed once in 256 runs when it happens to equal a random byte.
constexpr std::uint64_t kEdgeByte = 0xa5;
// The seal's top byte is the one next to the object only in little-endian
// order; check_copy's one-byte test reads it there.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the seal's fixed byte must lie next to the object");
VAM_SECURE_INLINE std::uint64_t seal(std::uint64_t k, std::uint64_t size_word) noexcept {
  return (((size_word * 0xbf58476d1ce4e5b9ull) ^ rotate(k, 29)) & (~std::uint64_t{0} >> 8)) | kEdgeByte << 56;
}
// The word after the object's last byte, and the two before its size word.
VAM_SECURE_INLINE std::uint64_t canary(std::uint64_t k) noexcept {
  return ((rotate(k, 41) ^ 0x5a5a5a5a5a5a5a5aull) & ~std::uint64_t{0xff}) | kEdgeByte;
}

// Word access at any alignment, inlined: never through the exported memcpy.
VAM_SECURE_INLINE std::uint64_t load_word(const void *at) noexcept {
  std::uint64_t w;
  __builtin_memcpy(&w, at, sizeof w);
  return w;
}
VAM_SECURE_INLINE void store_word(void *at, std::uint64_t w) noexcept { __builtin_memcpy(at, &w, sizeof w); }

}  // namespace alloclab::vam::secure

#endif  // VAM_SECURE

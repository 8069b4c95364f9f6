// text.hpp — number formatting, environment reading and raw file output for
// the lab's preload shims.
//
// The shims live inside malloc (profile) or before main (litter), so nothing
// here allocates: numbers are formatted into caller buffers, environment
// values are read with getenv (which returns a pointer into environ), and
// files are written with open/write/close.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace alloclab::lab {

// A fixed-capacity text buffer that silently stops growing when full; the
// caller checks `overflowed()` before trusting the result.
class TextBuffer {
 public:
  TextBuffer(char *data, std::size_t capacity) noexcept : data_(data), cap_(capacity) {}

  void put(const char *s) noexcept { put(s, std::strlen(s)); }
  void put(const char *s, std::size_t n) noexcept {
    if (len_ + n > cap_) { overflow_ = true; n = cap_ - len_; }
    std::memcpy(data_ + len_, s, n);
    len_ += n;
  }
  void put(char c) noexcept { put(&c, 1); }

  void put_u64(std::uint64_t v) noexcept {
    char tmp[24];
    int i = 0;
    do { tmp[i++] = static_cast<char>('0' + v % 10); v /= 10; } while (v != 0);
    char out[24];
    for (int k = 0; k < i; ++k) out[k] = tmp[i - 1 - k];
    put(out, static_cast<std::size_t>(i));
  }
  void put_i64(std::int64_t v) noexcept {
    if (v < 0) { put('-'); put_u64(static_cast<std::uint64_t>(-(v + 1)) + 1); }
    else put_u64(static_cast<std::uint64_t>(v));
  }
  // num/den with three decimals, rounded half up (den 0 prints 0.000).
  void put_ratio3(std::uint64_t num, std::uint64_t den) noexcept {
    if (den == 0) { put("0.000"); return; }
    unsigned __int128 scaled = (static_cast<unsigned __int128>(num) * 1000 + den / 2) / den;
    put_u64(static_cast<std::uint64_t>(scaled / 1000));
    put('.');
    const auto frac = static_cast<unsigned>(scaled % 1000);
    put(static_cast<char>('0' + frac / 100));
    put(static_cast<char>('0' + frac / 10 % 10));
    put(static_cast<char>('0' + frac % 10));
  }

  // s as a JSON string: quotes and backslashes escaped, control characters as '?'.
  void put_json_string(const char *s) noexcept {
    put('"');
    for (; *s; ++s) {
      const unsigned char c = static_cast<unsigned char>(*s);
      if (c == '"' || c == '\\') { put('\\'); put(*s); }
      else if (c < 0x20) put('?');
      else put(*s);
    }
    put('"');
  }
  // ,"name":v — one numeric member of a JSON object.
  void put_member(const char *name, std::int64_t v) noexcept {
    put(",\"");
    put(name);
    put("\":");
    put_i64(v);
  }

  const char *data() const noexcept { return data_; }
  std::size_t size() const noexcept { return len_; }
  bool overflowed() const noexcept { return overflow_; }
  void clear() noexcept { len_ = 0; overflow_ = false; }

 private:
  char *data_;
  std::size_t cap_;
  std::size_t len_ = 0;
  bool overflow_ = false;
};

// Parses a whole decimal unsigned integer; false on empty, junk or overflow.
inline bool parse_u64(const char *s, std::uint64_t *out) noexcept {
  if (s == nullptr || *s == '\0') return false;
  std::uint64_t v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// Writes all of [data, data+n) to fd, retrying short writes and EINTR.
inline bool write_all(int fd, const char *data, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace alloclab::lab

// large_object_heap.hpp — LargeObjectHeap<Source>: objects too big for a
// chunk get a mapping of their own, tracked on a list so that a clear or a
// destroy can return every one, and a free returns it at once.
//
// Source is a MappingCache (mapping_cache.hpp): a freed object's mapping goes
// back to it, and a later request of any size may get it again, resized in
// place or as it is (then larger than asked: the object's usable size says
// so). Requests aligned to more than a page get a fresh mapping.
//
// Mapping layout: [LargeHeader][pad][header word][payload ...]. The header
// word carries tag::LARGE and the payload's offset from the mapping start,
// so a pointer leads back to its mapping in O(1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/boundary_tag.hpp"
#include "layers/os.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

template <class Source>
class LargeObjectHeap : public Source {
  struct LargeHeader {
    LargeHeader *next;
    LargeHeader *prev;
    std::size_t bytes;     // whole mapping
    std::size_t unused;    // kOffset counts four words of header
  };
  static constexpr std::size_t kOffset = 48;  // payload offset at default alignment

 public:
  // n bytes aligned to `align` (a power of two >= 16); nullptr on failure.
  void *alloc(std::size_t n, std::size_t align) noexcept {
    const std::size_t ps = os::page_size();
    if (n > tag::kMaxRequest || align > (std::size_t{1} << 40)) return nullptr;
    const std::size_t off = os::align_up(kOffset, align);  // room for the headers
    const std::size_t bytes = os::align_up(n + off, ps);
    if (bytes == 0) return nullptr;
    std::size_t got = bytes;
    char *m = static_cast<char *>(align > ps ? Source::get_fresh_at(bytes, align, 0)
                                             : Source::get_chunk(bytes, &got));
    if (!m) return nullptr;
    auto *h = reinterpret_cast<LargeHeader *>(m);
    h->bytes = got;
    h->prev = nullptr;
    h->next = head_;
    if (head_) head_->prev = h;
    head_ = h;
    held_bytes_ += got;
    ++count_;
    char *p = m + off;
    tag::word(p - tag::kHeader) = off | tag::LARGE | tag::INUSE;
    return p;
  }

  static bool is_large(const void *p) noexcept {
    return tag::word(tag::block_of(p)) & tag::LARGE;
  }
  static std::size_t usable(const void *p) noexcept {
    const LargeHeader *h = header_of(p);
    return h->bytes - (tag::word(tag::block_of(p)) & ~tag::FLAGS);
  }

  void free(void *p) noexcept {
    LargeHeader *h = header_of(p);
    unlink(h);
    give_back(h);
  }

  // Is p the payload of one of our objects? (a walk: checked mode only)
  bool owns(const void *p) const noexcept {
    for (LargeHeader *h = head_; h; h = h->next) {
      const char *m = reinterpret_cast<const char *>(h);
      if (p > m && p < m + h->bytes)
        return p == m + (tag::word(tag::block_of(p)) & ~tag::FLAGS);
    }
    return false;
  }

  void release_all() noexcept {
    while (LargeHeader *h = head_) {
      unlink(h);
      give_back(h);
    }
  }

  std::size_t held_bytes() const noexcept { return held_bytes_; }
  std::size_t count() const noexcept { return count_; }

 private:
  static LargeHeader *header_of(const void *p) noexcept {
    const std::size_t off = tag::word(tag::block_of(p)) & ~tag::FLAGS;
    return reinterpret_cast<LargeHeader *>(const_cast<char *>(static_cast<const char *>(p)) - off);
  }
  void unlink(LargeHeader *h) noexcept {
    if (h->prev) h->prev->next = h->next;
    else head_ = h->next;
    if (h->next) h->next->prev = h->prev;
  }
  void give_back(LargeHeader *h) noexcept {
    held_bytes_ -= h->bytes;
    --count_;
    if (tools::active()) tools::reveal(h, h->bytes);  // no stale poison for the next owner
    Source::put_chunk(h, h->bytes);
  }

  LargeHeader *head_ = nullptr;
  std::size_t held_bytes_ = 0;
  std::size_t count_ = 0;
};

}  // namespace alloclab

// chunk_list_heap.hpp — ChunkListHeap<Source>: hands out chunks that grow
// geometrically (reaps §5.1: "geometrically-increasing large chunks"),
// threads every chunk it holds on a doubly linked list, and can release them
// all at once — keeping a budget of spares so the next fill needs no system
// call, but no more than that budget.
//
// Source is any chunk source (MmapHeap, ChunkCache<...>).
#pragma once

#include <cstddef>

#include "layers/os.hpp"
#include "layers/tool_hooks.hpp"

namespace alloclab {

struct ChunkHeader {
  ChunkHeader *next;
  ChunkHeader *prev;
  std::size_t bytes;  // whole chunk, header included
  std::size_t reserved;
  char *begin() noexcept { return reinterpret_cast<char *>(this + 1); }
  char *end() noexcept { return reinterpret_cast<char *>(this) + bytes; }
  bool contains(const void *p) const noexcept {
    const char *c = static_cast<const char *>(p);
    const char *b = reinterpret_cast<const char *>(this);
    return c >= b + sizeof(ChunkHeader) && c < b + bytes;
  }
};

template <class Source, std::size_t kFirst = 16 * 1024, std::size_t kMax = 1024 * 1024>
class ChunkListHeap : public Source {
 public:
  // A chunk with at least `need` bytes after its header; nullptr when the
  // system refuses. Spares are used first.
  ChunkHeader *new_chunk(std::size_t need) noexcept {
    for (ChunkHeader *c = spare_; c; c = c->next) {
      if (c->bytes - sizeof(ChunkHeader) >= need) {
        unlink(spare_, c);
        spare_bytes_ -= c->bytes;
        push(used_, c);
        return c;
      }
    }
    std::size_t bytes = next_bytes_;
    const std::size_t want = os::align_up(need + sizeof(ChunkHeader), os::page_size());
    if (want == 0) return nullptr;
    if (want > bytes) {
      bytes = want;
      // keep power-of-two sizes (cacheable) while they are modest
      std::size_t p2 = kFirst;
      while (p2 < want && p2 <= kMax) p2 <<= 1;
      if (p2 >= want && p2 <= kMax) bytes = p2;
    }
    void *m = Source::get_chunk(bytes);
    if (!m) return nullptr;
    if (next_bytes_ < kMax) next_bytes_ <<= 1;
    auto *c = static_cast<ChunkHeader *>(m);
    c->bytes = bytes;
    c->reserved = 0;
    push(used_, c);
    held_bytes_ += bytes;
    ++held_chunks_;
    note_peak();
    return c;
  }

  // Release every chunk in use. Chunks (largest first) are kept as spares
  // while their total stays within keep_budget; the rest go back to Source.
  void release_all(std::size_t keep_budget) noexcept {
    // Pool the spares we already had with the used chunks, biggest first.
    ChunkHeader *all = nullptr;
    auto take = [&](ChunkHeader *&list) {
      while (ChunkHeader *c = list) {
        unlink(list, c);
        insert_by_size(all, c);
      }
    };
    take(used_);
    take(spare_);
    spare_bytes_ = 0;
    while (ChunkHeader *c = all) {
      unlink(all, c);
      if (spare_bytes_ + c->bytes <= keep_budget) {
        push(spare_, c);
        spare_bytes_ += c->bytes;
      } else {
        give_back(c);
      }
    }
  }

  void release_everything() noexcept { release_all(0); }

  bool contains(const void *p) const noexcept { return find(used_, p) != nullptr; }
  ChunkHeader *chunk_of(const void *p) const noexcept { return find(used_, p); }

  // Footprint: chunks held plus memory the owner holds elsewhere (reported
  // with add_external), and its high-water mark.
  void add_external(std::size_t add, std::size_t sub) noexcept {
    external_bytes_ = external_bytes_ + add - sub;
    note_peak();
  }
  std::size_t footprint() const noexcept { return held_bytes_ + external_bytes_; }
  std::size_t peak_footprint() const noexcept { return peak_bytes_; }
  void reset_peak() noexcept { peak_bytes_ = footprint(); }

  std::size_t held_bytes() const noexcept { return held_bytes_; }
  std::size_t held_chunks() const noexcept { return held_chunks_; }
  std::size_t spare_bytes() const noexcept { return spare_bytes_; }

 private:
  static void push(ChunkHeader *&list, ChunkHeader *c) noexcept {
    c->prev = nullptr;
    c->next = list;
    if (list) list->prev = c;
    list = c;
  }
  static void unlink(ChunkHeader *&list, ChunkHeader *c) noexcept {
    if (c->prev) c->prev->next = c->next;
    else list = c->next;
    if (c->next) c->next->prev = c->prev;
  }
  static void insert_by_size(ChunkHeader *&list, ChunkHeader *c) noexcept {
    if (!list || list->bytes <= c->bytes) return push(list, c);
    ChunkHeader *at = list;
    while (at->next && at->next->bytes > c->bytes) at = at->next;
    c->next = at->next;
    c->prev = at;
    if (at->next) at->next->prev = c;
    at->next = c;
  }
  static ChunkHeader *find(ChunkHeader *list, const void *p) noexcept {
    for (ChunkHeader *c = list; c; c = c->next)
      if (c->contains(p)) return c;
    return nullptr;
  }
  void note_peak() noexcept {
    if (held_bytes_ + external_bytes_ > peak_bytes_) peak_bytes_ = held_bytes_ + external_bytes_;
  }
  void give_back(ChunkHeader *c) noexcept {
    const std::size_t bytes = c->bytes;
    held_bytes_ -= bytes;
    --held_chunks_;
    if (tools::active()) tools::reveal(c, bytes);  // no stale poison for the next owner
    Source::put_chunk(c, bytes);
  }

  ChunkHeader *used_ = nullptr;
  ChunkHeader *spare_ = nullptr;
  std::size_t next_bytes_ = kFirst;
  std::size_t held_bytes_ = 0;   // used + spare
  std::size_t held_chunks_ = 0;
  std::size_t spare_bytes_ = 0;
  std::size_t external_bytes_ = 0;
  std::size_t peak_bytes_ = 0;
};

}  // namespace alloclab

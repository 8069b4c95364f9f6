// hot_list.cpp — hot objects back to their blocks (hot_list.hpp).
#include "vam/hot_list.hpp"

#include "vam/check.hpp"

namespace alloclab::vam {

// b's objects on the list v go back onto b's list; the others stay on the
// hot list, in their order. If the object a free has just pushed onto b is
// one of them, it was freed twice.
[[gnu::noinline]] void hot_reclaim_list(Heap *h, Block *b, std::uintptr_t v) noexcept {
  void *keep[kHotMax];
  unsigned kept = 0, back = 0;
  const FreeObj *pushed = b->free;
  for (unsigned n = hot_length(v); n > 0; --n) {
    void *q = hot_head(v);
    v = n > 1 ? *static_cast<const std::uintptr_t *>(q) ^ g_free_key : 0;
    if (block_holds(b, q)) {
      if (q == pushed) corruption("free(): double free detected", q);
      auto *f = static_cast<FreeObj *>(q);
      free_link_set(f, b->free);
      b->free = f;
      ++back;
    } else {
      keep[kept++] = q;
    }
  }
  if (back == 0) return;
  store_relaxed<std::uint16_t>(b->used, b->used - back);
  std::uintptr_t rest = 0;
  for (unsigned i = kept; i-- > 0;) {
    *static_cast<std::uintptr_t *>(keep[i]) = rest ^ g_free_key;
    rest = hot_word(keep[i], kept - i);
  }
  set_class_hot(h, b->cls, rest);
}

// Each hot object's block is full: small_free_slow regains it, which takes
// the block's hot objects back, and retires it if they were its last.
void hot_return_all(Heap *h) noexcept {
  for (unsigned c = 0; c < kNumClasses; ++c) {
    while (void *p = class_hot(h, c)) {
      Block *b = block_of(segment_of(p), p);
      VAM_CHECK(b->state == BlockState::full);
      small_free_slow(h, b);
    }
  }
}

}  // namespace alloclab::vam

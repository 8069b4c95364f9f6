// hot_list.cpp — hot objects back to their blocks (hot_list.hpp).
#include "vam/hot_list.hpp"

#include "vam/check.hpp"
#include "vam/remote.hpp"

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
    // Before q's link is read: a drain that applies another thread's free
    // of q has cleared it.
    if (q == pushed) corruption("free(): double free detected", q);
    v = n > 1 ? hot_rest(v, HotOp::free) : 0;
    if (block_holds(b, q)) {
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
    *static_cast<std::uintptr_t *>(keep[i]) = hot_encode(rest);
    rest = hot_word(keep[i], kept - i);
  }
  set_class_hot(h, b->cls, rest);
}

// A rest that fails hot_rest's test. Another thread's free of the head,
// after its owner's free put it on the list, wrote its own word there (the
// remote mark, or a link XOR the mark: remote_keyed_like): a double free.
// Anything else is an overflow or a write after free.
void hot_link_broken(HotOp op, const void *head) noexcept {
  static constexpr const char *kDoubleFree[] = {"malloc(): double free detected (one free by another thread)",
                                                "free(): double free detected (one free by another thread)",
                                                "realloc(): double free detected (one free by another thread)"};
  static constexpr const char *kCall[] = {"malloc()", "free()", "realloc()"};
  const auto i = static_cast<unsigned>(op);
  if (remote_keyed_like(head)) corruption(kDoubleFree[i], head);
  corruption_near(kCall[i], head);
}

void *hot_take_broken(const void *head) noexcept { hot_link_broken(HotOp::malloc, head); }

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

// nested_heap.hpp — NestedHeap<Parent>: heaps that live inside other heaps
// (reaps §5: nested regions). Each heap knows its parent and its children;
// destroying or clearing a heap first destroys every descendant, deepest
// first, without recursion (a nest can be arbitrarily deep).
#pragma once

namespace alloclab {

template <class Parent>
class NestedHeap : public Parent {
 public:
  NestedHeap *parent_heap() const noexcept { return parent_; }

  void attach_to(NestedHeap *parent) noexcept {
    parent_ = parent;
    if (!parent) return;
    next_sibling_ = parent->first_child_;
    prev_sibling_ = nullptr;
    if (next_sibling_) next_sibling_->prev_sibling_ = this;
    parent->first_child_ = this;
  }

  void detach() noexcept {
    if (!parent_) return;
    if (prev_sibling_) prev_sibling_->next_sibling_ = next_sibling_;
    else parent_->first_child_ = next_sibling_;
    if (next_sibling_) next_sibling_->prev_sibling_ = prev_sibling_;
    parent_ = prev_sibling_ = next_sibling_ = nullptr;
  }

  bool has_children() const noexcept { return first_child_ != nullptr; }

  // Call destroy(child) on every descendant, leaves first. destroy must
  // detach the child it is given (and may free its memory).
  template <class Destroy>
  void destroy_descendants(Destroy &&destroy) noexcept {
    NestedHeap *c = first_child_;
    while (c) {
      while (c->first_child_) c = c->first_child_;  // deepest first
      NestedHeap *up = c->parent_;
      destroy(c);
      c = up == this ? first_child_ : up;  // O(n) in all: never restart from the top
    }
  }

 private:
  NestedHeap *parent_ = nullptr;
  NestedHeap *first_child_ = nullptr;
  NestedHeap *next_sibling_ = nullptr;
  NestedHeap *prev_sibling_ = nullptr;
};

}  // namespace alloclab

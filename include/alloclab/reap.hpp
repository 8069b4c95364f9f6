// alloclab/reap.hpp — C++ faces of reaps (see reap.h for the semantics).
//
//   alloclab::Reap               RAII owner of a reap; move-only.
//   alloclab::ReapResource       a std::pmr::memory_resource over a reap:
//                                deallocate really frees.
//   alloclab::ReapAllocator<T>   an allocator for STL containers.
//
// Lifetimes: a child reap dies with its parent. Destroy (or let go out of
// scope) child wrappers before their parent, and do not use a child wrapper
// after clear() on its parent.
#pragma once

#include <cstddef>
#include <limits>
#include <memory_resource>
#include <new>
#include <utility>

#include "alloclab/reap.h"

namespace alloclab {

class Reap {
 public:
  Reap() : r_(reap_create(nullptr)) {
    if (!r_) throw std::bad_alloc();
  }
  explicit Reap(Reap &parent) : r_(reap_create(parent.get())) {
    if (!r_) throw std::bad_alloc();
  }
  ~Reap() {
    if (r_) reap_destroy(r_);
  }
  Reap(Reap &&o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Reap &operator=(Reap &&o) noexcept {
    if (this != &o) {
      if (r_) reap_destroy(r_);
      r_ = std::exchange(o.r_, nullptr);
    }
    return *this;
  }
  Reap(const Reap &) = delete;
  Reap &operator=(const Reap &) = delete;

  void *malloc(std::size_t n) noexcept { return reap_malloc(r_, n); }
  void *calloc(std::size_t n, std::size_t size) noexcept { return reap_calloc(r_, n, size); }
  void *realloc(void *p, std::size_t n) noexcept { return reap_realloc(r_, p, n); }
  void *memalign(std::size_t a, std::size_t n) noexcept { return reap_memalign(r_, a, n); }
  void free(void *p) noexcept { reap_free(r_, p); }
  std::size_t usable_size(const void *p) const noexcept { return reap_usable_size(r_, p); }
  void clear() noexcept { reap_free_all(r_); }
  reap_stats_t stats() const noexcept {
    reap_stats_t s;
    reap_stats(r_, &s);
    return s;
  }

  // Construct a T in the reap. Its destructor runs only if you call
  // destroy(); clear() and ~Reap release memory without running destructors.
  template <class T, class... Args>
  T *make(Args &&...args) {
    void *p = alignof(T) > 16 ? memalign(alignof(T), sizeof(T)) : malloc(sizeof(T));
    if (!p) throw std::bad_alloc();
    return ::new (p) T(std::forward<Args>(args)...);
  }
  template <class T>
  void destroy(T *p) noexcept {
    if (!p) return;
    p->~T();
    free(p);
  }

  reap_t *get() const noexcept { return r_; }

 private:
  reap_t *r_;
};

class ReapResource : public std::pmr::memory_resource {
 public:
  ReapResource() : reap_() {}
  explicit ReapResource(ReapResource &parent) : reap_(parent.reap_) {}
  explicit ReapResource(Reap &parent) : reap_(parent) {}

  reap_t *get() const noexcept { return reap_.get(); }
  Reap &reap() noexcept { return reap_; }
  // Free everything allocated through this resource at once.
  void release() noexcept { reap_.clear(); }

 private:
  void *do_allocate(std::size_t bytes, std::size_t align) override {
    void *p = align <= 16 ? reap_.malloc(bytes) : reap_.memalign(align, bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void *p, std::size_t, std::size_t) override { reap_.free(p); }
  bool do_is_equal(const std::pmr::memory_resource &o) const noexcept override {
    return this == &o;
  }

  Reap reap_;
};

template <class T>
class ReapAllocator {
 public:
  using value_type = T;

  explicit ReapAllocator(Reap &r) noexcept : r_(r.get()) {}
  explicit ReapAllocator(reap_t *r) noexcept : r_(r) {}
  template <class U>
  ReapAllocator(const ReapAllocator<U> &o) noexcept : r_(o.get()) {}

  T *allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    void *p = alignof(T) > 16 ? reap_memalign(r_, alignof(T), n * sizeof(T))
                              : reap_malloc(r_, n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, std::size_t) noexcept { reap_free(r_, p); }

  reap_t *get() const noexcept { return r_; }
  template <class U>
  bool operator==(const ReapAllocator<U> &o) const noexcept { return r_ == o.get(); }

 private:
  reap_t *r_;
};

}  // namespace alloclab

// ptr_set.hpp — PtrSet: the region emulator's out-of-band record of a reap's
// objects (reaps §3.1). An open-addressing hash set of pointers in memory
// mapped through os.hpp, so the allocator under test sees only the program's
// own objects, and the last access to an object is the program's, not ours.
#pragma once

#include <cstddef>
#include <cstdint>

#include "layers/os.hpp"

namespace alloclab {

class PtrSet {
 public:
  PtrSet() = default;
  PtrSet(const PtrSet &) = delete;
  PtrSet &operator=(const PtrSet &) = delete;
  ~PtrSet() { os::unmap(slots_, cap_ * sizeof(void *)); }

  bool insert(void *p) noexcept {
    if ((used_ + 1) * 2 > cap_ && !grow()) return false;
    std::size_t i = hash(p) & (cap_ - 1);
    while (slots_[i] != nullptr && slots_[i] != tomb()) i = (i + 1) & (cap_ - 1);
    if (slots_[i] == nullptr) ++used_;
    slots_[i] = p;
    ++size_;
    return true;
  }

  bool erase(const void *p) noexcept {
    if (!cap_) return false;
    std::size_t i = hash(p) & (cap_ - 1);
    while (slots_[i] != nullptr) {
      if (slots_[i] == p) {
        slots_[i] = tomb();
        --size_;
        return true;
      }
      i = (i + 1) & (cap_ - 1);
    }
    return false;
  }

  bool contains(const void *p) const noexcept {
    if (!cap_) return false;
    std::size_t i = hash(p) & (cap_ - 1);
    while (slots_[i] != nullptr) {
      if (slots_[i] == p) return true;
      i = (i + 1) & (cap_ - 1);
    }
    return false;
  }

  template <class F>
  void for_each(F &&f) const {
    for (std::size_t i = 0; i < cap_; ++i)
      if (slots_[i] != nullptr && slots_[i] != tomb()) f(slots_[i]);
  }

  void clear() noexcept {
    for (std::size_t i = 0; i < cap_; ++i) slots_[i] = nullptr;
    size_ = used_ = 0;
  }

  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return cap_ * sizeof(void *); }

 private:
  static void *tomb() noexcept { return reinterpret_cast<void *>(std::uintptr_t{1}); }
  static std::size_t hash(const void *p) noexcept {
    auto x = reinterpret_cast<std::uintptr_t>(p) >> 4;
    x *= 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(x ^ (x >> 29));
  }
  bool grow() noexcept {
    std::size_t ncap = cap_ ? cap_ * 2 : 512;
    // Enough room once tombstones are dropped: rehash at the same size.
    if (size_ * 4 < cap_) ncap = cap_;
    void **n = static_cast<void **>(os::map(ncap * sizeof(void *)));
    if (!n) return false;
    for (std::size_t i = 0; i < cap_; ++i) {
      void *p = slots_[i];
      if (p == nullptr || p == tomb()) continue;
      std::size_t j = hash(p) & (ncap - 1);
      while (n[j] != nullptr) j = (j + 1) & (ncap - 1);
      n[j] = p;
    }
    os::unmap(slots_, cap_ * sizeof(void *));
    slots_ = n;
    cap_ = ncap;
    used_ = size_;
    return true;
  }

  void **slots_ = nullptr;
  std::size_t cap_ = 0;
  std::size_t size_ = 0;
  std::size_t used_ = 0;  // live + tombstones
};

}  // namespace alloclab

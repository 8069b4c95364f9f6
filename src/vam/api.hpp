// api.hpp — the allocator's entry points as hidden C++ functions. The C faces
// (vam_* in vam.cpp, malloc & co. in override.cpp) are one line each over these.
#pragma once

#include <cstddef>

namespace alloclab::vam {

void *malloc_impl(std::size_t n) noexcept;
void free_impl(void *p) noexcept;
void *calloc_impl(std::size_t n, std::size_t size) noexcept;
void *realloc_impl(void *p, std::size_t n) noexcept;
void *reallocarray_impl(void *p, std::size_t n, std::size_t size) noexcept;
void *memalign_impl(std::size_t alignment, std::size_t n) noexcept;       // glibc memalign rules
void *aligned_alloc_impl(std::size_t alignment, std::size_t n) noexcept;  // C17 / glibc rules
int posix_memalign_impl(void **out, std::size_t alignment, std::size_t n) noexcept;
void *valloc_impl(std::size_t n) noexcept;
void *pvalloc_impl(std::size_t n) noexcept;
std::size_t usable_size_impl(const void *p) noexcept;
// For operator new: allocate or nullptr, without setting errno semantics aside.
void *aligned_or_null(std::size_t alignment, std::size_t n) noexcept;

}  // namespace alloclab::vam

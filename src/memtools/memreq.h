/* memreq.h — the client requests spoken between the heap shim
 * (liballoclab_memshim.so) and the alloclab-mem Valgrind tool.
 *
 * The shim sits in front of whatever allocator the program runs on and
 * tells the tool about each heap object after the allocator has made it
 * and before the allocator takes it back, so the tool never replaces the
 * allocator and works the same on glibc, jemalloc, vam, ...
 *
 *   ALM_ALLOC(p, n)          [p, p+n) is a new live object of n requested bytes
 *   ALM_FREE(p)              the object at p is being freed
 *   ALM_REALLOC(old, p, n)   old (may be 0) was resized into [p, p+n)
 */
#ifndef ALLOCLAB_MEMREQ_H
#define ALLOCLAB_MEMREQ_H

/* 'A','M' in the two top bytes, as valgrind.h's VG_USERREQ_TOOL_BASE. */
#define ALM_REQ_BASE (((unsigned int)'A' & 0xff) << 24 | ((unsigned int)'M' & 0xff) << 16)

enum {
  ALM_ALLOC = ALM_REQ_BASE + 1,
  ALM_FREE = ALM_REQ_BASE + 2,
  ALM_REALLOC = ALM_REQ_BASE + 3,
};

#endif

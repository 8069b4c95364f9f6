/* alloclab-mem — a Valgrind tool that watches a program's heap over time.
 *
 * It instruments every load and store (and the memory the kernel reads or
 * writes for a system call) and keeps two views of the heap:
 *
 *  Objects  (reaps §6.1, for `alloclab drag`): each heap object, reported by
 *           the heap shim (memreq.h) or by a reap's mempool client requests,
 *           with its allocation, last-access and free times.  Time is the
 *           allocation clock: bytes requested so far.  An object's recorded
 *           allocation time is the clock just after its own bytes are counted.
 *           An object made before the program's `main` began and never used
 *           once it had (a library's start-up object, such as libstdc++'s
 *           emergency exception pool) is marked: it is not the program's.
 *
 *  Pages    (Vam §4.4 and §4.6, for `alloclab frag` and `alloclab pages`):
 *           the heap region is every page of the program break and of every
 *           anonymous private mapping the program makes (thread stacks,
 *           mapped with MAP_STACK, and the dynamic loader's own mappings
 *           excluded).  A heap page is in use from its
 *           first access until it is unmapped or discarded (madvise
 *           DONTNEED/FREE/REMOVE, or mapped over).  References to heap pages
 *           form the page trace, consecutive references to one page
 *           collapsed into one; discards are recorded in it as well.
 *
 * Options:
 *   --out=PREFIX       write PREFIX.<pid>.summary (key value lines), and
 *   --objects=yes|no   PREFIX.<pid>.objects: "alloc last free size freed startup" per
 *                      object; startup 1: made before main and not used after main
 *                      began (always 0 when no function `main` was seen: the summary's
 *                      main_seen says so)
 *   --trace=yes|no     PREFIX.<pid>.trace: the page trace, little-endian u64 words:
 *                      a page number, or (1<<63 | first page) followed by a
 *                      page count for a discard.
 * The tool never replaces the allocator: the program runs on whatever
 * allocator it was given.
 */
#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_oset.h"
#include "pub_tool_machine.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "valgrind.h"

#include "memreq.h"

/* ------------------------------------------------------------------ */
/* Options                                                             */

static const HChar *clo_out = NULL;
static Bool clo_objects = False;
static Bool clo_trace = False;

static Bool mem_process_cmd_line_option(const HChar *arg) {
  if VG_STR_CLO (arg, "--out", clo_out) {
  } else if VG_BOOL_CLO (arg, "--objects", clo_objects) {
  } else if VG_BOOL_CLO (arg, "--trace", clo_trace) {
  } else
    return False;
  return True;
}

static void mem_print_usage(void) {
  VG_(printf)("    --out=PREFIX          write PREFIX.summary [none]\n"
              "    --objects=yes|no      also PREFIX.objects, one line per heap object [no]\n"
              "    --trace=yes|no        also PREFIX.trace, the heap page reference trace [no]\n");
}

static void mem_print_debug_usage(void) { VG_(printf)("    (none)\n"); }

/* ------------------------------------------------------------------ */
/* Buffered output files                                               */

typedef struct {
  Int fd;
  Int used;
  HChar buf[1 << 16];
} OutFile;

static OutFile out_objects = {-1, 0, {0}};
static OutFile out_trace = {-1, 0, {0}};
/* A forked child shares our files; it must not write into them. */
static Bool silent = False;

/* PREFIX.<pid>SUFFIX: a program that execs (a shell script, a wrapper) keeps
   its pid, so the last image's files replace the first's; children traced
   with --trace-children=yes get files of their own. */
static HChar *out_name(const HChar *suffix) {
  HChar *name = VG_(malloc)("alm.name", VG_(strlen)(clo_out) + VG_(strlen)(suffix) + 24);
  VG_(sprintf)(name, "%s.%d%s", clo_out, VG_(getpid)(), suffix);
  return name;
}

static void out_open(OutFile *f, const HChar *suffix) {
  HChar *name = out_name(suffix);
  f->fd = VG_(fd_open)(name, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
  if (f->fd < 0) {
    VG_(umsg)("alloclab-mem: cannot open %s for writing\n", name);
    VG_(exit)(1);
  }
  VG_(free)(name);
  f->used = 0;
}

static void out_flush(OutFile *f) {
  Int done = 0;
  if (f->fd < 0 || silent) {
    f->used = 0;
    return;
  }
  while (done < f->used) {
    Int n = VG_(write)(f->fd, f->buf + done, f->used - done);
    if (n <= 0) break;
    done += n;
  }
  f->used = 0;
}

static void out_bytes(OutFile *f, const void *p, Int n) {
  if (f->fd < 0) return;
  if (f->used + n > (Int)sizeof f->buf) out_flush(f);
  VG_(memcpy)(f->buf + f->used, p, n);
  f->used += n;
}

static void out_close(OutFile *f) {
  if (f->fd < 0) return;
  out_flush(f);
  VG_(close)(f->fd);
  f->fd = -1;
}

/* ------------------------------------------------------------------ */
/* Per-page state: a two-level table over the 48-bit address space.    */

#define PAGE_BITS 12
#define LEAF_BITS 16
#define TOP_BITS (48 - PAGE_BITS - LEAF_BITS)
#define PG_HEAP 1   /* in the heap region */
#define PG_USED 2   /* touched and not discarded since */

typedef struct {
  UChar state[1 << LEAF_BITS];
  UInt objects[1 << LEAF_BITS]; /* live objects overlapping the page */
} Leaf;

static Leaf *page_top[1 << TOP_BITS];

static inline Leaf *leaf_get(ULong pg, Bool create) {
  ULong t = pg >> LEAF_BITS;
  if (UNLIKELY(t >= (1ULL << TOP_BITS))) return NULL;
  Leaf *l = page_top[t];
  if (UNLIKELY(!l) && create) {
    l = VG_(calloc)("alm.leaf", 1, sizeof(Leaf));
    page_top[t] = l;
  }
  return l;
}

#define LEAF_IX(pg) ((pg) & ((1ULL << LEAF_BITS) - 1))

static ULong pages_in_use = 0, max_pages_in_use = 0;
static ULong heap_refs = 0, trace_discards = 0;
static ULong last_page = ~0ULL;

static void trace_discard(ULong first, ULong count) {
  ULong w[2];
  last_page = ~0ULL;
  if (!clo_trace || count == 0) return;
  w[0] = (1ULL << 63) | first;
  w[1] = count;
  out_bytes(&out_trace, w, sizeof w);
  trace_discards++;
}

static inline void page_ref(ULong pg) {
  Leaf *l = leaf_get(pg, False);
  UChar *s;
  if (!l) return;
  s = &l->state[LEAF_IX(pg)];
  if (!(*s & PG_HEAP)) return;
  if (!(*s & PG_USED)) {
    *s |= PG_USED;
    if (++pages_in_use > max_pages_in_use) max_pages_in_use = pages_in_use;
  }
  if (pg != last_page) {
    last_page = pg;
    heap_refs++;
    if (clo_trace) out_bytes(&out_trace, &pg, sizeof pg);
  }
}

/* Pages [first, first+count): set or clear PG_HEAP; either way whatever
   was in use there is gone (a new mapping starts out untouched). */
static void pages_set_region(ULong first, ULong count, Bool heap) {
  ULong pg;
  Bool dropped = False;
  for (pg = first; pg < first + count; pg++) {
    Leaf *l = leaf_get(pg, heap);
    UChar *s;
    if (!l) continue;
    s = &l->state[LEAF_IX(pg)];
    if (*s & PG_USED) pages_in_use--;
    if (*s) dropped = True; /* was heap: a placeholder for the simulator */
    *s = heap ? PG_HEAP : 0;
  }
  if (dropped) trace_discard(first, count);
}

static void pages_discard(ULong first, ULong count) {
  ULong pg;
  for (pg = first; pg < first + count; pg++) {
    Leaf *l = leaf_get(pg, False);
    if (l && (l->state[LEAF_IX(pg)] & PG_USED)) {
      l->state[LEAF_IX(pg)] &= ~PG_USED;
      pages_in_use--;
    }
  }
  trace_discard(first, count);
}

static inline ULong pg_down(Addr a) { return a >> PAGE_BITS; }
static inline ULong pg_up(Addr a) { return (a + (1UL << PAGE_BITS) - 1) >> PAGE_BITS; }

/* ------------------------------------------------------------------ */
/* Heap objects                                                        */

typedef struct Obj {
  Addr start; /* the key */
  SizeT size;
  ULong t_alloc, t_last;
  Addr pool; /* 0 for malloc objects */
  struct Obj *pprev, *pnext; /* the pool's objects */
  Bool startup; /* made before main began, and not used since */
} Obj;

typedef struct {
  Addr pool; /* the key */
  Obj *head;
} Pool;

static OSet *objects;       /* Obj, ordered by start, looked up by range */
static OSet *pools;         /* Pool, by pool address */
static Obj *last_obj = NULL; /* the last object hit: most accesses repeat it */
static ULong alloc_clock = 0;      /* bytes allocated so far */
static ULong live_bytes = 0, max_live_bytes = 0, live_objects = 0, n_objects = 0;
static ULong unknown_frees = 0, overlaps = 0, pool_objects = 0;
static Bool in_main = False;       /* the program's main has begun */
static ULong main_clock = 0;       /* the allocation clock when it did */

/* The program's main begins: objects made from now on, and objects used from now on, are the
   program's own. */
static void on_main(void) {
  if (in_main) return;
  in_main = True;
  main_clock = alloc_clock;
}

static inline SizeT obj_span(const Obj *o) { return o->size ? o->size : 1; }

static Word cmp_addr_in_obj(const void *key, const void *elem) {
  Addr a = *(const Addr *)key;
  const Obj *o = elem;
  if (a < o->start) return -1;
  if (a - o->start >= obj_span(o)) return 1;
  return 0;
}

static void obj_pages(const Obj *o, Int delta) {
  ULong pg, last = pg_down(o->start + obj_span(o) - 1);
  for (pg = pg_down(o->start); pg <= last; pg++) {
    Leaf *l = leaf_get(pg, True);
    if (l) l->objects[LEAF_IX(pg)] += delta;
  }
}

static void obj_record(const Obj *o, Bool freed) {
  HChar line[128];
  Int n;
  if (!clo_objects) return;
  n = VG_(snprintf)(line, sizeof line, "%llu %llu %llu %lu %d %d\n", o->t_alloc, o->t_last, alloc_clock,
                    (unsigned long)o->size, freed ? 1 : 0, (o->startup && in_main) ? 1 : 0);
  out_bytes(&out_objects, line, n);
}

static void obj_free(Addr p);

static void obj_new(Addr p, SizeT n, Addr pool) {
  Obj *o;
  Addr last = p + (n ? n : 1) - 1;
  if (p == 0) return;
  o = VG_(OSetGen_Lookup)(objects, &p);
  if (o && o->start == p) {
    /* The allocator handed out p again: a free we did not see. */
    unknown_frees++;
    obj_free(p);
  }
  if (VG_(OSetGen_Lookup)(objects, &p) || VG_(OSetGen_Lookup)(objects, &last)) {
    overlaps++; /* nested inside another object (e.g. a pool in a malloc block) */
    return;
  }
  alloc_clock += n;
  o = VG_(OSetGen_AllocNode)(objects, sizeof(Obj));
  o->start = p;
  o->size = n;
  o->t_alloc = o->t_last = alloc_clock;
  o->pool = pool;
  o->startup = !in_main;
  o->pprev = o->pnext = NULL;
  if (pool) {
    Pool *pl = VG_(OSetGen_Lookup)(pools, &pool);
    if (!pl) {
      pl = VG_(OSetGen_AllocNode)(pools, sizeof(Pool));
      pl->pool = pool;
      pl->head = NULL;
      VG_(OSetGen_Insert)(pools, pl);
    }
    o->pnext = pl->head;
    if (pl->head) pl->head->pprev = o;
    pl->head = o;
    pool_objects++;
  }
  VG_(OSetGen_Insert)(objects, o);
  obj_pages(o, 1);
  n_objects++;
  live_objects++;
  live_bytes += n;
  if (live_bytes > max_live_bytes) max_live_bytes = live_bytes;
}

static void obj_free(Addr p) {
  Obj *o = VG_(OSetGen_Lookup)(objects, &p);
  if (p == 0) return;
  if (!o || o->start != p) {
    unknown_frees++;
    return;
  }
  obj_record(o, True);
  if (o->pool) {
    Pool *pl = VG_(OSetGen_Lookup)(pools, &o->pool);
    if (o->pprev) o->pprev->pnext = o->pnext;
    else if (pl) pl->head = o->pnext;
    if (o->pnext) o->pnext->pprev = o->pprev;
  }
  obj_pages(o, -1);
  live_bytes -= o->size;
  live_objects--;
  if (last_obj == o) last_obj = NULL;
  VG_(OSetGen_Remove)(objects, &p);
  VG_(OSetGen_FreeNode)(objects, o);
}

static void pool_destroy(Addr pool) {
  Pool *pl = VG_(OSetGen_Lookup)(pools, &pool);
  if (!pl) return;
  while (pl->head) obj_free(pl->head->start);
  VG_(OSetGen_Remove)(pools, &pool);
  VG_(OSetGen_FreeNode)(pools, pl);
}

/* A mempool object resized (in place or moved): like realloc, the old object
   ends -- its contents were just used -- and a new one of the new size begins. */
static void obj_resize(Addr a, Addr b, SizeT n) {
  Obj *o = VG_(OSetGen_Lookup)(objects, &a);
  Addr pool;
  if (!o || o->start != a) return;
  pool = o->pool;
  o->t_last = alloc_clock;
  obj_free(a);
  obj_new(b, n, pool);
}

static inline void obj_ref(Addr a) {
  Obj *o = last_obj;
  Leaf *l;
  if (o && a - o->start < obj_span(o)) {
    o->t_last = alloc_clock;
    if (UNLIKELY(o->startup) && in_main) o->startup = False;
    return;
  }
  l = leaf_get(pg_down(a), False);
  if (!l || l->objects[LEAF_IX(pg_down(a))] == 0) return;
  o = VG_(OSetGen_Lookup)(objects, &a);
  if (o) {
    o->t_last = alloc_clock;
    if (UNLIKELY(o->startup) && in_main) o->startup = False;
    last_obj = o;
  }
}

/* ------------------------------------------------------------------ */
/* Accesses                                                            */

static VG_REGPARM(2) void on_access(Addr a, SizeT n) {
  Addr last = a + (n ? n : 1) - 1;
  ULong pg = pg_down(a), pg2 = pg_down(last);
  page_ref(pg);
  obj_ref(a);
  if (UNLIKELY(pg2 != pg)) page_ref(pg2);
  if (n > 1) obj_ref(last); /* an access may run into the next object */
}

/* A range the kernel reads or writes for a system call: every page, and
   every object overlapping it, is used. */
static void on_range(Addr a, SizeT n) {
  ULong pg, first, end;
  Bool objs = False;
  Obj *o;
  if (n == 0) return;
  first = pg_down(a);
  end = pg_down(a + n - 1);
  for (pg = first; pg <= end; pg++) {
    Leaf *l = leaf_get(pg, False);
    page_ref(pg);
    if (l && l->objects[LEAF_IX(pg)]) objs = True;
  }
  if (!objs) return;
  VG_(OSetGen_ResetIterAt)(objects, &a); /* the object holding a, or the next one */
  while ((o = VG_(OSetGen_Next)(objects)) && o->start < a + n) {
    o->t_last = alloc_clock;
    if (in_main) o->startup = False;
  }
}

static void mem_pre_mem_read(CorePart part, ThreadId tid, const HChar *s, Addr a, SizeT n) {
  (void)part; (void)tid; (void)s;
  on_range(a, n);
}

static void mem_post_mem_write(CorePart part, ThreadId tid, Addr a, SizeT n) {
  (void)part; (void)tid;
  on_range(a, n);
}

static void add_access(IRSB *sb, IRExpr *addr, Int size, IRExpr *guard) {
  IRDirty *di = unsafeIRDirty_0_N(2, "alm_access", VG_(fnptr_to_fnentry)(&on_access),
                                  mkIRExprVec_2(addr, mkIRExpr_HWord((HWord)size)));
  if (guard) di->guard = guard;
  addStmtToIRSB(sb, IRStmt_Dirty(di));
}

/* True when guest address a is the entry of the program's function `main` (looked up only
   until main has begun: afterwards nothing is left to mark). */
static Bool is_main_entry(Addr a) {
  const HChar *name;
  if (in_main) return False;
  return VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &name) && VG_(strcmp)(name, "main") == 0;
}

static IRSB *mem_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
                            const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
                            IRType gWordTy, IRType hWordTy) {
  IRSB *out;
  IRTypeEnv *tyenv = in->tyenv;
  Int i;
  (void)closure; (void)layout; (void)vge; (void)archinfo_host;
  if (gWordTy != hWordTy) VG_(tool_panic)("host/guest word size mismatch");
  out = deepCopyIRSBExceptStmts(in);
  for (i = 0; i < in->stmts_used; i++) {
    IRStmt *st = in->stmts[i];
    if (!st || st->tag == Ist_NoOp) continue;
    switch (st->tag) {
      case Ist_IMark:
        if (is_main_entry((Addr)st->Ist.IMark.addr))
          addStmtToIRSB(out, IRStmt_Dirty(unsafeIRDirty_0_N(0, "alm_main", VG_(fnptr_to_fnentry)(&on_main),
                                                            mkIRExprVec_0())));
        break;
      case Ist_WrTmp: {
        IRExpr *e = st->Ist.WrTmp.data;
        if (e->tag == Iex_Load) add_access(out, e->Iex.Load.addr, sizeofIRType(e->Iex.Load.ty), NULL);
        break;
      }
      case Ist_Store:
        add_access(out, st->Ist.Store.addr, sizeofIRType(typeOfIRExpr(tyenv, st->Ist.Store.data)),
                   NULL);
        break;
      case Ist_StoreG: {
        IRStoreG *sg = st->Ist.StoreG.details;
        add_access(out, sg->addr, sizeofIRType(typeOfIRExpr(tyenv, sg->data)), sg->guard);
        break;
      }
      case Ist_LoadG: {
        IRLoadG *lg = st->Ist.LoadG.details;
        IRType wide = Ity_INVALID, narrow = Ity_INVALID;
        typeOfIRLoadGOp(lg->cvt, &wide, &narrow);
        add_access(out, lg->addr, sizeofIRType(narrow), lg->guard);
        break;
      }
      case Ist_Dirty: {
        IRDirty *d = st->Ist.Dirty.details;
        if (d->mFx != Ifx_None && d->mAddr) add_access(out, d->mAddr, d->mSize, NULL);
        break;
      }
      case Ist_CAS: {
        IRCAS *cas = st->Ist.CAS.details;
        Int sz = sizeofIRType(typeOfIRExpr(tyenv, cas->dataLo));
        if (cas->dataHi) sz *= 2;
        add_access(out, cas->addr, sz, NULL);
        break;
      }
      case Ist_LLSC: {
        IRType ty = st->Ist.LLSC.storedata ? typeOfIRExpr(tyenv, st->Ist.LLSC.storedata)
                                           : typeOfIRTemp(tyenv, st->Ist.LLSC.result);
        add_access(out, st->Ist.LLSC.addr, sizeofIRType(ty), NULL);
        break;
      }
      default:
        break;
    }
    addStmtToIRSB(out, st);
  }
  return out;
}

/* ------------------------------------------------------------------ */
/* The heap region: brk and anonymous mappings                         */

#define ALM_MAP_STACK 0x20000
#define ALM_MADV_DONTNEED 4
#define ALM_MADV_FREE 8
#define ALM_MADV_REMOVE 9

static void mem_new_brk(Addr a, SizeT len, ThreadId tid) {
  (void)tid;
  /* The page holding the old break (if it is not page-aligned) is heap
     already, and may be in use: only pages wholly beyond it are new. */
  ULong first = pg_up(a), end = pg_up(a + len);
  if (end > first) pages_set_region(first, end - first, True);
}

static void mem_die_brk(Addr a, SizeT len) {
  /* The page holding the new break stays mapped. */
  ULong first = pg_up(a), end = pg_up(a + len);
  if (end > first) pages_set_region(first, end - first, False);
}

/* True when thread tid's system call was made by the dynamic loader's own
   code (its link maps, TLS blocks, a library's .bss): not heap. */
static Bool from_dynamic_loader(ThreadId tid) {
  DebugInfo *di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), VG_(get_IP)(tid));
  const HChar *so = di ? VG_(DebugInfo_get_soname)(di) : NULL;
  return so && VG_(strncmp)(so, "ld-linux", 8) == 0;
}

static void mem_pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nArgs) {
  (void)tid; (void)sysno; (void)args; (void)nArgs;
}

static void mem_post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nArgs, SysRes res) {
  (void)nArgs;
  if (sr_isError(res)) return;
  switch (sysno) {
    case __NR_mmap: {
      Addr a = sr_Res(res);
      ULong n = pg_up(a + args[1]) - pg_down(a);
      Bool anon = (args[3] & VKI_MAP_ANONYMOUS) && !(args[3] & ALM_MAP_STACK);
      if (anon && from_dynamic_loader(tid)) anon = False;
      if (anon && (args[3] & VKI_MAP_FIXED)) {
        /* A fixed anonymous mapping is heap only where the heap already was
           (an allocator re-mapping its own reservation); elsewhere it is
           the dynamic loader zero-filling a library's .bss. */
        Leaf *l = leaf_get(pg_down(a), False);
        anon = l && (l->state[LEAF_IX(pg_down(a))] & PG_HEAP);
      }
      pages_set_region(pg_down(a), n, anon);
      break;
    }
    case __NR_munmap:
      pages_set_region(pg_down(args[0]), pg_up(args[0] + args[1]) - pg_down(args[0]), False);
      break;
    case __NR_madvise:
      if (args[2] == ALM_MADV_DONTNEED || args[2] == ALM_MADV_FREE || args[2] == ALM_MADV_REMOVE)
        pages_discard(pg_down(args[0]), pg_up(args[0] + args[1]) - pg_down(args[0]));
      break;
    case __NR_mremap: {
      Addr olda = args[0], newa = sr_Res(res);
      ULong oldn = pg_up(olda + args[1]) - pg_down(olda);
      ULong newn = pg_up(newa + args[2]) - pg_down(newa);
      Leaf *l = leaf_get(pg_down(olda), False);
      Bool heap = l && (l->state[LEAF_IX(pg_down(olda))] & PG_HEAP);
      if (newa == olda) {
        if (newn < oldn) pages_set_region(pg_down(olda) + newn, oldn - newn, False);
        else if (newn > oldn && heap) pages_set_region(pg_down(olda) + oldn, newn - oldn, True);
      } else {
        /* Moved: pages keep their state at the new address. */
        ULong k, keep = oldn < newn ? oldn : newn;
        for (k = 0; k < keep; k++) {
          Leaf *src = leaf_get(pg_down(olda) + k, False);
          Leaf *dst = leaf_get(pg_down(newa) + k, True);
          UChar s = src ? src->state[LEAF_IX(pg_down(olda) + k)] : 0;
          if (dst) {
            if (dst->state[LEAF_IX(pg_down(newa) + k)] & PG_USED) pages_in_use--;
            dst->state[LEAF_IX(pg_down(newa) + k)] = s;
          }
          if (src) src->state[LEAF_IX(pg_down(olda) + k)] = 0;
        }
        trace_discard(pg_down(olda), oldn);
        if (oldn > keep) pages_set_region(pg_down(olda) + keep, oldn - keep, False);
        if (newn > keep && heap) pages_set_region(pg_down(newa) + keep, newn - keep, True);
      }
      break;
    }
    default:
      break;
  }
}

/* ------------------------------------------------------------------ */
/* Client requests                                                     */

static Bool mem_handle_client_request(ThreadId tid, UWord *arg, UWord *ret) {
  (void)tid;
  switch (arg[0]) {
    case ALM_ALLOC:
      obj_new(arg[1], arg[2], 0);
      break;
    case ALM_FREE:
      obj_free(arg[1]);
      break;
    case ALM_REALLOC:
      if (arg[1]) obj_free(arg[1]);
      obj_new(arg[2], arg[3], 0);
      break;
    case VG_USERREQ__CREATE_MEMPOOL:
    case VG_USERREQ__MEMPOOL_TRIM:
    case VG_USERREQ__MOVE_MEMPOOL:
      break;
    case VG_USERREQ__DESTROY_MEMPOOL:
      pool_destroy(arg[1]);
      break;
    case VG_USERREQ__MEMPOOL_ALLOC:
      obj_new(arg[2], arg[3], arg[1]);
      break;
    case VG_USERREQ__MEMPOOL_FREE:
      obj_free(arg[2]);
      break;
    case VG_USERREQ__MEMPOOL_CHANGE:
      obj_resize(arg[2], arg[3], arg[4]);
      break;
    case VG_USERREQ__MEMPOOL_EXISTS:
      *ret = VG_(OSetGen_Lookup)(pools, &arg[1]) != NULL;
      return True;
    default:
      /* Memcheck's own requests (MAKE_MEM_NOACCESS, ...) mean nothing here. */
      if (VG_IS_TOOL_USERREQ('M', 'C', arg[0])) {
        *ret = 0;
        return True;
      }
      return False;
  }
  *ret = 0;
  return True;
}

/* ------------------------------------------------------------------ */
/* Start and end                                                       */

static void mem_atfork_child(ThreadId tid) {
  (void)tid;
  silent = True;
}

static void mem_post_clo_init(void) {
  if (clo_out) {
    if (clo_objects) out_open(&out_objects, ".objects");
    if (clo_trace) out_open(&out_trace, ".trace");
  } else {
    clo_objects = clo_trace = False;
  }
}

static void mem_fini(Int exitcode) {
  Obj *o;
  (void)exitcode;
  if (silent) return;
  VG_(OSetGen_ResetIter)(objects);
  while ((o = VG_(OSetGen_Next)(objects))) obj_record(o, False);
  out_close(&out_objects);
  out_close(&out_trace);
  if (clo_out) {
    HChar *name = out_name(".summary");
    Int fd;
    HChar text[1024];
    Int n;
    fd = VG_(fd_open)(name, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0644);
    n = VG_(snprintf)(text, sizeof text,
                      "clock %llu\nobjects %llu\nlive_objects_at_exit %llu\n"
                      "max_live_bytes %llu\nmax_pages_in_use %llu\npages_in_use_at_exit %llu\n"
                      "heap_refs %llu\ntrace_discards %llu\nunknown_frees %llu\n"
                      "nested_objects_ignored %llu\npool_objects %llu\n"
                      "main_seen %d\nmain_clock %llu\n",
                      alloc_clock, n_objects, live_objects, max_live_bytes, max_pages_in_use,
                      pages_in_use, heap_refs, trace_discards, unknown_frees, overlaps,
                      pool_objects, in_main ? 1 : 0, main_clock);
    if (fd >= 0) {
      VG_(write)(fd, text, n);
      VG_(close)(fd);
    }
    VG_(free)(name);
  }
}

static void mem_pre_clo_init(void) {
  VG_(details_name)("alloclab-mem");
  VG_(details_version)("0.1");
  VG_(details_description)("heap objects and heap pages over time");
  VG_(details_copyright_author)("alloclab");
  VG_(details_bug_reports_to)("the alloclab project");
  VG_(details_avg_translation_sizeB)(275);

  /* Keep the guest registers exact at every memory access: otherwise VEX
     drops a load whose value is overwritten before use, and the page (or
     object) it touched would go unseen. */
  VG_(clo_vex_control).iropt_register_updates_default = VexRegUpdAllregsAtMemAccess;

  VG_(basic_tool_funcs)(mem_post_clo_init, mem_instrument, mem_fini);
  VG_(needs_command_line_options)(mem_process_cmd_line_option, mem_print_usage,
                                  mem_print_debug_usage);
  VG_(needs_client_requests)(mem_handle_client_request);
  VG_(needs_syscall_wrapper)(mem_pre_syscall, mem_post_syscall);

  VG_(track_new_mem_brk)(mem_new_brk);
  VG_(track_die_mem_brk)(mem_die_brk);
  VG_(track_pre_mem_read)(mem_pre_mem_read);
  VG_(track_post_mem_write)(mem_post_mem_write);
  VG_(atfork)(NULL, NULL, mem_atfork_child);

  objects = VG_(OSetGen_Create)(offsetof(Obj, start), cmp_addr_in_obj, VG_(malloc), "alm.objects",
                                VG_(free));
  pools = VG_(OSetGen_Create)(offsetof(Pool, pool), NULL, VG_(malloc), "alm.pools", VG_(free));
}

VG_DETERMINE_INTERFACE_VERSION(mem_pre_clo_init)

// slot_churn — the single-threaded pattern of the public allocator suite's
// alloc-test, in plain C: a table of slots, about half of them filled first;
// then each step picks a slot and frees its object if it holds one, else
// allocates one of a random size. A step's free and the next step's
// allocation are of unrelated sizes, so most frees land in blocks that
// allocation filled long ago.
//
// What it keeps of the original, because each of them moves the allocators'
// costs (docs/notes/2026-11-29-slot-churn-faithful.md):
// - sizes: a power-of-two range is picked first, each half as likely as the
//   one below it: half of the requests are 5..8 bytes, a quarter 9..16, and
//   so on up to max_bytes (the last two ranges equally likely);
// - slots: a skew that applies the 80/20 rule six levels deep (below), so a
//   few dozen slots take a quarter of the picks and three quarters of the
//   table are rarely touched;
// - the table: one 16-byte entry per slot (pointer and size), itself
//   allocated and cleared;
// - the access: an object is written whole when made and read whole (in
//   8-byte words, then the tail) before its free, and so is every object
//   left at the end;
// - the entry points: operator new[] and delete[] (called by their C++ ABI
//   names; a peer may route them apart from malloc and free), or malloc and
//   free if asked;
// - the random draws: 32 bits per decision (band, slot, and 64 bits for a
//   size), so the program's own work per step is near the original's.
//
//   slot_churn [slots] [steps] [max_bytes] [new|malloc]
//     slots      table size (default 262144, 1..16777216; the original's)
//     steps      picks after the table is filled (default 40000000,
//                1..10^10; the original makes 100000000)
//     max_bytes  largest request, a power of two (default 1024, 8..2^24)
//     new|malloc the entry points (default new: new[] and delete[])
//
// Prints "checksum X" on standard output (the sum of the words and bytes read
// back: the same on every allocator) and "ms N" on standard error, the time
// from the first fill to the last free. Bad arguments exit 2. A failed
// malloc exits 1; a failed new[] ends the program as C++ does (terminate).
#include <string.h>

#include "bench_util.h"

// operator new[](size_t) and operator delete[](void *), as the Itanium C++
// ABI names them (libstdc++ is linked; a preloaded allocator overrides both).
extern void *_Znam(size_t);
extern void _ZdaPv(void *);

// 32 random bits: the high half of the shared generator's word.
static inline uint32_t draw32(void) { return (uint32_t)(next_random() >> 32); }

struct entry {
  unsigned char *obj;
  size_t size;
};

// A request size from one random word: the lowest `classes` bits pick the
// range by their trailing zeros (none set: the top range), the bits above
// them the size inside it. Range k is [2^(k+2) + 1, 2^(k+3)], for k in
// 0..classes.
static size_t pick_size(uint64_t r, unsigned classes) {
  const uint64_t low = r & ((1ull << classes) - 1);
  const unsigned k = low ? (unsigned)__builtin_ctzll(low) : classes;
  const unsigned e = k + 2;
  return ((size_t)1 << e) + 1 + (size_t)((r >> classes) & (((uint64_t)1 << e) - 1));
}

// The slots in seven bands, hottest first. Band b takes the share
// C(6,b) 0.8^(6-b) 0.2^b of the picks and holds the share
// C(6,b) 0.2^(6-b) 0.8^b of the slots: split the slots into a fifth that
// gets four fifths of the picks and the rest, split each part the same way,
// six times over; b counts the splits that put a slot in the larger part.
// Band 0 is 0.0064% of the slots with 26% of the picks, band 6 26% of the
// slots with 0.0064% of them.
#define BANDS 7
struct bands {
  uint32_t below[BANDS];  // a 32-bit draw under below[b] (and not under below[b-1]) picks band b
  uint64_t start[BANDS], count[BANDS];
};

static void bands_init(struct bands *b, uint64_t n) {
  static const double choose6[BANDS] = {1, 6, 15, 20, 15, 6, 1};
  double picks = 0;
  uint64_t at = 0;
  for (int i = 0; i < BANDS; i++) {
    double pick_share = choose6[i], slot_share = choose6[i];
    for (int j = 0; j < 6 - i; j++) pick_share *= 0.8, slot_share *= 0.2;
    for (int j = 0; j < i; j++) pick_share *= 0.2, slot_share *= 0.8;
    picks += pick_share;
    b->below[i] = i == BANDS - 1 ? UINT32_MAX : (uint32_t)(picks * 4294967296.0);
    b->start[i] = at;
    b->count[i] = i == BANDS - 1 ? n - at : (uint64_t)((double)n * slot_share);
    at += b->count[i];
  }
  // A small table leaves the hottest bands empty: their picks go to the
  // next band that has slots (the last always has one).
  for (int i = BANDS - 2; i >= 0; i--)
    if (!b->count[i]) b->start[i] = b->start[i + 1], b->count[i] = b->count[i + 1];
}

// A slot from two draws: the band, then the slot inside it.
static uint64_t pick_slot(const struct bands *b, uint32_t band_draw, uint32_t slot_draw) {
  int i = 0;
  while (i < BANDS - 1 && band_draw >= b->below[i]) i++;
  return b->start[i] + slot_draw % b->count[i];
}

// Every byte of an object, as 8-byte words and then the tail, summed.
static uint64_t read_whole(const unsigned char *p, size_t size) {
  uint64_t sum = 0;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    sum += w;
  }
  for (; i < size; i++) sum += p[i];
  return sum;
}

static inline uint64_t size_draw(void) {
  const uint64_t hi = draw32();
  return hi << 32 | draw32();
}

// The fill, the steps and the final frees, through new[]/delete[] or
// malloc/free (use_new a constant at each call: the compiler makes two loops).
static inline __attribute__((always_inline)) int churn(unsigned long long n, unsigned long long steps,
                                                       unsigned classes, const struct bands *bands,
                                                       const int use_new, uint64_t *sum) {
#define ALLOC(size) (use_new ? _Znam(size) : malloc(size))
#define FREE(p) (use_new ? _ZdaPv(p) : free(p))
#define MAKE(e)                                           \
  do {                                                    \
    const size_t size_ = pick_size(size_draw(), classes); \
    if (!((e)->obj = ALLOC(size_))) return 0;             \
    memset((e)->obj, (int)(unsigned char)size_, size_);   \
    (e)->size = size_;                                    \
  } while (0)
  struct entry *slot = ALLOC(n * sizeof *slot);
  if (!slot) return 0;
  memset(slot, 0, n * sizeof *slot);
  // Fill: a random half of the table, in slot order, a draw per 32 slots.
  uint32_t bits = 0;
  for (unsigned long long i = 0; i < n; i++) {
    if (i % 32 == 0) bits = draw32();
    if ((bits >> (i % 32)) & 1) MAKE(&slot[i]);
  }
  for (unsigned long long k = 0; k < steps; k++) {
    const uint32_t band_draw = draw32();
    struct entry *e = &slot[pick_slot(bands, band_draw, draw32())];
    if (e->obj) {
      *sum += read_whole(e->obj, e->size);
      FREE(e->obj);
      e->obj = NULL;
    } else {
      MAKE(e);
    }
  }
  for (unsigned long long i = 0; i < n; i++)
    if (slot[i].obj) *sum += read_whole(slot[i].obj, slot[i].size), FREE(slot[i].obj);
  FREE(slot);
  return 1;
#undef MAKE
#undef FREE
#undef ALLOC
}

int main(int argc, char **argv) {
  unsigned long long n = 262144, steps = 40000000, max = 1024;
  int use_new = 1;
  if (argc > 5 || (argc > 1 && !parse(argv[1], 1, 1ull << 24, &n)) ||
      (argc > 2 && !parse(argv[2], 1, 10000000000ull, &steps)) ||
      (argc > 3 && (!parse(argv[3], 8, 1ull << 24, &max) || (max & (max - 1)))) ||
      (argc > 4 && !(use_new = !strcmp(argv[4], "new")) && strcmp(argv[4], "malloc"))) {
    fprintf(stderr, "usage: slot_churn [slots 1..16777216] [steps 1..10^10] "
                    "[max_bytes: a power of two 8..2^24] [new|malloc]\n");
    return 2;
  }
  const unsigned classes = (unsigned)__builtin_ctzll(max) - 3;
  struct bands bands;
  bands_init(&bands, n);
  uint64_t sum = 0;
  const struct timespec t0 = bench_now();
  const int ok = use_new ? churn(n, steps, classes, &bands, 1, &sum) : churn(n, steps, classes, &bands, 0, &sum);
  if (!ok) return perror("slot_churn: malloc"), 1;
  const struct timespec t1 = bench_now();
  bench_report(sum, bench_ms(t0, t1));
  return 0;
}

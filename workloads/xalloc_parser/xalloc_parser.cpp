// xalloc_parser — a chart parser over a stack-like hybrid allocator.
//
// Models 197.parser (SPEC CPU2000; reaps paper Tables 1-3, "littering" §2.2.3).
// 197.parser takes one large block at start-up and serves every request by
// bumping a pointer past the last block still in use; a free only marks the
// block, and memory is reused only when the block on top of the stack is freed
// (then the pointer falls back past every marked block below it). That is fast
// for stack-like lifetimes and wasteful otherwise.
//
// The program: a random context-free grammar in Chomsky normal form and its
// lexicon (kept for the whole run, at the bottom of the stack, as 197.parser
// keeps its dictionary; --live sizes the lexicon), and per generated sentence a CYK
// chart. Per sentence it allocates the chart, a scratch accumulator per cell
// (freed while the cell's entries above it live: a hole until the sentence
// ends), the entries, a pruning pass that frees unreachable entries out of
// order, and one parse tree that is printed and freed. At the end of the
// sentence everything is freed newest first.
//
//   --alloc custom  the xalloc stack (one 32 MiB block from malloc)
//   --alloc reap    one reap; xfree is reap_free
//   --alloc malloc  malloc/free directly ("use malloc/free directly",
//                   littering Table 4)
//   --alloc talloc|pmr  one talloc context (xfree is talloc_free) or one
//                   std::pmr::unsynchronized_pool_resource (objects are freed
//                   one at a time). No APR variant: a pool drops every free, and
//                   this program allocates many times its peak (38 MB in all
//                   against 1.2 MB at --scale 0.1, growing with the run).
#include "region.hpp"
#include "workload.hpp"

#include <new>
#include <string>

namespace {

// The stack-like allocator of 197.parser, with a header per block so that a
// free can find the block below.
class XStack {
 public:
  explicit XStack(std::size_t capacity)
      : base_(static_cast<char *>(wl::check(std::malloc(capacity), "xalloc arena"))),
        top_(base_),
        end_(base_ + capacity) {}
  ~XStack() { std::free(base_); }
  XStack(const XStack &) = delete;
  XStack &operator=(const XStack &) = delete;

  void *alloc(std::size_t n) {
    const std::size_t size = sizeof(Header) + ((n + 15) & ~std::size_t{15});
    if (static_cast<std::size_t>(end_ - top_) < size) {
      std::fprintf(stderr, "xalloc: out of space (%zu bytes in use)\n", used());
      std::exit(1);
    }
    auto *h = reinterpret_cast<Header *>(top_);
    h->size = size;
    h->below = last_;
    h->free = false;
    last_ = h;
    top_ += size;
    if (used() > peak_) peak_ = used();
    return h + 1;
  }

  void free(void *p) {
    Header *h = static_cast<Header *>(p) - 1;
    h->free = true;
    // Only the top block gives memory back, and with it every marked one below.
    while (last_ && last_->free) {
      top_ = reinterpret_cast<char *>(last_);
      last_ = last_->below;
    }
  }

  std::size_t used() const { return static_cast<std::size_t>(top_ - base_); }
  std::size_t peak() const { return peak_; }

 private:
  struct alignas(16) Header {
    std::size_t size;
    Header *below;  // the block allocated just before this one
    bool free;
  };
  char *base_, *top_, *end_;
  Header *last_ = nullptr;
  std::size_t peak_ = 0;
};

class Memory {
 public:
  explicit Memory(wl::Alloc mode) : mode_(mode) {
    if (mode_ == wl::Alloc::Custom) {
      stack_ = new XStack(32u << 20);
    } else if (mode_ != wl::Alloc::Malloc) {
      wl::area_setup(mode_, wl::PmrKind::Pool);  // xfree frees one object at a time
      area_ = wl::area_create(nullptr);
    }
  }
  ~Memory() {
    delete stack_;
    if (area_) wl::area_destroy(area_);
  }
  void *xalloc(std::size_t n) {
    ++allocs_;
    if (mode_ == wl::Alloc::Custom) return stack_->alloc(n);
    if (mode_ == wl::Alloc::Malloc) return wl::check(std::malloc(n), "xalloc");
    return wl::check(wl::area_alloc(area_, n), "xalloc");
  }
  void xfree(void *p) {
    if (mode_ == wl::Alloc::Custom) stack_->free(p);
    else if (mode_ == wl::Alloc::Malloc) std::free(p);
    else wl::area_free(area_, p);
  }
  template <class T>
  T *make_array(std::size_t n) {
    auto *p = static_cast<T *>(xalloc(n * sizeof(T)));
    for (std::size_t i = 0; i < n; ++i) new (p + i) T{};
    return p;
  }
  std::uint64_t allocs() const { return allocs_; }
  const XStack *stack() const { return stack_; }

 private:
  wl::Alloc mode_;
  XStack *stack_ = nullptr;
  wl::Area *area_ = nullptr;  // reap, talloc, pmr
  std::uint64_t allocs_ = 0;
};

// ---------------------------------------------------------------------------
constexpr int kSymbols = 24;  // nonterminals; 0 is the sentence symbol
// the lexicon's words: 60, times --live (197.parser keeps its whole dictionary live)
int g_lexicon = 60;  // set in main

struct Grammar {
  // for each (B, C): the A with A -> B C, as a count and a list
  std::uint8_t *heads_count;  // [kSymbols * kSymbols]
  std::uint8_t **heads;       // [kSymbols * kSymbols]
  std::uint8_t *word_count;   // [g_lexicon]
  std::uint8_t **word_tags;   // [g_lexicon]: preterminals of each word
};

Grammar make_grammar(Memory &m, wl::Rng &rng) {
  Grammar g{};
  g.heads_count = m.make_array<std::uint8_t>(kSymbols * kSymbols);
  g.heads = m.make_array<std::uint8_t *>(kSymbols * kSymbols);
  for (int bc = 0; bc < kSymbols * kSymbols; ++bc) {
    const int n = rng.chance(22) ? rng.range(1, 2) : 0;
    g.heads_count[bc] = static_cast<std::uint8_t>(n);
    g.heads[bc] = m.make_array<std::uint8_t>(n ? n : 1);
    for (int i = 0; i < n; ++i) g.heads[bc][i] = static_cast<std::uint8_t>(rng.below(kSymbols));
  }
  g.word_count = m.make_array<std::uint8_t>(g_lexicon);
  g.word_tags = m.make_array<std::uint8_t *>(g_lexicon);
  for (int w = 0; w < g_lexicon; ++w) {
    const int n = rng.range(1, 3);
    g.word_count[w] = static_cast<std::uint8_t>(n);
    g.word_tags[w] = m.make_array<std::uint8_t>(n);
    for (int i = 0; i < n; ++i) g.word_tags[w][i] = static_cast<std::uint8_t>(1 + rng.below(kSymbols - 1));
  }
  return g;
}

void free_grammar(Memory &m, Grammar &g) {
  for (int w = g_lexicon - 1; w >= 0; --w) m.xfree(g.word_tags[w]);
  m.xfree(g.word_tags);
  m.xfree(g.word_count);
  for (int bc = kSymbols * kSymbols - 1; bc >= 0; --bc) m.xfree(g.heads[bc]);
  m.xfree(g.heads);
  m.xfree(g.heads_count);
}

struct Entry {
  std::uint64_t count;  // number of derivations, mod 2^64
  Entry *left, *right;  // the first derivation found (NULL for a word)
  Entry *next;          // next entry of the same cell
  std::uint8_t symbol;
  bool reachable;
};

struct Tree {
  std::uint8_t symbol;
  int word;
  Tree *left, *right;
};

class Parser {
 public:
  Parser(Memory &m, const Grammar &g) : m_(m), g_(g) {}

  std::uint64_t entries() const { return entries_; }
  std::uint64_t pruned() const { return pruned_; }

  // Parses one sentence; appends its result line to out.
  void parse(const int *words, int n, std::string &out) {
    Entry **chart = m_.make_array<Entry *>(static_cast<std::size_t>(n) * n);
    auto cell = [&](int i, int j) -> Entry *& { return chart[i * n + j]; };  // span i..j
    for (int i = 0; i < n; ++i)
      for (int t = 0; t < g_.word_count[words[i]]; ++t) add(cell(i, i), g_.word_tags[words[i]][t], 1, nullptr, nullptr);

    for (int len = 2; len <= n; ++len) {
      for (int i = 0; i + len - 1 < n; ++i) {
        const int j = i + len - 1;
        // scratch for this cell: counts and first derivations per symbol
        auto *acc = m_.make_array<std::uint64_t>(kSymbols);
        auto *how = m_.make_array<Entry *>(2 * kSymbols);
        for (int k = i; k < j; ++k)
          for (Entry *b = cell(i, k); b; b = b->next)
            for (Entry *c = cell(k + 1, j); c; c = c->next) {
              const int bc = b->symbol * kSymbols + c->symbol;
              for (int h = 0; h < g_.heads_count[bc]; ++h) {
                const int a = g_.heads[bc][h];
                if (!how[2 * a]) {
                  how[2 * a] = b;
                  how[2 * a + 1] = c;
                }
                acc[a] += b->count * c->count;
              }
            }
        for (int a = kSymbols - 1; a >= 0; --a)
          if (how[2 * a]) add(cell(i, j), static_cast<std::uint8_t>(a), acc[a], how[2 * a], how[2 * a + 1]);
        m_.xfree(how);  // not on top when the cell got entries: a hole
        m_.xfree(acc);
      }
    }

    Entry *root = nullptr;
    for (Entry *e = cell(0, n - 1); e; e = e->next)
      if (e->symbol == 0) root = e;
    char line[64];
    std::snprintf(line, sizeof line, "%d %016" PRIx64 " ", n, root ? root->count : 0);
    out += line;
    if (root) {
      mark(root);
      prune(chart, n);
      word_index_ = 0;
      Tree *t = build(root, words);
      print(t, out);
      free_tree(t);
    } else {
      out += '-';
    }
    out += '\n';

    // the sentence is done: free newest first (the stack discipline)
    for (int len = n; len >= 1; --len)
      for (int i = n - len; i >= 0; --i) free_cell(cell(i, i + len - 1));
    m_.xfree(chart);
  }

 private:
  void add(Entry *&head, std::uint8_t symbol, std::uint64_t count, Entry *l, Entry *r) {
    Entry *e = m_.make_array<Entry>(1);
    *e = Entry{count, l, r, head, symbol, false};
    head = e;
    ++entries_;
  }
  static void mark(Entry *e) {
    while (e && !e->reachable) {
      e->reachable = true;
      mark(e->left);
      e = e->right;
    }
  }
  // Frees entries no derivation of the root uses, oldest cells first: these
  // frees are far from the top of the stack.
  void prune(Entry **chart, int n) {
    for (int i = 0; i < n * n; ++i) {
      Entry **link = &chart[i];
      while (Entry *e = *link) {
        if (e->reachable) {
          link = &e->next;
        } else {
          *link = e->next;
          m_.xfree(e);
          ++pruned_;
        }
      }
    }
  }
  void free_cell(Entry *e) {
    // entries sit newest first in the list, so this frees top-down
    while (e) {
      Entry *next = e->next;
      m_.xfree(e);
      e = next;
    }
  }
  Tree *build(const Entry *e, const int *words) {
    Tree *t = m_.make_array<Tree>(1);
    t->symbol = e->symbol;
    t->word = -1;
    if (e->left) {
      t->left = build(e->left, words);
      t->right = build(e->right, words);
    } else {
      t->word = words[word_index_++];  // leaves come left to right
    }
    return t;
  }
  void print(const Tree *t, std::string &out) {
    char buf[16];
    if (t->word >= 0) {
      std::snprintf(buf, sizeof buf, "%d:w%d", t->symbol, t->word);
      out += buf;
      return;
    }
    std::snprintf(buf, sizeof buf, "(%d ", t->symbol);
    out += buf;
    print(t->left, out);
    out += ' ';
    print(t->right, out);
    out += ')';
  }
  void free_tree(Tree *t) {  // children first: they were allocated after t
    if (!t) return;
    free_tree(t->right);
    free_tree(t->left);
    m_.xfree(t);
  }

  Memory &m_;
  const Grammar &g_;
  std::uint64_t entries_ = 0, pruned_ = 0;
  int word_index_ = 0;
};

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt =
      wl::parse_options(argc, argv, "chart parser over a stack-like allocator (197.parser's xalloc)",
                        wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Talloc) | wl::alloc_bit(wl::Alloc::Pmr), true);
  const long sentences = wl::scaled(opt, 1500, 5);
  g_lexicon = static_cast<int>(wl::sized(opt, 60, 2));

  Memory mem(opt.alloc);
  wl::Rng rng(197);
  Grammar g = make_grammar(mem, rng);
  wl::Checksum sum;
  std::uint64_t parsed = 0, entries = 0, pruned = 0;
  {
    Parser parser(mem, g);
    std::string out;
    int words[64];
    for (long s = 0; s < sentences; ++s) {
      const int n = rng.range(8, 36);
      for (int i = 0; i < n; ++i) words[i] = static_cast<int>(rng.below(g_lexicon));
      out.clear();
      parser.parse(words, n, out);
      sum.add_bytes(out.data(), out.size());
      parsed += out.find('-') == std::string::npos;
    }
    entries = parser.entries();
    pruned = parser.pruned();
  }
  free_grammar(mem, g);
  std::printf("sentences %ld\nparsed %" PRIu64 "\nentries %" PRIu64 "\npruned %" PRIu64 "\n", sentences, parsed,
              entries, pruned);
  std::fprintf(stderr, "allocations %" PRIu64 " (%s)\n", mem.allocs(), wl::alloc_name(opt.alloc));
  if (mem.stack()) std::fprintf(stderr, "xalloc_peak_bytes %zu\n", mem.stack()->peak());
  wl::print_checksum(sum.value());
  return 0;
}

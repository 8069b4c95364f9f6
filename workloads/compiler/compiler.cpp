// compiler — a compiler front end that allocates from regions and obstacks.
//
// Models the region-allocating compilers of the reaps paper (lcc, 176.gcc;
// Tables 1-3) and of the 2026 "littering" study (176.gcc, Clang). For every
// function of a generated source file it lexes (into a reused token array,
// identifiers interned once per function, as lcc's lexer and string table
// do), parses into an AST, resolves names through nested block scopes, folds
// constants, lowers to three-address code, removes common subexpressions,
// allocates registers and emits the code as text; the checksum covers the
// emitted text and the unit's globals (names, sizes, field offsets).
//
// Three lifetimes, as in gcc's obstacks and lcc's arenas (lcc's PERM and FUNC):
//   unit      the permanent arena: the unit's global symbols, their types and
//             struct fields, and the interned strings that name them — kept
//             until the whole unit is compiled;
//   function  names, AST, IR: all die together when the function is emitted;
//   scope     symbol tables of a block: die at the closing brace — the
//             obstack's "free everything allocated after p".
//
// The unit starts with the declarations of its headers (a preprocessed C
// file such as lcc's scilab.i is mostly headers): structs, whose layout is
// computed as they are declared, and extern function prototypes; every
// function defined adds its own global symbol. --live multiplies the
// headers' declarations (about 1,000 at 1, independent of --scale), and with
// them the objects kept live until the end.
//
//   --alloc custom  three obstacks (chunks from malloc, bump allocation): the
//                   unit obstack is never freed back, the function obstack is
//                   freed back to its base, the scope obstack back to the mark
//                   taken at each opening brace
//   --alloc reap    a unit reap holding the permanent objects, a reap per
//                   function (its child) and a nested child reap per block,
//                   destroyed at the closing brace
//   --alloc malloc  naive: each region a list of one-object chunks from malloc,
//                   freed by walking the list ("reduce chunk size to fit single
//                   objects", littering Table 4)
//   --alloc emulator  the reaps under libreap's region emulator (REAP_MODE=malloc)
//   --alloc talloc|apr|pmr  the same regions as talloc contexts, APR pools,
//                   std::pmr::monotonic_buffer_resource (it frees only in bulk)
//
// Built as `compiler_partial` (WL_PARTIAL=1) it stands for Clang, which puts
// only some of its objects in regions (2026 paper, RQ3): there only the AST
// goes through the variant's regions; identifier names, symbols, types and
// the lowered code are malloc'd one by one and freed by their owner when
// their lifetime ends (at the end of the unit, of the function, or of the
// scope), in every variant. Its `malloc` variant is the same program as the compiler's.
#include "region.hpp"
#include "workload.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

namespace {

// out += prefix, number, suffix (without temporaries)
void append(std::string &out, const char *prefix, long long v, const char *suffix) {
  char num[24];
  std::snprintf(num, sizeof num, "%lld", v);
  out += prefix;
  out += num;
  out += suffix;
}

// ---------------------------------------------------------------------------
// An obstack: an object stack in chunks, with free-to-mark (GNU obstack style).
class Obstack {
 public:
  Obstack() { new_chunk(kChunk); }
  ~Obstack() {
    while (chunk_) pop_chunk();
  }
  Obstack(const Obstack &) = delete;
  Obstack &operator=(const Obstack &) = delete;

  void *alloc(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (static_cast<std::size_t>(limit_ - next_) < n) new_chunk(n);
    void *p = next_;
    next_ += n;
    return p;
  }
  // The address the next object will get: a mark to free back to.
  void *mark() const { return next_; }
  // Frees every object allocated at or after p (p a mark or an object).
  void free_to(void *p) {
    char *q = static_cast<char *>(p);
    while (chunk_ && !(q >= chunk_->data && q <= chunk_->data + chunk_->size)) pop_chunk();
    if (!chunk_) wl::out_of_memory("obstack: mark not found");
    next_ = q;
  }
  std::size_t held() const { return held_; }

 private:
  static constexpr std::size_t kChunk = 8192 - 64;
  struct Chunk {
    Chunk *prev;
    std::size_t size;
    alignas(16) char data[];
  };
  void new_chunk(std::size_t need) {
    const std::size_t size = need > kChunk ? need : kChunk;
    auto *c = static_cast<Chunk *>(wl::check(std::malloc(sizeof(Chunk) + size), "obstack"));
    c->prev = chunk_;
    c->size = size;
    chunk_ = c;
    next_ = c->data;
    limit_ = c->data + size;
    held_ += size;
  }
  void pop_chunk() {
    Chunk *c = chunk_;
    chunk_ = c->prev;
    held_ -= c->size;
    std::free(c);
    if (chunk_) {
      next_ = chunk_->data + chunk_->size;  // callers reset next_ after
      limit_ = chunk_->data + chunk_->size;
    }
  }
  Chunk *chunk_ = nullptr;
  char *next_ = nullptr, *limit_ = nullptr;
  std::size_t held_ = 0;
};

#ifdef WL_PARTIAL
constexpr bool kPartial = true;
#else
constexpr bool kPartial = false;
#endif

// compiler_partial's objects outside regions: each from malloc, owned by the
// function (depth 0) or by the scope at a nesting depth, and freed when that
// owner ends — what destructors of owning containers do in a C++ compiler.
class OwnedObjects {
 public:
  std::uint64_t count = 0;
  ~OwnedObjects() { release_all(); }
  void release_all() {
    for (std::size_t d = 0; d < owners_.size(); ++d) release(d);
  }
  void *alloc(std::size_t n, std::size_t depth) {
    if (depth >= owners_.size()) owners_.resize(depth + 1, nullptr);
    auto *o = static_cast<Owned *>(wl::check(std::malloc(sizeof(Owned) + n), "object"));
    o->next = owners_[depth];
    owners_[depth] = o;
    ++count;
    return o + 1;
  }
  void release(std::size_t depth) {  // frees what the owner at `depth` holds
    if (depth >= owners_.size()) return;
    for (Owned *o = owners_[depth]; o;) {
      Owned *next = o->next;
      std::free(o);
      o = next;
    }
    owners_[depth] = nullptr;
  }

 private:
  struct alignas(16) Owned {
    Owned *next;
  };
  std::vector<Owned *> owners_;
};

// The compiler's two lifetimes, over any of the allocation variants.
class Memory {
 public:
  explicit Memory(wl::Alloc mode) : custom_(mode == wl::Alloc::Custom) {
    if (!custom_) {
      wl::area_setup(mode, wl::PmrKind::Monotonic);  // regions only: freed in bulk
      unit_ = wl::area_create(nullptr);
    }
  }
  ~Memory() {
    perm_heap_.release_all();
    if (unit_) wl::area_destroy(unit_);
  }

  void begin_function() {
    if (custom_) function_base_ = function_ob_.mark();
    else function_ = wl::area_create(unit_);
  }
  void end_function() {
    heap_.release_all();
    if (custom_) function_ob_.free_to(function_base_);
    else wl::area_destroy(function_);  // its scope regions go with it
    function_ = nullptr;
    scopes_.clear();
  }
  void push_scope() {
    if (custom_) scopes_.push_back(scope_ob_.mark());
    else scopes_.push_back(wl::area_create(scopes_.empty() ? function_ : static_cast<wl::Area *>(scopes_.back())));
  }
  void pop_scope() {
    heap_.release(scopes_.size());
    void *s = scopes_.back();
    scopes_.pop_back();
    if (custom_) scope_ob_.free_to(s);
    else wl::area_destroy(static_cast<wl::Area *>(s));
  }

  // AST nodes: always in the function's region.
  template <class T>
  T *ast_new() {
    ++objects_;
    void *p = custom_ ? function_ob_.alloc(sizeof(T)) : wl::area_alloc(function_, sizeof(T));
    return new (wl::check(p, "function region")) T{};
  }
  // Everything else that lives as long as the function: tokens, code.
  template <class T>
  T *function_new() {
    if (kPartial) return new (heap_.alloc(sizeof(T), 0)) T{};
    return ast_new<T>();
  }
  char *function_chars(std::size_t n) {
    if (kPartial) return static_cast<char *>(heap_.alloc(n, 0));
    ++objects_;
    void *p = custom_ ? function_ob_.alloc(n) : wl::area_alloc(function_, n);
    return static_cast<char *>(wl::check(p, "function region"));
  }
  template <class T>
  T *scope_new() {
    if (kPartial) return new (heap_.alloc(sizeof(T), scopes_.size())) T{};
    ++objects_;
    void *p = custom_ ? scope_ob_.alloc(sizeof(T)) : wl::area_alloc(static_cast<wl::Area *>(scopes_.back()), sizeof(T));
    return new (wl::check(p, "scope region")) T{};
  }

  // The permanent arena: kept until the unit ends.
  template <class T>
  T *perm_new() {
    return new (perm_chars(sizeof(T))) T{};
  }
  char *perm_chars(std::size_t n) {
    if (kPartial) return static_cast<char *>(perm_heap_.alloc(n, 0));
    ++objects_;
    void *p = custom_ ? perm_ob_.alloc(n) : wl::area_alloc(unit_, n);
    return static_cast<char *>(wl::check(p, "unit region"));
  }

  std::uint64_t objects() const { return objects_; }
  std::uint64_t heap_objects() const { return heap_.count + perm_heap_.count; }

 private:
  bool custom_;
  Obstack perm_ob_, function_ob_, scope_ob_;
  void *function_base_ = nullptr;
  wl::Area *unit_ = nullptr, *function_ = nullptr;
  std::vector<void *> scopes_;  // obstack marks or regions, innermost last
  std::uint64_t objects_ = 0;
  OwnedObjects heap_;       // compiler_partial only: the function's and the scopes' objects
  OwnedObjects perm_heap_;  // ... and the unit's
};

// ---------------------------------------------------------------------------
// Source generation: a C-like toy language, deterministic from the seed.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  void function(std::string &out, int index) {
    out.clear();
    scopes_.assign(1, {});
    append(out, "fn f", index, "(a, b) {\n");
    scopes_.back() = {"a", "b"};
    statements(out, 1, rng_.range(10, 18));
    out += "  return " + expr(3) + ";\n}\n";
  }

 private:
  void statements(std::string &out, int depth, int n) {
    for (int i = 0; i < n; ++i) {
      const std::string pad(2 * depth, ' ');
      const unsigned roll = rng_.below(100);
      if (roll < 40 || depth > 4) {
        std::string name;
        append(name, "v", counter_++ % 97, "");
        out += pad + "let " + name + " = " + expr(3) + ";\n";
        scopes_.back().push_back(std::move(name));
      } else if (roll < 70) {
        out += pad + visible() + " = " + expr(3) + ";\n";
      } else if (roll < 85) {
        out += pad + "{\n";
        scopes_.emplace_back();
        statements(out, depth + 1, rng_.range(2, 6));
        scopes_.pop_back();
        out += pad + "}\n";
      } else {
        out += pad + "if (" + expr(2) + " < " + expr(2) + ") {\n";
        scopes_.emplace_back();
        statements(out, depth + 1, rng_.range(1, 5));
        scopes_.pop_back();
        out += pad + "}\n";
      }
    }
  }
  const std::string &visible() {
    std::size_t total = 0;
    for (auto &s : scopes_) total += s.size();
    std::size_t k = rng_.below(static_cast<std::uint32_t>(total));
    for (auto &s : scopes_) {
      if (k < s.size()) return s[k];
      k -= s.size();
    }
    return scopes_.front().front();
  }
  std::string expr(int depth) {
    std::string out;
    expr_into(out, depth);
    return out;
  }
  void expr_into(std::string &out, int depth) {
    const unsigned roll = rng_.below(100);
    if (depth == 0 || roll < 30) {
      // constants are common so that folding has work to do
      if (rng_.chance(55)) out += std::to_string(rng_.below(100));
      else out += visible();
      return;
    }
    static const char ops[] = {'+', '-', '*', '+', '/', '%', '*', '-'};
    const char op = ops[rng_.below(8)];
    if (roll < 40) {
      out += '-';
      expr_into(out, depth - 1);
      return;
    }
    out += '(';
    expr_into(out, depth - 1);
    out += ' ';
    out += op;
    out += ' ';
    expr_into(out, depth - 1);
    out += ')';
  }

  wl::Rng rng_;
  std::vector<std::vector<std::string>> scopes_;
  unsigned counter_ = 0;
};

// ---------------------------------------------------------------------------
// Lexer.
enum class Tok : std::uint8_t { End, Ident, Number, Fn, Let, If, Return, Struct, Extern, Punct };

struct Token {
  Tok kind;
  char punct;
  std::int64_t value;
  const char *text;  // identifiers: the function's one copy of the name
  std::uint32_t len;
  Token *next;
};

// Identifier names, interned: the first occurrence of a name is copied,
// later ones share that copy. A function's table copies into the function's
// region and forgets its names when the next function begins; the unit's
// table (lcc's string table) copies into the permanent arena and keeps every
// name to the end, so that two equal names there are one pointer. Open
// addressing; the table is reused.
class Names {
 public:
  void begin_function() {
    ++generation_;
    used_ = 0;
  }
  const char *intern(Memory &m, std::string_view word, bool permanent = false) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      Slot &s = slots_[i];
      if (s.generation != generation_) {
        char *copy = permanent ? m.perm_chars(word.size() + 1) : m.function_chars(word.size() + 1);
        std::memcpy(copy, word.data(), word.size());
        copy[word.size()] = '\0';
        s = Slot{h, copy, static_cast<std::uint32_t>(word.size()), generation_};
        ++used_;
        return copy;
      }
      if (s.hash == h && s.len == word.size() && std::memcmp(s.text, word.data(), word.size()) == 0) return s.text;
    }
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    const char *text = nullptr;
    std::uint32_t len = 0;
    std::uint64_t generation = 0;
  };
  void grow() {  // rehash this function's names into a table twice the size
    std::vector<Slot> old(slots_.empty() ? 64 : 2 * slots_.size());
    old.swap(slots_);
    const std::size_t mask = slots_.size() - 1;
    for (const Slot &s : old) {
      if (s.generation != generation_) continue;
      std::size_t i = s.hash & mask;
      while (slots_[i].generation == generation_) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  std::uint64_t generation_ = 1;
};

// Tokens go into one array reused from function to function (lcc's lexer
// hands the parser one token at a time and allocates none); the array's
// entries are chained so the parser can walk them. PERMANENT: NAMES is the
// unit's string table (a header's declarations), else a function's.
Token *lex(Memory &m, Names &names, bool permanent, std::vector<Token> &toks, const std::string &src,
           std::uint64_t &count) {
  toks.clear();
  if (!permanent) names.begin_function();
  const char *p = src.c_str();
  for (;;) {
    while (*p == ' ' || *p == '\n' || *p == '\t') ++p;
    toks.emplace_back();
    Token *t = &toks.back();
    ++count;
    if (!*p) {
      t->kind = Tok::End;
      for (std::size_t i = 0; i + 1 < toks.size(); ++i) toks[i].next = &toks[i + 1];
      return toks.data();
    }
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_') {
      const char *s = p;
      while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_') ++p;
      const std::string_view word(s, static_cast<std::size_t>(p - s));
      if (word == "fn") t->kind = Tok::Fn;
      else if (word == "let") t->kind = Tok::Let;
      else if (word == "if") t->kind = Tok::If;
      else if (word == "return") t->kind = Tok::Return;
      else if (word == "struct") t->kind = Tok::Struct;
      else if (word == "extern") t->kind = Tok::Extern;
      else {
        t->kind = Tok::Ident;
        t->text = names.intern(m, word, permanent);
        t->len = static_cast<std::uint32_t>(word.size());
      }
    } else if (*p >= '0' && *p <= '9') {
      t->kind = Tok::Number;
      while (*p >= '0' && *p <= '9') t->value = t->value * 10 + (*p++ - '0');
    } else {
      t->kind = Tok::Punct;
      t->punct = *p++;
    }
  }
}

// ---------------------------------------------------------------------------
// The unit's headers and its global symbol table, all in the permanent arena.

// Generates the headers' text: per declaration either a struct of 2-7 scalar
// fields (`struct s12 { m40: 4; m7: 8; }`, a field's type given by its size)
// or an extern function prototype (`extern g13(8, 4);`, its parameters'
// sizes). Field names come from a pool, as a header's member names repeat.
class HeaderGenerator {
 public:
  explicit HeaderGenerator(std::uint64_t seed) : rng_(seed) {}

  void header(std::string &out, long first, long n) {
    static const char *const sizes[] = {"1", "2", "4", "8"};
    out.clear();
    for (long k = first; k < first + n; ++k) {
      if (rng_.chance(55)) {
        append(out, "struct s", k, " {");
        for (int f = rng_.range(2, 7); f > 0; --f) {
          append(out, " m", rng_.below(211), ": ");
          out += sizes[rng_.below(4)];
          out += ';';
        }
        out += " }\n";
      } else {
        append(out, "extern g", k, "(");
        for (int p = rng_.range(0, 4); p > 0; --p) {
          out += sizes[rng_.below(4)];
          if (p > 1) out += ", ";
        }
        out += ");\n";
      }
    }
  }

 private:
  wl::Rng rng_;
};

struct Type;
struct Field {
  const char *name;
  const Type *type;
  std::uint32_t offset;
  Field *next;
};
struct Type {
  enum Kind : std::uint8_t { Scalar, Struct, Function } kind;
  std::uint32_t size, align;
  Field *fields;        // Struct
  const Type **params;  // Function: its parameters' types (lcc's prototype array)
  std::uint32_t nparams;
};
struct Global {
  const char *name;  // interned in the unit's string table: equal names are one pointer
  const Type *type;
  bool defined;      // a function defined in the unit, not only declared
  Global *chain;     // the next in its hash bucket
  Global *next;      // declaration order
};

// The global scope: every struct tag, extern and defined function of the
// unit, with their types, kept until the unit ends (lcc's PERM arena; its
// function types are not shared either). Struct layouts are computed as the
// declaration is parsed, as lcc's front end does.
class Unit {
 public:
  explicit Unit(Memory &m) : m_(m), buckets_(1024, nullptr) {
    for (unsigned k = 0; k < 4; ++k) {
      Type *t = m_.perm_new<Type>();
      t->kind = Type::Scalar;
      t->size = t->align = 1u << k;
      scalars_[k] = t;
    }
  }

  // Parses one header's declarations (tokens lexed with the unit's string table).
  void header(Token *t) {
    t_ = t;
    while (t_->kind != Tok::End) {
      if (t_->kind == Tok::Struct) structure();
      else if (t_->kind == Tok::Extern) prototype();
      else fail();
    }
  }
  // A function defined in the unit: NAME interned in the unit's string table.
  void define_function(const char *name, std::uint32_t nparams) {
    Type *fn = function_type(nparams);
    for (std::uint32_t i = 0; i < nparams; ++i) fn->params[i] = scalars_[3];
    declare(name, fn)->defined = true;
  }

  // Every global in declaration order: its name, its type's size and shape.
  void fold_into(wl::Checksum &sum) const {
    for (const Global *g = first_; g; g = g->next) {
      sum.add_bytes(g->name, std::strlen(g->name) + 1);
      sum.add(g->type->size);
      for (const Field *f = g->type->fields; f; f = f->next) sum.add(f->offset);
      for (std::uint32_t i = 0; i < g->type->nparams; ++i) sum.add(g->type->params[i]->size);
    }
  }
  std::uint64_t globals() const { return count_; }
  std::uint64_t struct_bytes() const { return struct_bytes_; }

 private:
  [[noreturn]] static void fail() {
    std::fprintf(stderr, "compiler: syntax error in a declaration\n");
    std::exit(1);
  }
  void advance() { t_ = t_->next; }
  bool is_punct(char c) const { return t_->kind == Tok::Punct && t_->punct == c; }
  void punct(char c) {
    if (!is_punct(c)) fail();
    advance();
  }
  const char *ident() {
    if (t_->kind != Tok::Ident) fail();
    const char *s = t_->text;
    advance();
    return s;
  }
  const Type *scalar() {  // a type written as its size: 1, 2, 4 or 8
    if (t_->kind != Tok::Number) fail();
    const std::int64_t v = t_->value;
    advance();
    for (const Type *s : scalars_)
      if (static_cast<std::int64_t>(s->size) == v) return s;
    fail();
  }

  // struct NAME { FIELD: SIZE; ... }: the fields laid out at their alignment
  void structure() {
    advance();
    const char *name = ident();
    Type *st = m_.perm_new<Type>();
    st->kind = Type::Struct;
    st->align = 1;
    Field **tail = &st->fields;
    std::uint32_t end = 0;
    punct('{');
    while (!is_punct('}')) {
      Field *f = m_.perm_new<Field>();
      f->name = ident();
      punct(':');
      f->type = scalar();
      punct(';');
      f->offset = (end + f->type->align - 1) & ~(f->type->align - 1);
      end = f->offset + f->type->size;
      if (f->type->align > st->align) st->align = f->type->align;
      *tail = f;
      tail = &f->next;
    }
    punct('}');
    st->size = (end + st->align - 1) & ~(st->align - 1);
    struct_bytes_ += st->size;
    declare(name, st);
  }
  // extern NAME(SIZE, ...);
  void prototype() {
    advance();
    const char *name = ident();
    punct('(');
    params_.clear();
    while (!is_punct(')')) {
      params_.push_back(scalar());
      if (!is_punct(')')) punct(',');
    }
    punct(')');
    punct(';');
    Type *fn = function_type(static_cast<std::uint32_t>(params_.size()));
    for (std::size_t i = 0; i < params_.size(); ++i) fn->params[i] = params_[i];
    declare(name, fn);
  }
  Type *function_type(std::uint32_t nparams) {
    Type *fn = m_.perm_new<Type>();
    fn->kind = Type::Function;
    fn->size = fn->align = 8;  // a pointer to it
    fn->nparams = nparams;
    if (nparams)
      fn->params = reinterpret_cast<const Type **>(m_.perm_chars(nparams * sizeof(const Type *)));
    return fn;
  }

  // Enters NAME in the global scope; a name declared twice is an error.
  Global *declare(const char *name, const Type *type) {
    const std::size_t b = bucket(name);
    for (const Global *g = buckets_[b]; g; g = g->chain)
      if (g->name == name) {
        std::fprintf(stderr, "compiler: %s declared twice\n", name);
        std::exit(1);
      }
    Global *g = m_.perm_new<Global>();
    g->name = name;
    g->type = type;
    g->chain = buckets_[b];
    buckets_[b] = g;
    *last_ = g;
    last_ = &g->next;
    if (++count_ > 2 * buckets_.size()) rehash();
    return g;
  }
  std::size_t bucket(const char *name) const {
    return wl::mix(reinterpret_cast<std::uintptr_t>(name)) & (buckets_.size() - 1);
  }
  void rehash() {
    std::vector<Global *> old(2 * buckets_.size(), nullptr);
    old.swap(buckets_);
    for (Global *g = first_; g; g = g->next) {
      const std::size_t b = bucket(g->name);
      g->chain = buckets_[b];
      buckets_[b] = g;
    }
  }

  Memory &m_;
  const Type *scalars_[4];
  Token *t_ = nullptr;
  std::vector<Global *> buckets_;
  Global *first_ = nullptr;
  Global **last_ = &first_;
  std::uint64_t count_ = 0, struct_bytes_ = 0;
  std::vector<const Type *> params_;
};

// ---------------------------------------------------------------------------
// AST, parser and name resolution.
enum class Ex : std::uint8_t { Const, Var, Neg, Bin };
struct Expr {
  Ex kind;
  char op;
  std::int64_t value;  // Const
  const char *name;    // Var, before resolution
  int slot;            // Var, after resolution
  Expr *lhs, *rhs;
};

enum class St : std::uint8_t { Let, Assign, Block, If, Return };
struct Stmt {
  St kind;
  const char *name;
  int slot;
  Expr *value, *cond_rhs;  // If: value < cond_rhs
  Stmt *body;              // Block, If
  Stmt *next;
};

struct Symbol {
  const char *name;
  int slot;
  Symbol *next;
};

class Parser {
 public:
  Parser(Memory &m, Token *t) : m_(m), t_(t) {}

  Stmt *function(std::uint64_t &nodes) {
    expect(Tok::Fn);
    expect(Tok::Ident);
    punct('(');
    while (!is_punct(')')) advance();  // parameters are a and b by construction
    punct(')');
    Stmt *body = block();
    nodes += nodes_;
    return body;
  }

 private:
  bool is_punct(char c) const { return t_->kind == Tok::Punct && t_->punct == c; }
  void advance() { t_ = t_->next; }
  void expect(Tok k) {
    if (t_->kind != k) fail();
    advance();
  }
  void punct(char c) {
    if (!is_punct(c)) fail();
    advance();
  }
  [[noreturn]] void fail() {
    std::fprintf(stderr, "compiler: syntax error\n");
    std::exit(1);
  }
  template <class T>
  T *node() {
    ++nodes_;
    return m_.ast_new<T>();
  }

  Stmt *block() {
    punct('{');
    Stmt head{};
    Stmt *tail = &head;
    while (!is_punct('}')) {
      tail->next = statement();
      tail = tail->next;
    }
    punct('}');
    return head.next;
  }
  Stmt *statement() {
    Stmt *s = node<Stmt>();
    if (t_->kind == Tok::Let || t_->kind == Tok::Ident) {
      s->kind = t_->kind == Tok::Let ? St::Let : St::Assign;
      if (t_->kind == Tok::Let) advance();
      s->name = t_->text;
      expect(Tok::Ident);
      punct('=');
      s->value = expr();
      punct(';');
    } else if (t_->kind == Tok::Return) {
      advance();
      s->kind = St::Return;
      s->value = expr();
      punct(';');
    } else if (t_->kind == Tok::If) {
      advance();
      s->kind = St::If;
      punct('(');
      s->value = expr();
      punct('<');
      s->cond_rhs = expr();
      punct(')');
      s->body = block();
    } else {
      s->kind = St::Block;
      s->body = block();
    }
    return s;
  }
  Expr *expr() {
    Expr *e = term();
    while (is_punct('+') || is_punct('-')) e = binary(e, &Parser::term);
    return e;
  }
  Expr *term() {
    Expr *e = unary();
    while (is_punct('*') || is_punct('/') || is_punct('%')) e = binary(e, &Parser::unary);
    return e;
  }
  Expr *binary(Expr *lhs, Expr *(Parser::*next)()) {
    Expr *e = node<Expr>();
    e->kind = Ex::Bin;
    e->op = t_->punct;
    advance();
    e->lhs = lhs;
    e->rhs = (this->*next)();
    return e;
  }
  Expr *unary() {
    if (is_punct('-')) {
      advance();
      Expr *e = node<Expr>();
      e->kind = Ex::Neg;
      e->lhs = unary();
      return e;
    }
    if (is_punct('(')) {
      advance();
      Expr *e = expr();
      punct(')');
      return e;
    }
    Expr *e = node<Expr>();
    if (t_->kind == Tok::Number) {
      e->kind = Ex::Const;
      e->value = t_->value;
    } else if (t_->kind == Tok::Ident) {
      e->kind = Ex::Var;
      e->name = t_->text;
    } else {
      fail();
    }
    advance();
    return e;
  }

  Memory &m_;
  Token *t_;
  std::uint64_t nodes_ = 0;
};

// Resolves names to slots; each block's symbols live in its scope region.
class Resolver {
 public:
  explicit Resolver(Memory &m) : m_(m) {}
  int slots() const { return slots_; }

  void function(Stmt *body) {
    m_.push_scope();
    scopes_.assign(1, nullptr);
    declare("a");
    declare("b");
    block(body);
    m_.pop_scope();
  }

 private:
  void declare(const char *name) {
    Symbol *s = m_.scope_new<Symbol>();
    s->name = name;
    s->slot = slots_++;
    s->next = scopes_.back();
    scopes_.back() = s;
  }
  int lookup(const char *name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      for (const Symbol *s = *it; s; s = s->next)
        if (std::strcmp(s->name, name) == 0) return s->slot;
    std::fprintf(stderr, "compiler: undefined name %s\n", name);
    std::exit(1);
  }
  void expr(Expr *e) {
    if (!e) return;
    if (e->kind == Ex::Var) e->slot = lookup(e->name);
    expr(e->lhs);
    expr(e->rhs);
  }
  void block(Stmt *s) {
    for (; s; s = s->next) {
      expr(s->value);
      expr(s->cond_rhs);
      if (s->kind == St::Let) {
        declare(s->name);  // visible from the next statement on
        s->slot = scopes_.back()->slot;
      } else if (s->kind == St::Assign) {
        s->slot = lookup(s->name);
      }
      if (s->body) {
        m_.push_scope();
        scopes_.push_back(nullptr);
        block(s->body);
        scopes_.pop_back();
        m_.pop_scope();
      }
    }
  }

  Memory &m_;
  std::vector<Symbol *> scopes_;
  int slots_ = 0;
};

// ---------------------------------------------------------------------------
// Constant folding: rebuilds folded subtrees as new nodes in the function region.
std::int64_t wrap(std::uint64_t v) { return static_cast<std::int64_t>(v); }

Expr *fold(Memory &m, Expr *e, std::uint64_t &folded) {
  if (e->kind == Ex::Const || e->kind == Ex::Var) return e;
  Expr *l = fold(m, e->lhs, folded);
  Expr *r = e->rhs ? fold(m, e->rhs, folded) : nullptr;
  if (l->kind == Ex::Const && (!r || r->kind == Ex::Const)) {
    const std::uint64_t a = static_cast<std::uint64_t>(l->value);
    std::uint64_t v = 0;
    bool ok = true;
    if (e->kind == Ex::Neg) v = 0 - a;
    else {
      const std::int64_t b = r->value;
      switch (e->op) {
        case '+': v = a + static_cast<std::uint64_t>(b); break;
        case '-': v = a - static_cast<std::uint64_t>(b); break;
        case '*': v = a * static_cast<std::uint64_t>(b); break;
        default:
          ok = b != 0 && !(l->value == INT64_MIN && b == -1);
          if (ok) v = static_cast<std::uint64_t>(e->op == '/' ? l->value / b : l->value % b);
      }
    }
    if (ok) {
      Expr *c = m.ast_new<Expr>();
      c->kind = Ex::Const;
      c->value = wrap(v);
      ++folded;
      return c;
    }
  }
  if (l == e->lhs && r == e->rhs) return e;
  Expr *copy = m.ast_new<Expr>();
  *copy = *e;
  copy->lhs = l;
  copy->rhs = r;
  return copy;
}

void fold_block(Memory &m, Stmt *s, std::uint64_t &folded) {
  for (; s; s = s->next) {
    if (s->value) s->value = fold(m, s->value, folded);
    if (s->cond_rhs) s->cond_rhs = fold(m, s->cond_rhs, folded);
    fold_block(m, s->body, folded);
  }
}

// ---------------------------------------------------------------------------
// Lowering to three-address code and emitting it.
struct Operand {
  bool is_const;
  std::int64_t v;  // constant, or temporary/slot number
  bool is_slot;
};
struct Insn {
  char op;  // + - * / % n(eg) =(move) <(branch if not less) L(abel) r(eturn)
            // c: removed by common-subexpression elimination
  int dst;
  Operand a, b;
  Insn *next;
};

class Lowering {
 public:
  explicit Lowering(Memory &m) : m_(m) {}
  Insn *function(Stmt *body, std::uint64_t &insns) {
    block(body);
    insns += count_;
    return head_.next;
  }
  int temps() const { return temps_; }

 private:
  Insn *emit(char op) {
    Insn *i = m_.function_new<Insn>();
    i->op = op;
    tail_->next = i;
    tail_ = i;
    ++count_;
    return i;
  }
  Operand expr(const Expr *e) {
    switch (e->kind) {
      case Ex::Const: return {true, e->value, false};
      case Ex::Var: return {false, e->slot, true};
      case Ex::Neg: {
        Insn *i = emit('n');
        i->a = expr(e->lhs);
        i->dst = temps_++;
        return {false, i->dst, false};
      }
      case Ex::Bin: {
        const Operand a = expr(e->lhs), b = expr(e->rhs);
        Insn *i = emit(e->op);
        i->a = a;
        i->b = b;
        i->dst = temps_++;
        return {false, i->dst, false};
      }
    }
    return {};
  }
  void block(const Stmt *s) {
    for (; s; s = s->next) {
      switch (s->kind) {
        case St::Let:
        case St::Assign: {
          const Operand v = expr(s->value);
          Insn *i = emit('=');
          i->a = v;
          i->dst = s->slot;
          break;
        }
        case St::Return: emit('r')->a = expr(s->value); break;
        case St::Block: block(s->body); break;
        case St::If: {
          const Operand a = expr(s->value), b = expr(s->cond_rhs);
          Insn *br = emit('<');
          br->a = a;
          br->b = b;
          br->dst = labels_++;
          block(s->body);
          emit('L')->dst = br->dst;
          break;
        }
      }
    }
  }

  Memory &m_;
  Insn head_{};
  Insn *tail_ = &head_;
  int temps_ = 0, labels_ = 0;
  std::uint64_t count_ = 0;
};

// ---------------------------------------------------------------------------
// Local common-subexpression elimination (value numbering in each basic
// block): an operation whose operator and operands were already computed in
// the block is removed, and its uses read the earlier temporary. A variable's
// assignment gives it a new version, so expressions over its old value no
// longer match. Open-addressing table, reused across functions.
class Cse {
 public:
  void run(Insn *code, int temps, int slots) {
    canon_.resize(static_cast<std::size_t>(temps));
    for (int t = 0; t < temps; ++t) canon_[static_cast<std::size_t>(t)] = t;
    version_.assign(static_cast<std::size_t>(slots), 0);
    std::size_t want = 64;
    while (want < 2 * static_cast<std::size_t>(temps)) want *= 2;
    if (table_.size() < want) table_.assign(want, Entry{});
    ++block_;
    for (Insn *i = code; i; i = i->next) {
      rename(i->a);
      rename(i->b);
      switch (i->op) {
        case 'L':
        case '<': ++block_; break;  // a new basic block starts after either
        case '=': ++version_[static_cast<std::size_t>(i->dst)]; break;
        case 'r': break;
        default: value(i); break;
      }
    }
  }
  std::uint64_t removed() const { return removed_; }

 private:
  struct Entry {
    std::uint64_t key = 0, block = 0;
    int temp = 0;
  };
  void rename(Operand &o) {
    if (!o.is_const && !o.is_slot) o.v = canon_[static_cast<std::size_t>(o.v)];
  }
  std::uint64_t word(const Operand &o) const {
    if (o.is_const) return wl::mix(static_cast<std::uint64_t>(o.v) * 3 + 1);
    if (o.is_slot)
      return wl::mix((static_cast<std::uint64_t>(o.v) << 32 | static_cast<std::uint32_t>(version_[static_cast<std::size_t>(o.v)])) * 3 + 2);
    return wl::mix(static_cast<std::uint64_t>(o.v) * 3);
  }
  void value(Insn *i) {
    std::uint64_t a = word(i->a), b = i->op == 'n' ? 0 : word(i->b);
    if ((i->op == '+' || i->op == '*') && a > b) std::swap(a, b);  // commutative
    const std::uint64_t key = (wl::mix(a * 31 + b) ^ static_cast<std::uint64_t>(i->op)) | 1;
    const std::size_t mask = table_.size() - 1;
    for (std::size_t h = key & mask;; h = (h + 1) & mask) {
      Entry &e = table_[h];
      if (e.block != block_) {  // empty in this block: a new value
        e = Entry{key, block_, i->dst};
        return;
      }
      if (e.key == key) {  // computed before in this block
        canon_[static_cast<std::size_t>(i->dst)] = e.temp;
        i->op = 'c';
        ++removed_;
        return;
      }
    }
  }

  std::vector<Entry> table_;
  std::vector<int> canon_, version_;
  std::uint64_t block_ = 0, removed_ = 0;
};

// ---------------------------------------------------------------------------
// Register allocation, the back end's main job (lcc's gen pass in miniature):
// a linear scan over the code gives every temporary one of kRegs registers
// from its definition to its last use, and a stack slot when none is free.
// Its tables are reused from function to function (no allocation per insn).
class RegAlloc {
 public:
  static constexpr int kRegs = 6;

  void run(const Insn *code, int temps) {
    last_use_.assign(static_cast<std::size_t>(temps), -1);
    where_.assign(static_cast<std::size_t>(temps), 0);
    int k = 0;
    for (const Insn *i = code; i; i = i->next, ++k) {
      if (i->op == 'c') continue;
      note_use(i->a, k);
      if (has_b(i)) note_use(i->b, k);
    }
    unsigned free_regs = (1u << kRegs) - 1;
    int next_slot = 0;
    k = 0;
    for (const Insn *i = code; i; i = i->next, ++k) {
      if (i->op == 'c') continue;
      free_regs |= release(i->a, k);
      if (has_b(i)) free_regs |= release(i->b, k);
      if (!defines_temp(i)) continue;
      int &w = where_[static_cast<std::size_t>(i->dst)];
      if (free_regs) {
        const int r = __builtin_ctz(free_regs);
        free_regs &= ~(1u << r);
        w = r + 1;
        if (last_use_[static_cast<std::size_t>(i->dst)] < 0) free_regs |= 1u << r;  // dead on arrival
      } else {
        w = -(++next_slot);
        ++spills_;
      }
    }
    if (next_slot > max_slots_) max_slots_ = next_slot;
  }

  // "r<n>" for a register, "[sp+<8n>]" for a spilled temporary.
  void put_temp(std::string &out, int t) const {
    const int w = where_[static_cast<std::size_t>(t)];
    if (w > 0) {
      out += 'r';
      out += static_cast<char>('0' + w - 1);
    } else {
      append(out, "[sp+", 8LL * (-w - 1), "]");
    }
  }
  std::uint64_t spills() const { return spills_; }

 private:
  static bool has_b(const Insn *i) {
    return i->op != 'L' && i->op != 'r' && i->op != '=' && i->op != 'n' && i->op != 'c';
  }
  static bool defines_temp(const Insn *i) {
    return i->op != 'L' && i->op != 'r' && i->op != '=' && i->op != '<' && i->op != 'c';
  }
  static bool is_temp(const Operand &o) { return !o.is_const && !o.is_slot; }
  void note_use(const Operand &o, int k) {
    if (is_temp(o)) last_use_[static_cast<std::size_t>(o.v)] = k;
  }
  unsigned release(const Operand &o, int k) const {  // the register a last use frees
    if (!is_temp(o) || last_use_[static_cast<std::size_t>(o.v)] != k) return 0;
    const int w = where_[static_cast<std::size_t>(o.v)];
    return w > 0 ? 1u << (w - 1) : 0;
  }

  std::vector<int> last_use_, where_;
  std::uint64_t spills_ = 0;
  int max_slots_ = 0;
};

void put_operand(std::string &out, const Operand &o, const RegAlloc &ra) {
  if (o.is_const) out += std::to_string(o.v);
  else if (o.is_slot) append(out, "v", o.v, "");
  else ra.put_temp(out, static_cast<int>(o.v));
}

void emit_text(std::string &out, const char *name, const Insn *i, const RegAlloc &ra) {
  out.clear();
  out += name;
  out += ":\n";
  for (; i; i = i->next) {
    switch (i->op) {
      case 'L': append(out, "L", i->dst, ":\n"); continue;
      case 'c': continue;
      case 'r': out += "  ret "; put_operand(out, i->a, ra); break;
      case '<':
        out += "  jge ";
        put_operand(out, i->a, ra);
        out += ", ";
        put_operand(out, i->b, ra);
        append(out, ", L", i->dst, "");
        break;
      case '=': append(out, "  v", i->dst, " = "); put_operand(out, i->a, ra); break;
      case 'n':
        out += "  ";
        ra.put_temp(out, i->dst);
        out += " = neg ";
        put_operand(out, i->a, ra);
        break;
      default:
        out += "  ";
        ra.put_temp(out, i->dst);
        out += " = ";
        put_operand(out, i->a, ra);
        out += ' ';
        out += i->op;
        out += ' ';
        put_operand(out, i->b, ra);
    }
    out += '\n';
  }
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv,
      kPartial ? "compiler front end with regions for the AST only, the rest malloc/free (Clang)"
               : "compiler front end with obstacks and nested regions (176.gcc, lcc, Clang)",
      wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Emulator) | wl::kRegionLikeAllocs, true);
  const long functions = wl::scaled(opt, 6000, 5);
  const long declarations = wl::sized(opt, 1000);  // the headers' (--live)
  constexpr long kPerHeader = 64;

  Memory mem(opt.alloc);
  Generator gen(176);
  wl::Checksum sum;
  std::string source, text, name;
  Names names, strings;  // a function's string table, the unit's
  std::vector<Token> token_array;
  Cse cse;
  RegAlloc regs;
  std::uint64_t tokens = 0, nodes = 0, folded = 0, insns = 0, emitted = 0;
  Unit unit(mem);
  HeaderGenerator headers(2002);
  for (long d = 0; d < declarations; d += kPerHeader) {
    headers.header(source, d, std::min(kPerHeader, declarations - d));
    unit.header(lex(mem, strings, true, token_array, source, tokens));
  }
  for (long f = 0; f < functions; ++f) {
    gen.function(source, static_cast<int>(f));
    mem.begin_function();
    Parser parser(mem, lex(mem, names, false, token_array, source, tokens));
    Stmt *body = parser.function(nodes);
    Resolver resolver(mem);
    resolver.function(body);
    fold_block(mem, body, folded);
    Lowering lower(mem);
    Insn *code = lower.function(body, insns);
    cse.run(code, lower.temps(), resolver.slots());
    regs.run(code, lower.temps());
    name.clear();
    append(name, "f", f, "");
    unit.define_function(strings.intern(mem, name, true), 2);
    emit_text(text, name.c_str(), code, regs);
    mem.end_function();
    sum.add_bytes(text.data(), text.size());
    emitted += text.size();
  }
  unit.fold_into(sum);
  std::printf("globals %" PRIu64 "\nstruct_bytes %" PRIu64 "\n", unit.globals(), unit.struct_bytes());
  std::printf("functions %ld\ntokens %" PRIu64 "\nast_nodes %" PRIu64 "\nfolded %" PRIu64
              "\ninsns %" PRIu64 "\ncse_removed %" PRIu64 "\nspills %" PRIu64 "\nemitted_bytes %" PRIu64 "\n",
              functions, tokens, nodes, folded, insns, cse.removed(), regs.spills(), emitted);
  std::fprintf(stderr, "region_objects %" PRIu64 " (%s)\n", mem.objects(), wl::alloc_name(opt.alloc));
  if (kPartial) std::fprintf(stderr, "malloc_objects %" PRIu64 "\n", mem.heap_objects());
  wl::print_checksum(sum.value());
  return 0;
}

// interp — a small Lisp interpreter with a region per top-level form.
//
// Models mudlle, the MUD language compiler/interpreter of the reaps paper
// (Tables 1-3) and of the 2026 "littering" study, whose region allocator is
// "fast and easy": everything a top-level form conses up — the form read from
// the source, environment frames, closures, intermediate and result lists —
// lives in that form's region and is dropped in one call once the form's
// value has been printed. Definitions outlive their form: `define` copies its
// lambda into a global region.
//
//   --alloc custom  mudlle/lcc-style regions: blocks from malloc, bump
//                   allocation, reset puts the blocks on a free-block list
//   --alloc reap    a global reap and a form reap cleared after each form
//   --alloc malloc  naive: each region a list of one-object chunks from malloc,
//                   a reset walks the list ("reduce chunk size to fit single
//                   objects", littering Table 4)
//   --alloc emulator  the reaps under libreap's region emulator (REAP_MODE=malloc)
//   --alloc talloc|apr|pmr  the regions as talloc contexts, APR pools, or
//                   std::pmr::monotonic_buffer_resource (nothing is freed singly)
#include "region.hpp"
#include "workload.hpp"

#include <new>
#include <string>
#include <unordered_map>

namespace {

// A region in the mudlle/lcc manner: a list of blocks, bump allocation within
// the current one. Reset keeps the blocks on a free-block list (as lcc's
// arenas do), so a program that resets often stops calling malloc at all.
class Region {
 public:
  ~Region() {
    reset();
    while (spare_) {
      Block *b = spare_;
      spare_ = b->prev;
      std::free(b);
    }
  }
  void *alloc(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (static_cast<std::size_t>(limit_ - next_) < n) grow(n);
    void *p = next_;
    next_ += n;
    return p;
  }
  void reset() {  // frees every object at once
    while (block_) {
      Block *b = block_;
      block_ = b->prev;
      if (b->size == kBlock) {
        b->prev = spare_;
        spare_ = b;
      } else {
        std::free(b);  // an oversized block is not worth keeping
      }
    }
    next_ = limit_ = nullptr;
  }

 private:
  static constexpr std::size_t kBlock = 32 * 1024 - 64;
  struct Block {
    Block *prev;
    std::size_t size;
    alignas(16) char data[];
  };
  void grow(std::size_t n) {
    Block *b;
    if (n <= kBlock && spare_) {
      b = spare_;
      spare_ = b->prev;
    } else {
      const std::size_t size = n > kBlock ? n : kBlock;
      b = static_cast<Block *>(wl::check(std::malloc(sizeof(Block) + size), "region"));
      b->size = size;
    }
    b->prev = block_;
    block_ = b;
    next_ = b->data;
    limit_ = b->data + b->size;
  }
  Block *block_ = nullptr, *spare_ = nullptr;
  char *next_ = nullptr, *limit_ = nullptr;
};

class Memory {
 public:
  explicit Memory(wl::Alloc mode) : custom_(mode == wl::Alloc::Custom) {
    if (!custom_) {
      wl::area_setup(mode, wl::PmrKind::Monotonic);  // regions only: reset in bulk
      global_area_ = wl::area_create(nullptr);
      form_area_ = wl::area_create(nullptr);
    }
  }
  ~Memory() {
    if (!custom_) {
      wl::area_destroy(form_area_);
      wl::area_destroy(global_area_);
    }
  }
  void *form(std::size_t n) {
    ++objects_;
    return wl::check(custom_ ? form_region_.alloc(n) : wl::area_alloc(form_area_, n), "form region");
  }
  void *global(std::size_t n) {
    return wl::check(custom_ ? global_region_.alloc(n) : wl::area_alloc(global_area_, n), "global region");
  }
  void end_form() {
    if (custom_) form_region_.reset();
    else wl::area_clear(form_area_);
  }
  std::uint64_t objects() const { return objects_; }

 private:
  bool custom_;
  Region form_region_, global_region_;
  wl::Area *form_area_ = nullptr, *global_area_ = nullptr;
  std::uint64_t objects_ = 0;
};

// ---------------------------------------------------------------------------
// Values: odd words are fixnums, 0 is nil, anything else points to an Obj.
using Value = std::uintptr_t;
constexpr Value kNil = 0;

enum class Type : std::uint8_t { Cons, Symbol, Closure, Builtin, Frame };
struct Obj {
  Type type;
};
struct Cons : Obj {
  Value car, cdr;
};
struct Symbol;
struct Slot {
  Symbol *name;
  Value value;
};
struct Frame : Obj {  // the variables of one call or one let, then the enclosing frame
  std::uint32_t count;
  Frame *next;
  Slot slot[];
};
struct Closure : Obj {
  Value params, body;
  Frame *env;
};
class Interp;
constexpr int kMaxArgs = 4;
using BuiltinFn = Value (*)(Interp &in, const Value *arg);
struct Builtin : Obj {
  BuiltinFn fn;
};
enum class Special : std::uint8_t { None, Quote, If, Let, Lambda, Define, Begin };
struct Symbol : Obj {
  std::string name;
  Value global = kNil;
  bool bound = false;
  Special special = Special::None;
};

bool is_fix(Value v) { return v & 1; }
std::int64_t fix(Value v) { return static_cast<std::int64_t>(v) >> 1; }
Value make_fix(std::int64_t n) { return (static_cast<Value>(n) << 1) | 1; }
Obj *obj(Value v) { return reinterpret_cast<Obj *>(v); }
bool is(Value v, Type t) { return v && !is_fix(v) && obj(v)->type == t; }
Cons *as_cons(Value v) { return static_cast<Cons *>(obj(v)); }
Value car(Value v) { return as_cons(v)->car; }
Value cdr(Value v) { return as_cons(v)->cdr; }

[[noreturn]] void error(const char *what) {
  std::fprintf(stderr, "interp: %s\n", what);
  std::exit(1);
}

class Interp {
 public:
  explicit Interp(Memory &m) : m_(m) {
    intern("quote")->special = Special::Quote;
    intern("if")->special = Special::If;
    intern("let")->special = Special::Let;
    intern("lambda")->special = Special::Lambda;
    intern("define")->special = Special::Define;
    intern("begin")->special = Special::Begin;
    t_ = intern("t");
    define_builtin("+", [](Interp &, const Value *a) { return make_fix(fix(a[0]) + fix(a[1])); });
    define_builtin("-", [](Interp &, const Value *a) { return make_fix(fix(a[0]) - fix(a[1])); });
    define_builtin("*", [](Interp &, const Value *a) { return make_fix(fix(a[0]) * fix(a[1])); });
    define_builtin("mod", [](Interp &, const Value *a) {
      const std::int64_t d = fix(a[1]);
      return make_fix(d ? fix(a[0]) % d : 0);
    });
    define_builtin("<", [](Interp &in, const Value *a) { return in.truth(fix(a[0]) < fix(a[1])); });
    define_builtin("=", [](Interp &in, const Value *a) { return in.truth(fix(a[0]) == fix(a[1])); });
    define_builtin("not", [](Interp &in, const Value *a) { return in.truth(a[0] == kNil); });
    define_builtin("null", [](Interp &in, const Value *a) { return in.truth(a[0] == kNil); });
    define_builtin("cons", [](Interp &in, const Value *a) {
      return reinterpret_cast<Value>(in.cons(a[0], a[1]));
    });
    Symbol *nil = intern("nil");
    nil->bound = true;  // its value is the empty list
    define_builtin("car", [](Interp &, const Value *a) { return car(a[0]); });
    define_builtin("cdr", [](Interp &, const Value *a) { return cdr(a[0]); });
  }
  ~Interp() {
    for (auto &entry : symbols_) delete entry.second;
  }

  // Reads one form from src (advancing it), conses in the form region.
  Value read(const char *&p) {
    while (*p == ' ' || *p == '\n') ++p;
    if (*p == '(') {
      ++p;
      Value head = kNil;
      Cons *tail = nullptr;
      for (;;) {
        while (*p == ' ' || *p == '\n') ++p;
        if (*p == ')') {
          ++p;
          return head;
        }
        if (!*p) error("unbalanced parentheses");
        Cons *c = cons(read(p), kNil);
        if (tail) tail->cdr = reinterpret_cast<Value>(c);
        else head = reinterpret_cast<Value>(c);
        tail = c;
      }
    }
    if ((*p >= '0' && *p <= '9')) {
      std::int64_t n = 0;
      while (*p >= '0' && *p <= '9') n = n * 10 + (*p++ - '0');
      return make_fix(n);
    }
    const char *s = p;
    while (*p && *p != ' ' && *p != '\n' && *p != '(' && *p != ')') ++p;
    if (s == p) error("unexpected character");
    return reinterpret_cast<Value>(intern(std::string(s, static_cast<std::size_t>(p - s))));
  }

  Value eval(Value x, Frame *env) {
    if (is_fix(x) || x == kNil) return x;
    if (is(x, Type::Symbol)) return lookup(static_cast<Symbol *>(obj(x)), env);
    const Value head = car(x);
    if (is(head, Type::Symbol)) {
      auto *s = static_cast<Symbol *>(obj(head));
      switch (s->special) {
        case Special::Quote: return car(cdr(x));
        case Special::If:
          return eval(car(cdr(x)), env) != kNil ? eval(car(cdr(cdr(x))), env)
                                                : eval(car(cdr(cdr(cdr(x)))), env);
        case Special::Let: {
          std::uint32_t n = 0;
          for (Value b = car(cdr(x)); b != kNil; b = cdr(b)) ++n;
          Frame *inner = frame(n, env);
          n = 0;
          for (Value b = car(cdr(x)); b != kNil; b = cdr(b), ++n)
            inner->slot[n] = {static_cast<Symbol *>(obj(car(car(b)))), eval(car(cdr(car(b))), env)};
          return eval(car(cdr(cdr(x))), inner);
        }
        case Special::Lambda: {
          auto *c = new (m_.form(sizeof(Closure))) Closure{};
          c->type = Type::Closure;
          c->params = car(cdr(x));
          c->body = car(cdr(cdr(x)));
          c->env = env;
          return reinterpret_cast<Value>(c);
        }
        case Special::Define: return define(x);
        case Special::Begin: {
          Value v = kNil;
          for (Value b = cdr(x); b != kNil; b = cdr(b)) v = eval(car(b), env);
          return v;
        }
        case Special::None: break;
      }
    }
    // arguments are evaluated onto the C stack, as a bytecode machine would
    const Value fn = eval(head, env);
    Value arg[kMaxArgs] = {};
    int n = 0;
    for (Value a = cdr(x); a != kNil; a = cdr(a)) {
      if (n == kMaxArgs) error("too many arguments");
      arg[n++] = eval(car(a), env);
    }
    return apply(fn, arg, n);
  }

  Value apply(Value fn, const Value *arg, int n) {
    ++calls_;
    if (is(fn, Type::Builtin)) return static_cast<Builtin *>(obj(fn))->fn(*this, arg);
    if (!is(fn, Type::Closure)) error("not a function");
    auto *c = static_cast<Closure *>(obj(fn));
    Frame *env = frame(static_cast<std::uint32_t>(n), c->env);
    int i = 0;
    for (Value p = c->params; p != kNil && i < n; p = cdr(p), ++i)
      env->slot[i] = {static_cast<Symbol *>(obj(car(p))), arg[i]};
    return eval(c->body, env);
  }

  // A printed value, appended to out.
  void print(std::string &out, Value v) {
    if (is_fix(v)) out += std::to_string(fix(v));
    else if (v == kNil) out += "nil";
    else if (is(v, Type::Symbol)) out += static_cast<Symbol *>(obj(v))->name;
    else if (is(v, Type::Cons)) {
      out += '(';
      for (bool first = true; v != kNil; v = cdr(v), first = false) {
        if (!first) out += ' ';
        print(out, car(v));
      }
      out += ')';
    } else out += "#<function>";
  }

  Value truth(bool b) const { return b ? reinterpret_cast<Value>(t_) : kNil; }
  std::uint64_t calls() const { return calls_; }

  void define_builtin(const char *name, BuiltinFn fn) {
    auto *b = new (m_.global(sizeof(Builtin))) Builtin{};
    b->type = Type::Builtin;
    b->fn = fn;
    Symbol *s = intern(name);
    s->global = reinterpret_cast<Value>(b);
    s->bound = true;
  }
  Cons *cons(Value a, Value d) {
    auto *c = new (m_.form(sizeof(Cons))) Cons{};
    c->type = Type::Cons;
    c->car = a;
    c->cdr = d;
    return c;
  }

 private:
  Frame *frame(std::uint32_t count, Frame *next) {
    auto *f = static_cast<Frame *>(m_.form(sizeof(Frame) + count * sizeof(Slot)));
    f->type = Type::Frame;
    f->count = count;
    f->next = next;
    return f;
  }
  Value lookup(Symbol *s, Frame *env) const {
    for (; env; env = env->next)
      for (std::uint32_t i = 0; i < env->count; ++i)
        if (env->slot[i].name == s) return env->slot[i].value;
    if (!s->bound) error(("unbound symbol " + s->name).c_str());
    return s->global;
  }
  // (define (name params...) body): the lambda is copied to the global region.
  Value define(Value x) {
    const Value sig = car(cdr(x));
    auto *c = new (m_.global(sizeof(Closure))) Closure{};
    c->type = Type::Closure;
    c->params = copy_global(cdr(sig));
    c->body = copy_global(car(cdr(cdr(x))));
    auto *s = static_cast<Symbol *>(obj(car(sig)));
    s->global = reinterpret_cast<Value>(c);
    s->bound = true;
    return car(sig);
  }
  Value copy_global(Value v) {
    if (!is(v, Type::Cons)) return v;
    auto *c = new (m_.global(sizeof(Cons))) Cons{};
    c->type = Type::Cons;
    c->car = copy_global(car(v));
    c->cdr = copy_global(cdr(v));
    return reinterpret_cast<Value>(c);
  }
  Symbol *intern(const std::string &name) {
    auto it = symbols_.find(name);
    if (it != symbols_.end()) return it->second;
    auto *s = new Symbol{};
    s->type = Type::Symbol;
    s->name = name;
    symbols_.emplace(name, s);
    return s;
  }

  Memory &m_;
  std::unordered_map<std::string, Symbol *> symbols_;
  Symbol *t_ = nullptr;
  std::uint64_t calls_ = 0;
};

const char *const kPrelude = R"(
(define (range a b) (if (< a b) (cons a (range (+ a 1) b)) nil))
(define (map f l) (if (null l) nil (cons (f (car l)) (map f (cdr l)))))
(define (filter p l) (if (null l) nil (if (p (car l)) (cons (car l) (filter p (cdr l))) (filter p (cdr l)))))
(define (foldl f acc l) (if (null l) acc (foldl f (f acc (car l)) (cdr l))))
(define (rev l) (foldl (lambda (a x) (cons x a)) nil l))
(define (append a b) (if (null a) b (cons (car a) (append (cdr a) b))))
(define (qsort l) (if (null l) nil (let ((p (car l)) (r (cdr l))) (append (qsort (filter (lambda (x) (< x p)) r)) (cons p (qsort (filter (lambda (x) (not (< x p))) r)))))))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(define (len l) (foldl (lambda (a x) (+ a 1)) 0 l))
(define (hash l) (foldl (lambda (a x) (mod (+ (* a 31) x) 1000003)) 7 l))
(define (take n l) (if (< n 1) nil (if (null l) nil (cons (car l) (take (- n 1) (cdr l))))))
)";

// A generated top-level form; each exercises lists, closures and recursion.
std::string generate_form(wl::Rng &rng) {
  const int n = rng.range(20, 160), k = rng.range(3, 97), m = rng.range(50, 5000);
  char buf[512];
  switch (rng.below(7)) {
    case 0: std::snprintf(buf, sizeof buf, "(foldl + 0 (map (lambda (x) (* x x)) (range 0 %d)))", n); break;
    case 1:
      std::snprintf(buf, sizeof buf, "(hash (qsort (map (lambda (x) (mod (* x %d) %d)) (range 0 %d))))", k, m, n);
      break;
    case 2: std::snprintf(buf, sizeof buf, "(fib %d)", rng.range(8, 15)); break;
    case 3: std::snprintf(buf, sizeof buf, "(let ((l (range 0 %d))) (len (append (rev l) l)))", n); break;
    case 4:
      std::snprintf(buf, sizeof buf, "(foldl + 0 (filter (lambda (x) (= (mod x %d) 0)) (range 0 %d)))", k % 7 + 2,
                    n);
      break;
    case 5:
      std::snprintf(buf, sizeof buf,
                    "(take 5 (qsort (map (lambda (x) (mod (* x x) %d)) (rev (range 1 %d)))))", m, n);
      break;
    default:
      std::snprintf(buf, sizeof buf,
                    "(let ((f (lambda (y) (lambda (x) (+ x y))))) (hash (map (f %d) (map (f %d) (range 0 %d)))))",
                    k, m, n);
  }
  return buf;
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt =
      wl::parse_options(argc, argv, "Lisp interpreter with a region per top-level form (mudlle)",
                        wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Emulator) | wl::kRegionLikeAllocs);
  const long forms = wl::scaled(opt, 4000, 20);

  Memory mem(opt.alloc);
  wl::Checksum sum;
  std::uint64_t calls = 0;
  {
    Interp in(mem);
    for (const char *p = kPrelude;;) {
      while (*p == ' ' || *p == '\n') ++p;
      if (!*p) break;
      in.eval(in.read(p), nullptr);
      mem.end_form();
    }
    wl::Rng rng(1687079);
    std::string text, out;
    for (long f = 0; f < forms; ++f) {
      text = generate_form(rng);
      const char *p = text.c_str();
      const Value form = in.read(p);
      const Value v = in.eval(form, nullptr);
      out.clear();
      in.print(out, v);
      sum.add_bytes(out.data(), out.size());
      if (f < 3) std::printf("%s => %s\n", text.c_str(), out.c_str());
      mem.end_form();  // the region per top-level form
    }
    calls = in.calls();
  }
  std::printf("forms %ld\ncalls %" PRIu64 "\n", forms, calls);
  std::fprintf(stderr, "region_objects %" PRIu64 " (%s)\n", mem.objects(), wl::alloc_name(opt.alloc));
  wl::print_checksum(sum.value());
  return 0;
}

// server — per-request pools and a bignum calculator that frees as it goes.
//
// Models the reaps paper's Apache case study (§7.5, Tables 1-3): Apache gives
// every request a pool (a region nested in a longer-lived one) and frees it
// when the response is sent. The paper adds a module running bc, an
// arbitrary-precision calculator written for malloc/free: under pools its
// frees are no-ops, so every temporary stays until the request ends (7.4 MB
// for the 1000th prime); with reaps the frees are real (240 KB).
//
// The program serves generated requests: it parses the request line and the
// headers into the request pool, runs the bc-like program carried in the
// body (factorials, Fibonacci numbers, powers, harmonic sums, the k-th prime,
// all on decimal bignums whose temporaries are freed at once), and formats a
// response. The checksum covers every response.
//
//   --alloc custom  APR-style pools: 8 KiB blocks, bump allocation, free is a
//                   no-op; a destroyed pool's blocks go to a server-wide list
//   --alloc reap    a server reap and a child reap per request; frees are real
//   --alloc malloc  naive (littering Table 4): each pool a list of one-object
//                   chunks from malloc; bc's frees unlink and free a chunk, the
//                   end of a request walks the rest
//   --alloc emulator  the reaps under libreap's region emulator (REAP_MODE=malloc)
//   --alloc talloc|apr|pmr  talloc contexts (frees are talloc_free), APR pools
//                   (frees dropped, as in Apache), std::pmr::unsynchronized_pool_resource
//                   (bc frees one object at a time)
//
// stderr: `footprint_peak_bytes N` — the most memory the pools (or reaps) held
// at once: block bytes for pools, libreap's footprint for reaps and the
// emulator (there: malloc's usable sizes of live objects), the chunks' usable
// sizes for malloc, counted bytes for talloc/apr/pmr (region.hpp).
#include "region.hpp"
#include "workload.hpp"

#include <string>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// APR-style pools: no individual free; blocks recycled through one allocator.
class BlockSource {
 public:
  static constexpr std::size_t kBlock = 8192;
  ~BlockSource() {
    for (void *b : spare_) std::free(b);
  }
  void *take(std::size_t size) {
    if (size == kBlock && !spare_.empty()) {
      void *b = spare_.back();
      spare_.pop_back();
      return b;
    }
    return wl::check(std::malloc(size), "pool block");
  }
  void give(void *b, std::size_t size) {
    if (size == kBlock) spare_.push_back(b);
    else std::free(b);
  }
  std::size_t held = 0, peak = 0;  // bytes in blocks that pools hold now / at most

 private:
  std::vector<void *> spare_;
};

class Pool {
 public:
  explicit Pool(BlockSource &src) : src_(src) {}
  ~Pool() { clear(); }
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;

  void *alloc(std::size_t n) {
    n = (n + 15) & ~std::size_t{15};
    if (static_cast<std::size_t>(limit_ - next_) < n) grow(n);
    void *p = next_;
    next_ += n;
    return p;
  }
  void clear() {
    while (block_) {
      Block *b = block_;
      block_ = b->prev;
      src_.held -= b->size;
      src_.give(b, b->size);
    }
    next_ = limit_ = nullptr;
  }

 private:
  struct Block {
    Block *prev;
    std::size_t size;
  };
  static constexpr std::size_t kHeader = 32;  // keeps payloads 16-byte aligned
  void grow(std::size_t n) {
    const std::size_t size = n + kHeader > BlockSource::kBlock ? n + kHeader : BlockSource::kBlock;
    auto *b = static_cast<Block *>(src_.take(size));
    b->prev = block_;
    b->size = size;
    block_ = b;
    next_ = reinterpret_cast<char *>(b) + kHeader;
    limit_ = reinterpret_cast<char *>(b) + size;
    src_.held += size;
    if (src_.held > src_.peak) src_.peak = src_.held;
  }
  BlockSource &src_;
  Block *block_ = nullptr;
  char *next_ = nullptr, *limit_ = nullptr;
};

// The server's memory: a server-lifetime area and one area per request.
class Memory {
 public:
  explicit Memory(wl::Alloc mode) : custom_(mode == wl::Alloc::Custom), server_pool_(blocks_) {
    if (!custom_) {
      // bc frees its temporaries one by one: a pool resource for pmr
      wl::area_setup(mode, wl::PmrKind::Pool, /*track_footprint=*/true);
      server_area_ = wl::area_create(nullptr);
    }
  }
  ~Memory() {
    if (server_area_) wl::area_destroy(server_area_);
  }
  void begin_request() {
    if (custom_) request_pool_ = new Pool(blocks_);
    else request_area_ = wl::area_create(server_area_);
  }
  void end_request() {
    if (custom_) {
      delete request_pool_;
      request_pool_ = nullptr;
      return;
    }
    const std::size_t total = wl::area_footprint(server_area_) + wl::area_peak_footprint(request_area_);
    if (total > peak_) peak_ = total;
    wl::area_destroy(request_area_);
    request_area_ = nullptr;
  }
  void *server_alloc(std::size_t n) {
    return wl::check(custom_ ? server_pool_.alloc(n) : wl::area_alloc(server_area_, n), "server");
  }
  // ap_palloc / ap_pfree
  void *alloc(std::size_t n) {
    ++allocs_;
    return wl::check(custom_ ? request_pool_->alloc(n) : wl::area_alloc(request_area_, n), "request");
  }
  void free(void *p) {
    if (!custom_) wl::area_free(request_area_, p);  // a pool cannot take it back (nor can APR's)
  }
  std::size_t peak_footprint() const { return custom_ ? blocks_.peak : peak_; }
  std::uint64_t allocs() const { return allocs_; }

 private:
  bool custom_;
  BlockSource blocks_;
  Pool server_pool_;
  Pool *request_pool_ = nullptr;
  wl::Area *server_area_ = nullptr, *request_area_ = nullptr;
  std::size_t peak_ = 0;
  std::uint64_t allocs_ = 0;
};

char *pstrndup(Memory &m, const char *s, std::size_t n) {
  char *d = static_cast<char *>(m.alloc(n + 1));
  std::memcpy(d, s, n);
  d[n] = '\0';
  return d;
}

// ---------------------------------------------------------------------------
// bc's numbers: non-negative decimal bignums in base 10^9, one block each.
struct Num {
  std::uint32_t len;  // limbs in use; 0 means zero
  std::uint32_t limb[];
};
constexpr std::uint32_t kBase = 1000000000u;

class Calc {
 public:
  explicit Calc(Memory &m) : m_(m) {}

  Num *make(std::uint32_t limbs) {
    auto *n = static_cast<Num *>(m_.alloc(sizeof(Num) + sizeof(std::uint32_t) * (limbs ? limbs : 1)));
    n->len = 0;
    return n;
  }
  void drop(Num *n) { m_.free(n); }
  Num *from(std::uint64_t v) {
    Num *n = make(3);
    while (v) {
      n->limb[n->len++] = static_cast<std::uint32_t>(v % kBase);
      v /= kBase;
    }
    return n;
  }
  Num *add(const Num *a, const Num *b) {
    if (a->len < b->len) std::swap(a, b);
    Num *r = make(a->len + 1);
    std::uint32_t carry = 0;
    for (std::uint32_t i = 0; i < a->len; ++i) {
      std::uint32_t s = a->limb[i] + (i < b->len ? b->limb[i] : 0) + carry;
      carry = s >= kBase;
      r->limb[i] = carry ? s - kBase : s;
    }
    r->len = a->len;
    if (carry) r->limb[r->len++] = 1;
    return r;
  }
  Num *mul_small(const Num *a, std::uint32_t m) {
    Num *r = make(a->len + 1);
    std::uint64_t carry = 0;
    for (std::uint32_t i = 0; i < a->len; ++i) {
      const std::uint64_t p = static_cast<std::uint64_t>(a->limb[i]) * m + carry;
      r->limb[i] = static_cast<std::uint32_t>(p % kBase);
      carry = p / kBase;
    }
    r->len = a->len;
    if (carry) r->limb[r->len++] = static_cast<std::uint32_t>(carry);
    if (m == 0) r->len = 0;
    return r;
  }
  Num *mul(const Num *a, const Num *b) {
    if (!a->len || !b->len) return make(0);
    const std::uint32_t n = a->len + b->len;
    // scratch in 64-bit limbs, freed before returning: a bc temporary
    auto *t = static_cast<std::uint64_t *>(m_.alloc(sizeof(std::uint64_t) * n));
    std::memset(t, 0, sizeof(std::uint64_t) * n);
    for (std::uint32_t i = 0; i < a->len; ++i) {
      std::uint64_t carry = 0;
      for (std::uint32_t j = 0; j < b->len; ++j) {
        const std::uint64_t cur = t[i + j] + static_cast<std::uint64_t>(a->limb[i]) * b->limb[j] + carry;
        t[i + j] = cur % kBase;
        carry = cur / kBase;
      }
      t[i + b->len] += carry;
    }
    Num *r = make(n);
    for (std::uint32_t i = 0; i < n; ++i) r->limb[i] = static_cast<std::uint32_t>(t[i]);
    r->len = n;
    while (r->len && !r->limb[r->len - 1]) --r->len;
    m_.free(t);
    return r;
  }
  // quotient of a / d; the remainder goes to *rem
  Num *div_small(const Num *a, std::uint32_t d, std::uint32_t *rem) {
    Num *q = make(a->len);
    std::uint64_t r = 0;
    for (std::uint32_t i = a->len; i-- > 0;) {
      const std::uint64_t cur = r * kBase + a->limb[i];
      q->limb[i] = static_cast<std::uint32_t>(cur / d);
      r = cur % d;
    }
    q->len = a->len;
    while (q->len && !q->limb[q->len - 1]) --q->len;
    if (rem) *rem = static_cast<std::uint32_t>(r);
    return q;
  }
  // decimal text, allocated in the request's memory
  char *text(const Num *a) {
    char *s = static_cast<char *>(m_.alloc(9u * (a->len ? a->len : 1) + 1));
    if (!a->len) {
      std::strcpy(s, "0");
      return s;
    }
    int k = std::sprintf(s, "%u", a->limb[a->len - 1]);
    for (std::uint32_t i = a->len - 1; i-- > 0;) k += std::sprintf(s + k, "%09u", a->limb[i]);
    return s;
  }

  // --- the programs bc runs, each freeing its temporaries as bc does
  Num *factorial(std::uint32_t n) {
    Num *r = from(1);
    for (std::uint32_t i = 2; i <= n; ++i) replace(r, mul_small(r, i));
    return r;
  }
  Num *fibonacci(std::uint32_t n) {
    Num *a = from(0), *b = from(1);
    for (std::uint32_t i = 0; i < n; ++i) {
      Num *c = add(a, b);
      drop(a);
      a = b;
      b = c;
    }
    drop(b);
    return a;
  }
  Num *power(std::uint32_t base, std::uint32_t e) {
    Num *r = from(1), *b = from(base);
    for (; e; e >>= 1) {
      if (e & 1) replace(r, mul(r, b));
      if (e > 1) replace(b, mul(b, b));
    }
    drop(b);
    return r;
  }
  // sum of 10^digits / k for k = 1..n (bc with scale=digits)
  Num *harmonic(std::uint32_t n, std::uint32_t digits) {
    Num *one = power(10, digits);
    Num *sum = from(0);
    for (std::uint32_t k = 1; k <= n; ++k) {
      Num *q = div_small(one, k, nullptr);
      replace(sum, add(sum, q));
      drop(q);
    }
    drop(one);
    return sum;
  }
  // the k-th prime by trial division, every step in bc numbers
  Num *prime(std::uint32_t k) {
    Num *c = from(1);
    Num *one = from(1);
    for (std::uint32_t found = 0; found < k;) {
      replace(c, add(c, one));
      bool is_prime = true;
      for (std::uint32_t d = 2;; ++d) {
        Num *dd = from(static_cast<std::uint64_t>(d) * d);  // d*d > c ends the search
        const bool past = greater(dd, c);
        drop(dd);
        if (past) break;
        std::uint32_t rem;
        drop(div_small(c, d, &rem));
        if (rem == 0) {
          is_prime = false;
          break;
        }
      }
      found += is_prime;
    }
    drop(one);
    return c;
  }

 private:
  void replace(Num *&slot, Num *v) {
    drop(slot);
    slot = v;
  }
  static bool greater(const Num *a, const Num *b) {
    if (a->len != b->len) return a->len > b->len;
    for (std::uint32_t i = a->len; i-- > 0;)
      if (a->limb[i] != b->limb[i]) return a->limb[i] > b->limb[i];
    return false;
  }
  Memory &m_;
};

// ---------------------------------------------------------------------------
// Requests.
struct Header {
  const char *key, *value;
};

std::string make_request(wl::Rng &rng, long id) {
  std::string r = "POST /bc/" + std::to_string(id) + " HTTP/1.0\r\n";
  static const char *const agents[] = {"lynx/2.8", "wget/1.21", "curl/8.4", "mozilla/5.0"};
  r += "Host: calc.example\r\nUser-Agent: ";
  r += agents[rng.below(4)];
  r += "\r\nAccept: */*\r\n";
  for (int i = 0, n = rng.range(0, 6); i < n; ++i) r += "X-Trace-" + std::to_string(i) + ": " + std::to_string(rng.next() % 100000) + "\r\n";
  r += "\r\n";
  switch (rng.below(5)) {
    case 0: r += "fact " + std::to_string(rng.range(500, 2500)); break;
    case 1: r += "fib " + std::to_string(rng.range(2000, 10000)); break;
    case 2: r += "pow " + std::to_string(rng.range(2, 99)) + " " + std::to_string(rng.range(2000, 8000)); break;
    case 3: r += "harmonic " + std::to_string(rng.range(500, 3000)) + " " + std::to_string(rng.range(200, 1000)); break;
    default: r += "prime " + std::to_string(rng.range(500, 2000));
  }
  return r;
}

// Handles one request in the request's memory; returns the response text.
std::string handle(Memory &m, const std::string &raw) {
  const char *p = raw.c_str();
  auto line_end = [](const char *s) { return std::strstr(s, "\r\n"); };
  // request line
  const char *eol = line_end(p);
  const char *sp1 = static_cast<const char *>(std::memchr(p, ' ', static_cast<std::size_t>(eol - p)));
  const char *sp2 = static_cast<const char *>(std::memchr(sp1 + 1, ' ', static_cast<std::size_t>(eol - sp1 - 1)));
  const char *method = pstrndup(m, p, static_cast<std::size_t>(sp1 - p));
  const char *uri = pstrndup(m, sp1 + 1, static_cast<std::size_t>(sp2 - sp1 - 1));
  p = eol + 2;
  // headers into a table that grows by copying (apr_table style)
  std::size_t cap = 2, n = 0;
  auto *table = static_cast<Header *>(m.alloc(cap * sizeof(Header)));
  while ((eol = line_end(p)) != p) {
    const char *colon = static_cast<const char *>(std::memchr(p, ':', static_cast<std::size_t>(eol - p)));
    if (n == cap) {
      auto *bigger = static_cast<Header *>(m.alloc(2 * cap * sizeof(Header)));
      std::memcpy(bigger, table, n * sizeof(Header));
      m.free(table);
      table = bigger;
      cap *= 2;
    }
    table[n].key = pstrndup(m, p, static_cast<std::size_t>(colon - p));
    table[n].value = pstrndup(m, colon + 2, static_cast<std::size_t>(eol - colon - 2));
    ++n;
    p = eol + 2;
  }
  p += 2;  // the body: one bc command
  char cmd[16] = {};
  unsigned a = 0, b = 0;
  std::sscanf(p, "%15s %u %u", cmd, &a, &b);

  Calc bc(m);
  Num *result;
  if (!std::strcmp(cmd, "fact")) result = bc.factorial(a);
  else if (!std::strcmp(cmd, "fib")) result = bc.fibonacci(a);
  else if (!std::strcmp(cmd, "pow")) result = bc.power(a, b);
  else if (!std::strcmp(cmd, "harmonic")) result = bc.harmonic(a, b);
  else result = bc.prime(a);
  char *digits = bc.text(result);
  bc.drop(result);

  const char *agent = "";
  for (std::size_t i = 0; i < n; ++i)
    if (!std::strcmp(table[i].key, "User-Agent")) agent = table[i].value;
  std::string response = "HTTP/1.0 200 OK\r\nX-Method: ";
  response += method;
  response += "\r\nX-Uri: ";
  response += uri;
  response += "\r\nX-Agent: ";
  response += agent;
  response += "\r\nX-Headers: " + std::to_string(n) + "\r\nContent-Length: " + std::to_string(std::strlen(digits)) +
              "\r\n\r\n";
  response += digits;
  return response;
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv, "web server with per-request pools and a bc module (Apache + bc, reaps §7.5)",
      wl::kBasicAllocs | wl::alloc_bit(wl::Alloc::Emulator) | wl::kRegionLikeAllocs);
  const long requests = wl::scaled(opt, 800, 5);

  Memory mem(opt.alloc);
  // server-lifetime configuration, allocated once
  for (int i = 0; i < 64; ++i) std::snprintf(static_cast<char *>(mem.server_alloc(48)), 48, "conf-%d", i);

  wl::Rng rng(1000);
  wl::Checksum sum;
  std::uint64_t bytes = 0;
  for (long r = 0; r < requests; ++r) {
    const std::string raw = make_request(rng, r);
    mem.begin_request();
    const std::string response = handle(mem, raw);
    mem.end_request();
    sum.add_bytes(response.data(), response.size());
    bytes += response.size();
  }
  std::printf("requests %ld\nresponse_bytes %" PRIu64 "\n", requests, bytes);
  std::fprintf(stderr, "allocations %" PRIu64 " (%s)\n", mem.allocs(), wl::alloc_name(opt.alloc));
  wl::print_footprint(mem.peak_footprint());
  wl::print_checksum(sum.value());
  return 0;
}

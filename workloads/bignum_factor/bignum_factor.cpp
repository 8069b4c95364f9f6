// bignum_factor — continued-fraction factoring with arbitrary-precision
// integers, the pattern of the cfrac benchmark (a general-purpose program in
// the allocator literature): every arithmetic result is a fresh heap object
// sized to its digits, most die within a step, a few (the relations kept for
// the linear algebra) live to the end. Sizes vary with the numbers' lengths,
// so the heap sees many small size classes at once.
//
// The method (Morrison and Brillhart's CFRAC): expand sqrt(kN) as a continued
// fraction; each step gives A^2 = (-1)^n Q (mod N) with Q < 2 sqrt(kN); keep
// the steps whose Q splits over a small factor base; find a subset whose
// exponents are all even (Gaussian elimination over GF(2)); then X^2 = Y^2
// (mod N) and gcd(X - Y, N) is a factor. The numbers to factor are products
// of two random primes, from a fixed seed.
//
// Variants: malloc (and custom, the same: the program has no allocator of its
// own) and reap (every number in one reap, freed one by one with reap_free).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "workload.hpp"

namespace {

// ---- where numbers live ------------------------------------------------------

struct Heap {
  wl::Alloc how = wl::Alloc::Malloc;
  reap_t *reap = nullptr;
  long allocs = 0;

  void *get(std::size_t n) {
    ++allocs;
    return wl::check(how == wl::Alloc::Reap ? reap_malloc(reap, n) : std::malloc(n), "bignum");
  }
  void put(void *p) {
    if (how == wl::Alloc::Reap) reap_free(reap, p);
    else std::free(p);
  }
};

Heap heap;

// ---- natural numbers: 32-bit digits, least significant first, no leading zeros

struct Num {
  std::uint32_t len;   // digits in use (0 for zero)
  std::uint32_t room;  // digits allocated
  std::uint32_t d[1];
};

Num *alloc_num(std::uint32_t room) {
  if (room == 0) room = 1;
  auto *n = static_cast<Num *>(heap.get(offsetof(Num, d) + sizeof(std::uint32_t) * room));
  n->len = 0;
  n->room = room;
  return n;
}

void drop(Num *n) {
  if (n) heap.put(n);
}

void trim(Num *n) {
  while (n->len && n->d[n->len - 1] == 0) --n->len;
}

Num *from_u64(std::uint64_t v) {
  Num *n = alloc_num(2);
  n->d[0] = static_cast<std::uint32_t>(v);
  n->d[1] = static_cast<std::uint32_t>(v >> 32);
  n->len = 2;
  trim(n);
  return n;
}

Num *copy(const Num *a) {
  Num *n = alloc_num(a->len);
  std::memcpy(n->d, a->d, sizeof(std::uint32_t) * a->len);
  n->len = a->len;
  return n;
}

bool is_zero(const Num *a) { return a->len == 0; }
bool is_one(const Num *a) { return a->len == 1 && a->d[0] == 1; }

int cmp(const Num *a, const Num *b) {
  if (a->len != b->len) return a->len < b->len ? -1 : 1;
  for (std::uint32_t i = a->len; i-- > 0;)
    if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
  return 0;
}

Num *add(const Num *a, const Num *b) {
  if (a->len < b->len) std::swap(a, b);
  Num *r = alloc_num(a->len + 1);
  std::uint64_t carry = 0;
  for (std::uint32_t i = 0; i < a->len; ++i) {
    carry += a->d[i];
    if (i < b->len) carry += b->d[i];
    r->d[i] = static_cast<std::uint32_t>(carry);
    carry >>= 32;
  }
  r->d[a->len] = static_cast<std::uint32_t>(carry);
  r->len = a->len + 1;
  trim(r);
  return r;
}

// a - b, a >= b
Num *sub(const Num *a, const Num *b) {
  Num *r = alloc_num(a->len);
  std::int64_t borrow = 0;
  for (std::uint32_t i = 0; i < a->len; ++i) {
    std::int64_t t = static_cast<std::int64_t>(a->d[i]) - borrow - (i < b->len ? b->d[i] : 0);
    borrow = t < 0;
    r->d[i] = static_cast<std::uint32_t>(t + (borrow << 32));
  }
  r->len = a->len;
  trim(r);
  return r;
}

Num *mul(const Num *a, const Num *b) {
  Num *r = alloc_num(a->len + b->len);
  std::memset(r->d, 0, sizeof(std::uint32_t) * (a->len + b->len));
  for (std::uint32_t i = 0; i < a->len; ++i) {
    std::uint64_t carry = 0;
    for (std::uint32_t j = 0; j < b->len; ++j) {
      carry += static_cast<std::uint64_t>(a->d[i]) * b->d[j] + r->d[i + j];
      r->d[i + j] = static_cast<std::uint32_t>(carry);
      carry >>= 32;
    }
    r->d[i + b->len] = static_cast<std::uint32_t>(carry);
  }
  r->len = a->len + b->len;
  trim(r);
  return r;
}

std::uint32_t mod_small(const Num *a, std::uint32_t m) {
  std::uint64_t r = 0;
  for (std::uint32_t i = a->len; i-- > 0;) r = ((r << 32) | a->d[i]) % m;
  return static_cast<std::uint32_t>(r);
}

Num *div_small(const Num *a, std::uint32_t m) {
  Num *q = alloc_num(a->len);
  std::uint64_t r = 0;
  for (std::uint32_t i = a->len; i-- > 0;) {
    const std::uint64_t cur = (r << 32) | a->d[i];
    q->d[i] = static_cast<std::uint32_t>(cur / m);
    r = cur % m;
  }
  q->len = a->len;
  trim(q);
  return q;
}

// a = q b + r (b != 0): long division with normalised divisor (Knuth's
// algorithm D); the shifted copies are heap numbers too, as in cfrac.
void divmod(const Num *a, const Num *b, Num **q, Num **r) {
  if (cmp(a, b) < 0) {
    if (q) *q = from_u64(0);
    if (r) *r = copy(a);
    return;
  }
  if (b->len == 1) {
    if (r) *r = from_u64(mod_small(a, b->d[0]));
    if (q) *q = div_small(a, b->d[0]);
    return;
  }
  const std::uint32_t n = b->len, m = a->len - b->len;
  const int s = __builtin_clz(b->d[n - 1]);
  Num *vn = alloc_num(n);
  Num *un = alloc_num(a->len + 1);
  for (std::uint32_t i = n - 1; i > 0; --i)
    vn->d[i] = (b->d[i] << s) | (s ? static_cast<std::uint32_t>(static_cast<std::uint64_t>(b->d[i - 1]) >> (32 - s)) : 0);
  vn->d[0] = b->d[0] << s;
  un->d[a->len] = s ? static_cast<std::uint32_t>(static_cast<std::uint64_t>(a->d[a->len - 1]) >> (32 - s)) : 0;
  for (std::uint32_t i = a->len - 1; i > 0; --i)
    un->d[i] = (a->d[i] << s) | (s ? static_cast<std::uint32_t>(static_cast<std::uint64_t>(a->d[i - 1]) >> (32 - s)) : 0);
  un->d[0] = a->d[0] << s;
  Num *qq = alloc_num(m + 1);
  const std::uint64_t base = 1ull << 32;
  for (std::uint32_t j = m + 1; j-- > 0;) {
    const std::uint64_t num = (static_cast<std::uint64_t>(un->d[j + n]) << 32) | un->d[j + n - 1];
    std::uint64_t qhat = num / vn->d[n - 1];
    std::uint64_t rhat = num % vn->d[n - 1];
    while (qhat >= base || qhat * vn->d[n - 2] > ((rhat << 32) | un->d[j + n - 2])) {
      --qhat;
      rhat += vn->d[n - 1];
      if (rhat >= base) break;
    }
    std::int64_t k = 0, t = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t p = qhat * vn->d[i];
      t = static_cast<std::int64_t>(un->d[i + j]) - k - static_cast<std::int64_t>(p & 0xffffffffull);
      un->d[i + j] = static_cast<std::uint32_t>(t);
      k = static_cast<std::int64_t>(p >> 32) - (t >> 32);
    }
    t = static_cast<std::int64_t>(un->d[j + n]) - k;
    un->d[j + n] = static_cast<std::uint32_t>(t);
    if (t < 0) {  // qhat was one too big: add the divisor back
      --qhat;
      std::uint64_t c = 0;
      for (std::uint32_t i = 0; i < n; ++i) {
        c += static_cast<std::uint64_t>(un->d[i + j]) + vn->d[i];
        un->d[i + j] = static_cast<std::uint32_t>(c);
        c >>= 32;
      }
      un->d[j + n] += static_cast<std::uint32_t>(c);
    }
    qq->d[j] = static_cast<std::uint32_t>(qhat);
  }
  qq->len = m + 1;
  trim(qq);
  if (r) {
    Num *rr = alloc_num(n);
    for (std::uint32_t i = 0; i < n; ++i)
      rr->d[i] = (un->d[i] >> s) |
                 (s ? static_cast<std::uint32_t>(static_cast<std::uint64_t>(un->d[i + 1]) << (32 - s)) : 0);
    rr->len = n;
    trim(rr);
    *r = rr;
  }
  if (q) *q = qq;
  else drop(qq);
  drop(un);
  drop(vn);
}

Num *quo(const Num *a, const Num *b) {
  Num *q;
  divmod(a, b, &q, nullptr);
  return q;
}

Num *rem(const Num *a, const Num *b) {
  Num *r;
  divmod(a, b, nullptr, &r);
  return r;
}

// (a * b) mod m
Num *mulmod(const Num *a, const Num *b, const Num *m) {
  Num *p = mul(a, b);
  Num *r = rem(p, m);
  drop(p);
  return r;
}

int bits(const Num *a) { return a->len ? static_cast<int>(32 * a->len) - __builtin_clz(a->d[a->len - 1]) : 0; }

// floor(sqrt(a)) by Newton's iteration from a power of two above the root
Num *isqrt(const Num *a) {
  if (is_zero(a)) return from_u64(0);
  const int e = (bits(a) + 1) / 2;
  Num *x = alloc_num(static_cast<std::uint32_t>(e / 32 + 1));
  std::memset(x->d, 0, sizeof(std::uint32_t) * x->room);
  x->d[e / 32] = 1u << (e % 32);
  x->len = x->room;
  trim(x);
  for (;;) {
    Num *t = quo(a, x);
    Num *s = add(x, t);
    Num *y = div_small(s, 2);
    drop(t);
    drop(s);
    if (cmp(y, x) >= 0) {
      drop(y);
      return x;
    }
    drop(x);
    x = y;
  }
}

Num *gcd(const Num *a, const Num *b) {
  Num *x = copy(a), *y = copy(b);
  while (!is_zero(y)) {
    Num *r = rem(x, y);
    drop(x);
    x = y;
    y = r;
  }
  drop(y);
  return x;
}

void fold(wl::Checksum &c, const Num *a) {
  c.add(a->len);
  for (std::uint32_t i = 0; i < a->len; ++i) c.add(a->d[i]);
}

// ---- the numbers to factor ---------------------------------------------------

std::uint64_t mulmod64(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b % m);
}

std::uint64_t powmod64(std::uint64_t b, std::uint64_t e, std::uint64_t m) {
  std::uint64_t r = 1 % m;
  for (b %= m; e; e >>= 1, b = mulmod64(b, b, m))
    if (e & 1) r = mulmod64(r, b, m);
  return r;
}

bool is_prime64(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t p : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull})
    if (n % p == 0) return n == p;
  std::uint64_t d = n - 1;
  int s = 0;
  while ((d & 1) == 0) d >>= 1, ++s;
  for (std::uint64_t a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    std::uint64_t x = powmod64(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool comp = true;
    for (int i = 1; i < s && comp; ++i) {
      x = mulmod64(x, x, n);
      if (x == n - 1) comp = false;
    }
    if (comp) return false;
  }
  return true;
}

std::uint64_t random_prime(wl::Rng &rng, int nbits) {
  for (;;) {
    std::uint64_t c = (rng.next() >> (64 - nbits)) | (1ull << (nbits - 1)) | 1;
    if (is_prime64(c)) return c;
  }
}

// ---- CFRAC ------------------------------------------------------------------

struct Relation {
  Num *a;                               // A_{n-1} mod N
  std::vector<std::uint16_t> exponent;  // per factor-base entry; entry 0 is the sign (-1)
};

std::vector<std::uint32_t> factor_base(const Num *kn, int size) {
  std::vector<std::uint32_t> base{2};
  for (std::uint32_t p = 3; static_cast<int>(base.size()) < size; p += 2) {
    bool prime = true;
    for (std::uint32_t q = 3; q * q <= p && prime; q += 2) prime = p % q != 0;
    if (!prime) continue;
    const std::uint32_t r = mod_small(kn, p);
    if (r == 0 || powmod64(r, (p - 1) / 2, p) == 1) base.push_back(p);  // kN is a square mod p
  }
  return base;
}

struct Outcome {
  Num *factor = nullptr;  // a proper factor, or null
  long steps = 0;
  long relations = 0;
};

// Tries to split n with multiplier k.
Outcome cfrac(const Num *n, std::uint32_t k, wl::Checksum &sum) {
  Outcome out;
  Num *kbig = from_u64(k);
  Num *kn = mul(n, kbig);
  drop(kbig);
  const int nb = bits(n);
  const int base_size = 30 + 2 * nb;
  const std::vector<std::uint32_t> base = factor_base(kn, base_size);
  const std::size_t cols = base.size() + 1;  // + the sign
  const std::size_t want = cols + 8;
  std::vector<Relation> rels;

  Num *g = isqrt(kn);
  Num *P = from_u64(0), *Q = from_u64(1), *a = copy(g);
  Num *A2 = from_u64(0), *A1 = from_u64(1);  // A_{n-2}, A_{n-1}
  Num *A = rem(g, n);                         // A_0
  drop(A2);
  A2 = A1;
  A1 = A;
  const long max_steps = 400000;
  for (long step = 1; step <= max_steps && rels.size() < want; ++step) {
    // P' = a Q - P;  Q' = (kN - P'^2) / Q;  a' = (g + P') / Q'
    Num *aq = mul(a, Q);
    Num *p1 = sub(aq, P);
    drop(aq);
    Num *pp = mul(p1, p1);
    Num *diff = sub(kn, pp);
    drop(pp);
    Num *q1 = quo(diff, Q);
    drop(diff);
    drop(Q);
    drop(P);
    P = p1;
    Q = q1;
    ++out.steps;
    if (is_zero(Q)) break;  // kN is a square
    // A_{n-1}^2 = (-1)^n Q_n (mod N): does Q_n split over the base?
    std::vector<std::uint16_t> e(cols, 0);
    e[0] = static_cast<std::uint16_t>(step & 1);
    Num *rest = copy(Q);
    for (std::size_t i = 0; i < base.size() && !is_one(rest); ++i) {
      while (mod_small(rest, base[i]) == 0) {
        Num *t = div_small(rest, base[i]);
        drop(rest);
        rest = t;
        ++e[i + 1];
      }
    }
    if (is_one(rest)) rels.push_back(Relation{copy(A1), std::move(e)});
    drop(rest);
    Num *gp = add(g, P);
    Num *a1 = quo(gp, Q);
    drop(gp);
    drop(a);
    a = a1;
    // A_n = a_n A_{n-1} + A_{n-2} (mod N)
    Num *t = mul(a, A1);
    Num *u = add(t, A2);
    drop(t);
    Num *An = rem(u, n);
    drop(u);
    drop(A2);
    A2 = A1;
    A1 = An;
    if (is_one(Q) && step > 1 && (step & 1) == 0) break;  // end of the period: nothing new follows
  }
  drop(P), drop(Q), drop(a), drop(A1), drop(A2), drop(g);
  out.relations = static_cast<long>(rels.size());

  // Gaussian elimination over GF(2); each row remembers which relations it sums
  const std::size_t m = rels.size(), words = (cols + 63) / 64, hw = (m + 63) / 64;
  std::vector<std::vector<std::uint64_t>> row(m, std::vector<std::uint64_t>(words, 0)),
      hist(m, std::vector<std::uint64_t>(hw, 0));
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t c = 0; c < cols; ++c)
      if (rels[i].exponent[c] & 1) row[i][c / 64] |= 1ull << (c % 64);
    hist[i][i / 64] |= 1ull << (i % 64);
  }
  std::vector<bool> used(m, false);
  for (std::size_t c = 0; c < cols; ++c) {
    std::size_t piv = m;
    for (std::size_t i = 0; i < m && piv == m; ++i)
      if (!used[i] && (row[i][c / 64] >> (c % 64) & 1)) piv = i;
    if (piv == m) continue;
    used[piv] = true;
    for (std::size_t i = 0; i < m; ++i)
      if (i != piv && (row[i][c / 64] >> (c % 64) & 1)) {
        for (std::size_t w = 0; w < words; ++w) row[i][w] ^= row[piv][w];
        for (std::size_t w = 0; w < hw; ++w) hist[i][w] ^= hist[piv][w];
      }
  }
  for (std::size_t i = 0; i < m && !out.factor; ++i) {
    if (used[i]) continue;  // a pivot row is never zero
    // the relations in hist[i] multiply to a square: X^2 = Y^2 (mod N)
    Num *x = from_u64(1);
    std::vector<std::uint32_t> total(cols, 0);
    for (std::size_t j = 0; j < m; ++j)
      if (hist[i][j / 64] >> (j % 64) & 1) {
        Num *t = mulmod(x, rels[j].a, n);
        drop(x);
        x = t;
        for (std::size_t c = 0; c < cols; ++c) total[c] += rels[j].exponent[c];
      }
    Num *y = from_u64(1);
    for (std::size_t c = 1; c < cols; ++c)
      for (std::uint32_t h = 0; h < total[c] / 2; ++h) {
        Num *p = from_u64(base[c - 1]);
        Num *t = mulmod(y, p, n);
        drop(p);
        drop(y);
        y = t;
      }
    // gcd(X - Y mod N, N)
    Num *xn = add(x, n);
    Num *d = sub(xn, y);
    Num *dm = rem(d, n);
    Num *f = gcd(dm, n);
    if (!is_one(f) && cmp(f, n) != 0) out.factor = f;
    else drop(f);
    drop(xn), drop(d), drop(dm), drop(x), drop(y);
  }
  for (Relation &r : rels) {
    fold(sum, r.a);
    drop(r.a);
  }
  drop(kn);
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt = wl::parse_options(
      argc, argv, "continued-fraction factoring with bignums: many short-lived numbers of many small sizes (cfrac)");
  heap.how = opt.alloc == wl::Alloc::Reap ? wl::Alloc::Reap : wl::Alloc::Malloc;
  if (heap.how == wl::Alloc::Reap) heap.reap = wl::new_reap(nullptr);
  const long count = wl::scaled(opt, 64, 1);
  wl::Rng rng(1977);
  wl::Checksum sum;
  long factored = 0, steps = 0, relations = 0;
  for (long i = 0; i < count; ++i) {
    // semiprimes of 56..94 bits, a new length every number
    const int half = 28 + static_cast<int>(i % 17);
    const std::uint64_t p = random_prime(rng, half), q = random_prime(rng, half + static_cast<int>(i % 3));
    Num *np = from_u64(p), *nq = from_u64(q);
    Num *n = mul(np, nq);
    drop(np), drop(nq);
    Num *found = nullptr;
    for (std::uint32_t k : {1u, 3u, 5u, 7u, 11u, 13u}) {
      Outcome o = cfrac(n, k, sum);
      steps += o.steps;
      relations += o.relations;
      if (o.factor) {
        found = o.factor;
        break;
      }
    }
    if (found) {
      Num *other = quo(n, found);
      Num *back = mul(found, other);
      if (cmp(back, n) != 0) {
        std::fprintf(stderr, "bignum_factor: arithmetic error: the factor does not divide\n");
        return 1;
      }
      drop(back);
      const Num *lo = cmp(found, other) < 0 ? found : other;
      const Num *hi = lo == found ? other : found;
      fold(sum, lo);
      fold(sum, hi);
      ++factored;
      drop(other);
      drop(found);
    } else {
      fold(sum, n);  // not split: recorded as such
      sum.add(0);
    }
    drop(n);
  }
  std::printf("numbers %ld\nfactored %ld\ncf_steps %ld\nrelations %ld\n", count, factored, steps, relations);
  std::fprintf(stderr, "allocations %ld\n", heap.allocs);
  wl::print_checksum(sum.value());
  if (heap.reap) reap_destroy(heap.reap);
  return 0;
}

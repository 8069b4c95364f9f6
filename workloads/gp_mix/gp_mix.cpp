// gp_mix — a text-crunching program that uses malloc, realloc and free for
// objects of every size from 8 bytes to 64 KiB, with no custom allocator.
//
// Stands for the general-purpose benchmarks of the reaps paper (Table 3:
// espresso, 253.perlbmk and friends), which the study uses to compare
// general-purpose allocators: many small strings and records, arrays that
// grow by realloc, big buffers built by appending, and a working set that
// churns as old entries are evicted.
//
// The program reads generated documents, counts words in a chained hash table
// (each entry keeps its key and a realloc-grown list of positions), writes a
// report per document into a growing buffer, and evicts rare words. Like a
// perl script it also does the text work between allocations: every word is
// matched against a set of glob patterns (backtracking, as regular
// expressions are) and reduced to a stem by suffix rules, and the report
// tallies both — so allocation is a share of the run near 253.perlbmk's
// (the reaps paper's Table 3: 12.6%).
//
//   --alloc custom  plain malloc/realloc/free (the program has no allocator of
//                   its own)
//   --alloc malloc  the same
//   --alloc reap    one reap for everything: reap_malloc/reap_realloc/reap_free
#include "workload.hpp"

#include <string>
#include <vector>

namespace {

class Heap {
 public:
  explicit Heap(wl::Alloc mode) : reap_(mode == wl::Alloc::Reap ? wl::new_reap(nullptr) : nullptr) {}
  ~Heap() {
    if (reap_) reap_destroy(reap_);
  }
  void *malloc(std::size_t n) {
    ++calls_;
    return wl::check(reap_ ? reap_malloc(reap_, n) : std::malloc(n), "malloc");
  }
  void *realloc(void *p, std::size_t n) {
    ++calls_;
    return wl::check(reap_ ? reap_realloc(reap_, p, n) : std::realloc(p, n), "realloc");
  }
  void free(void *p) {
    if (reap_) reap_free(reap_, p);
    else std::free(p);
  }
  char *strndup(const char *s, std::size_t n) {
    char *d = static_cast<char *>(malloc(n + 1));
    std::memcpy(d, s, n);
    d[n] = '\0';
    return d;
  }
  std::uint64_t calls() const { return calls_; }

 private:
  reap_t *reap_;
  std::uint64_t calls_ = 0;
};

struct Entry {
  char *key;
  std::uint32_t len;
  std::uint32_t count;
  std::uint32_t *pos;  // positions of the word in the current run, grown by realloc
  std::uint32_t npos, cap;
  Entry *next;
};

class Table {
 public:
  explicit Table(Heap &h) : h_(h) { resize(64); }
  ~Table() {
    for (std::size_t i = 0; i < nbuckets_; ++i) {
      for (Entry *e = buckets_[i]; e;) {
        Entry *next = e->next;
        drop(e);
        e = next;
      }
    }
    h_.free(buckets_);
  }

  Entry *intern(const char *word, std::size_t len) {
    const std::uint64_t hv = hash(word, len);
    for (Entry *e = buckets_[hv & (nbuckets_ - 1)]; e; e = e->next)
      if (e->len == len && std::memcmp(e->key, word, len) == 0) return e;
    auto *e = static_cast<Entry *>(h_.malloc(sizeof(Entry)));
    *e = Entry{h_.strndup(word, len), static_cast<std::uint32_t>(len), 0, nullptr, 0, 0, nullptr};
    Entry *&head = buckets_[hv & (nbuckets_ - 1)];
    e->next = head;
    head = e;
    if (++size_ > 2 * nbuckets_) resize(nbuckets_ * 4);
    return e;
  }

  void note(Entry *e, std::uint32_t where) {
    ++e->count;
    if (e->npos == e->cap) {
      // positions lists top out at 16 Ki entries (64 KiB); older ones are dropped
      if (e->cap == 16384) {
        std::memmove(e->pos, e->pos + 8192, 8192 * sizeof(std::uint32_t));
        e->npos = 8192;
      } else {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->pos = static_cast<std::uint32_t *>(h_.realloc(e->pos, e->cap * sizeof(std::uint32_t)));
      }
    }
    e->pos[e->npos++] = where;
  }

  // Drops words seen fewer than `min` times; shrinks the lists of the others.
  std::size_t evict(std::uint32_t min) {
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < nbuckets_; ++i) {
      for (Entry **link = &buckets_[i]; Entry *e = *link;) {
        if (e->count < min) {
          *link = e->next;
          drop(e);
          --size_;
          ++dropped;
          continue;
        }
        e->count /= 2;
        if (e->cap > 64 && e->npos < e->cap / 4) {
          e->cap /= 2;
          e->pos = static_cast<std::uint32_t *>(h_.realloc(e->pos, e->cap * sizeof(std::uint32_t)));
        }
        link = &e->next;
      }
    }
    return dropped;
  }

  template <class F>
  void for_each(F &&f) const {
    for (std::size_t i = 0; i < nbuckets_; ++i)
      for (const Entry *e = buckets_[i]; e; e = e->next) f(e);
  }
  std::size_t size() const { return size_; }

 private:
  static std::uint64_t hash(const char *s, std::size_t n) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 0x100000001b3ull;
    return wl::mix(h);
  }
  void drop(Entry *e) {
    h_.free(e->key);
    h_.free(e->pos);
    h_.free(e);
  }
  void resize(std::size_t n) {
    auto **fresh = static_cast<Entry **>(h_.malloc(n * sizeof(Entry *)));
    std::memset(fresh, 0, n * sizeof(Entry *));
    for (std::size_t i = 0; i < nbuckets_; ++i)
      for (Entry *e = buckets_[i]; e;) {
        Entry *next = e->next;
        Entry *&head = fresh[hash(e->key, e->len) & (n - 1)];
        e->next = head;
        head = e;
        e = next;
      }
    h_.free(buckets_);
    buckets_ = fresh;
    nbuckets_ = n;
  }

  Heap &h_;
  Entry **buckets_ = nullptr;
  std::size_t nbuckets_ = 0, size_ = 0;
};

// A growing text buffer (perl's SV string), capped at 64 KiB.
class Buffer {
 public:
  explicit Buffer(Heap &h) : h_(h) {}
  ~Buffer() { h_.free(data_); }
  void append(const char *s, std::size_t n) {
    if (len_ + n > kMax) return;
    if (len_ + n > cap_) {
      while (cap_ < len_ + n) cap_ = cap_ ? cap_ * 2 : 16;
      data_ = static_cast<char *>(h_.realloc(data_, cap_));
    }
    std::memcpy(data_ + len_, s, n);
    len_ += n;
  }
  const char *data() const { return data_; }
  std::size_t size() const { return len_; }

 private:
  static constexpr std::size_t kMax = 65536;
  Heap &h_;
  char *data_ = nullptr;
  std::size_t len_ = 0, cap_ = 0;
};

// Glob patterns with * ? and [set], matched with backtracking.
bool glob(const char *p, const char *s) {
  for (;; ++p, ++s) {
    switch (*p) {
      case '\0': return *s == '\0';
      case '*':
        for (const char *t = s;; ++t) {
          if (glob(p + 1, t)) return true;
          if (!*t) return false;
        }
      case '?':
        if (!*s) return false;
        break;
      case '[': {
        if (!*s) return false;
        bool hit = false;
        ++p;
        for (; *p != ']'; ++p) hit |= *p == *s;
        if (!hit) return false;
        break;
      }
      default:
        if (*p != *s) return false;
    }
  }
}

const char *const kPatterns[] = {
    "*ing", "*ion", "*e[rd]", "*[aeiou][aeiou]*", "s*", "t*h*", "*[rst][rst]*", "?a*",
    "*o?e*", "[hnr]*[aeiou]", "*[dl]*[dl]*", "*in*e*", "a*", "*es", "*[aeiou]?[aeiou]?[aeiou]*", "??*??*",
};
constexpr int kNumPatterns = sizeof kPatterns / sizeof kPatterns[0];

// A suffix-stripping stemmer: the longest matching rule wins, and the stem
// must keep at least three letters.
std::size_t stem(const char *w, std::size_t n) {
  static const char *const kSuffixes[] = {"ations", "ation", "ness", "ment", "ing", "ers", "est",
                                          "ies", "ed", "er", "es", "ly", "s"};
  for (const char *suf : kSuffixes) {
    const std::size_t k = std::strlen(suf);
    if (n >= k + 3 && std::memcmp(w + n - k, suf, k) == 0) return n - k;
  }
  return n;
}

// A vocabulary with a skewed (Zipf-like) distribution of word frequencies.
class Words {
 public:
  Words(wl::Rng &rng, long size) : rng_(rng) {
    static const char letters[] = "etaoinshrdlucmfwypvbgkjqxz";
    for (long i = 0; i < size; ++i) {
      std::string w;
      const int len = 2 + static_cast<int>(rng_.below(6)) + static_cast<int>(rng_.below(12) == 0 ? rng_.below(20) : 0);
      for (int k = 0; k < len; ++k) w += letters[rng_.below(static_cast<std::uint32_t>(4 + k * 3 < 26 ? 4 + k * 3 : 26))];
      vocab_.push_back(std::move(w));
    }
  }
  const std::string &pick() {
    // cubing a uniform number skews towards the front of the vocabulary
    const double u = rng_.unit();
    return vocab_[static_cast<std::size_t>(u * u * u * static_cast<double>(vocab_.size()))];
  }

 private:
  wl::Rng &rng_;
  std::vector<std::string> vocab_;
};

}  // namespace

int main(int argc, char **argv) {
  const wl::Options opt =
      wl::parse_options(argc, argv, "word counting and reports with malloc/realloc/free (espresso, 253.perlbmk)",
                        wl::kBasicAllocs, true);
  const long documents = wl::scaled(opt, 800, 2);
  // the vocabulary: --live sizes it, and with it the table of words live at once
  const long vocabulary = wl::sized(opt, 30000, 100);

  Heap heap(opt.alloc);
  wl::Rng rng(253);
  Words words(rng, vocabulary);
  wl::Checksum sum;
  std::uint64_t evicted = 0, total_words = 0;
  std::string line;
  {
    Table table(heap);
    std::uint32_t position = 0;
    std::uint64_t matches[kNumPatterns] = {}, stems = 0;
    for (long d = 0; d < documents; ++d) {
      // read a document: lines of words, each word copied out as a token
      const int lines = 200 + static_cast<int>(rng.below(200));
      for (int l = 0; l < lines; ++l) {
        line.clear();
        for (int w = 0, n = 4 + static_cast<int>(rng.below(16)); w < n; ++w) {
          line += words.pick();
          line += ' ';
        }
        std::vector<char *> tokens;  // split: one small string per word
        for (std::size_t i = 0; i < line.size();) {
          const std::size_t j = line.find(' ', i);
          tokens.push_back(heap.strndup(line.data() + i, j - i));
          i = j + 1;
        }
        for (char *t : tokens) {
          const std::size_t len = std::strlen(t);
          for (int k = 0; k < kNumPatterns; ++k) matches[k] += glob(kPatterns[k], t);
          stems += stem(t, len);
          table.note(table.intern(t, len), position++);
          heap.free(t);
        }
        total_words += tokens.size();
      }
      // a report: the words seen most in this run, with their last positions
      Buffer report(heap);
      table.for_each([&](const Entry *e) {
        if (e->count < 40) return;
        char buf[64];
        report.append(e->key, e->len);
        const int n = std::snprintf(buf, sizeof buf, " %u @%u\n", e->count, e->pos[e->npos - 1]);
        report.append(buf, static_cast<std::size_t>(n));
      });
      for (int k = 0; k < kNumPatterns; ++k) {
        char buf[64];
        const int n = std::snprintf(buf, sizeof buf, "%s %llu\n", kPatterns[k],
                                    static_cast<unsigned long long>(matches[k]));
        report.append(buf, static_cast<std::size_t>(n));
      }
      sum.add_bytes(report.data(), report.size());
      sum.add(stems);
      sum.add(table.size());
      if (d % 4 == 3) evicted += table.evict(3);
    }
  }
  std::printf("documents %ld\nwords %" PRIu64 "\nevicted %" PRIu64 "\n", documents, total_words, evicted);
  std::fprintf(stderr, "allocator_calls %" PRIu64 " (%s)\n", heap.calls(), wl::alloc_name(opt.alloc));
  wl::print_checksum(sum.value());
  return 0;
}

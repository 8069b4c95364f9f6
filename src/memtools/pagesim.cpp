// alloclab-pagesim — page-level locality of a heap page trace (Vam §4.6).
//
//   alloclab-pagesim TRACE [--sizes N,N,...] [--fractions F,F,...]
//
// TRACE is the page trace written by the alloclab-mem tool: little-endian
// 64-bit words, each a page number, or (1<<63 | first page) followed by a
// page count when pages were discarded (madvise) or unmapped.
//
// LRU miss curve for every memory size at once (Mattson's stack algorithm):
// a reference's stack distance is the number of distinct pages referenced
// since the previous reference to the same page, itself included, counted
// with a Fenwick tree over reference times (O(n log n)); the times are
// renumbered whenever the tree fills, so memory grows with the number of
// resident pages, not with the trace (read in blocks, twice when sizes are
// given as fractions of the largest distance).  With m pages of
// memory, a reference misses iff its distance exceeds m.  The first
// reference to a page, and the first after it was discarded, is a fill (a
// zero page from the kernel, never a read from swap): it is counted apart and
// never a miss.  A discarded page leaves the LRU stack (the paper's
// placeholder: it frees its frame without being evicted).
//
// Swap prefetchability at chosen memory sizes: the misses at that size, in
// order, go through a buffer of the last 256 prefetched pages.  A miss on a
// buffered page is prefetchable and leaves the buffer; any other miss is
// non-prefetchable and prefetches the other 7 pages of its aligned group of
// 8 into the buffer (oldest dropped first when full).
//
// Output: one JSON object on stdout.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::uint64_t kDiscard = 1ULL << 63;
constexpr std::size_t kPrefetchBuffer = 256;
constexpr std::uint64_t kGroup = 8;

struct Fenwick {
  std::vector<std::int32_t> t;
  explicit Fenwick(std::size_t n = 0) : t(n + 1, 0) {}
  std::size_t size() const { return t.size() - 1; }
  void add(std::size_t i, std::int32_t v) {
    for (++i; i < t.size(); i += i & (~i + 1)) t[i] += v;
  }
  std::int64_t prefix(std::size_t i) const {  // sum over [0, i)
    std::int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += t[i];
    return s;
  }
};

std::vector<double> parse_list(const char *s) {
  std::vector<double> v;
  std::string cur;
  for (const char *p = s;; ++p) {
    if (*p == ',' || *p == '\0') {
      if (!cur.empty()) v.push_back(std::strtod(cur.c_str(), nullptr));
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return v;
}

// The trace, read in blocks: the whole of it never needs to be in memory.
class TraceReader {
 public:
  explicit TraceReader(const char *path) : f_(std::fopen(path, "rb")) {}
  ~TraceReader() {
    if (f_) std::fclose(f_);
  }
  bool ok() const { return f_ != nullptr; }
  bool next(std::uint64_t &w) {
    if (pos_ == len_) {
      len_ = std::fread(buf_, sizeof buf_[0], kBlock, f_);
      pos_ = 0;
      if (len_ == 0) return false;
    }
    w = buf_[pos_++];
    return true;
  }

 private:
  static constexpr std::size_t kBlock = 1 << 16;
  std::FILE *f_;
  std::uint64_t buf_[kBlock];
  std::size_t pos_ = 0, len_ = 0;
};

// Mattson's LRU stack distances, one reference at a time.  Times are
// renumbered when the Fenwick tree is full, so memory stays proportional to
// the number of distinct resident pages, not to the length of the trace.
class StackDistances {
 public:
  StackDistances() : fw_(kMinCapacity) {}

  // 0 for a fill, else the stack distance of this reference to page p.
  std::uint64_t reference(std::uint64_t p) {
    if (now_ == fw_.size()) renumber();
    std::uint64_t d = 0;
    auto it = last_.find(p);
    if (it == last_.end()) {
      last_.emplace(p, now_);
    } else {
      d = static_cast<std::uint64_t>(fw_.prefix(now_) - fw_.prefix(it->second + 1)) + 1;
      fw_.add(it->second, -1);
      it->second = now_;
    }
    fw_.add(now_, 1);
    ++now_;
    if (last_.size() > max_resident_) max_resident_ = last_.size();
    return d;
  }

  // Pages [first, first+count) were discarded: they leave the stack.
  void discard(std::uint64_t first, std::uint64_t count) {
    auto drop = [&](std::unordered_map<std::uint64_t, std::size_t>::iterator it) {
      fw_.add(it->second, -1);
      return last_.erase(it);
    };
    if (count < last_.size()) {
      for (std::uint64_t q = first; q < first + count; ++q) {
        auto it = last_.find(q);
        if (it != last_.end()) drop(it);
      }
    } else {
      for (auto it = last_.begin(); it != last_.end();)
        it = (it->first >= first && it->first - first < count) ? drop(it) : std::next(it);
    }
  }

  std::uint64_t max_resident() const { return max_resident_; }

 private:
  static constexpr std::size_t kMinCapacity = 1 << 16;

  void renumber() {
    std::vector<std::pair<std::size_t, std::uint64_t>> live;  // (time, page)
    live.reserve(last_.size());
    for (auto &kv : last_) live.emplace_back(kv.second, kv.first);
    std::sort(live.begin(), live.end());
    std::size_t cap = std::max<std::size_t>(kMinCapacity, 4 * live.size());
    fw_ = Fenwick(cap);
    for (std::size_t i = 0; i < live.size(); ++i) {
      last_[live[i].second] = i;
      fw_.add(i, 1);
    }
    now_ = live.size();
  }

  Fenwick fw_;
  std::unordered_map<std::uint64_t, std::size_t> last_;  // page -> time of its last reference
  std::size_t now_ = 0;
  std::uint64_t max_resident_ = 0;
};

// Runs the whole trace through the stack, calling on_ref(page, distance).
template <class F>
bool replay(const char *path, std::uint64_t &discards, StackDistances &sd, F on_ref) {
  TraceReader in(path);
  if (!in.ok()) return false;
  std::uint64_t w, count;
  discards = 0;
  while (in.next(w)) {
    if (w & kDiscard) {
      if (!in.next(count)) break;
      ++discards;
      sd.discard(w & ~kDiscard, count);
      continue;
    }
    on_ref(w, sd.reference(w));
  }
  return true;
}

// The prefetch buffer of Vam §4.6 at one memory size.
struct PrefetchSim {
  std::uint64_t memory = 0, misses = 0, prefetchable = 0, non_prefetchable = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> in_buf;  // page -> insertion number
  std::deque<std::pair<std::uint64_t, std::uint64_t>> fifo;
  std::uint64_t seq = 0;

  void insert(std::uint64_t q) {
    if (in_buf.count(q)) return;
    while (in_buf.size() >= kPrefetchBuffer && !fifo.empty()) {
      auto [page, s] = fifo.front();
      fifo.pop_front();
      auto it = in_buf.find(page);
      if (it != in_buf.end() && it->second == s) in_buf.erase(it);
    }
    in_buf[q] = ++seq;
    fifo.emplace_back(q, seq);
  }

  void reference(std::uint64_t p, std::uint64_t dist) {
    if (dist == 0 || dist <= memory) return;  // a fill, or a hit
    ++misses;
    auto it = in_buf.find(p);
    if (it != in_buf.end()) {
      ++prefetchable;
      in_buf.erase(it);
    } else {
      ++non_prefetchable;
      std::uint64_t g = p & ~(kGroup - 1);
      for (std::uint64_t q = g; q < g + kGroup; ++q)
        if (q != p) insert(q);
    }
  }
};

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: alloclab-pagesim TRACE [--sizes N,...] [--fractions F,...]\n");
    return 2;
  }
  std::vector<double> sizes, fractions;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--sizes")) sizes = parse_list(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--fractions")) fractions = parse_list(argv[i + 1]);
    else {
      std::fprintf(stderr, "alloclab-pagesim: unknown option %s\n", argv[i]);
      return 2;
    }
  }

  // Pass 1: the distance histogram (and the prefetch sizes given in pages).
  std::vector<PrefetchSim> sims(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) sims[i].memory = static_cast<std::uint64_t>(sizes[i]);
  std::vector<std::uint64_t> hist(1, 0);
  std::uint64_t refs = 0, fills = 0, reuses = 0, discards = 0, max_dist = 0;
  StackDistances sd;
  bool ok = replay(argv[1], discards, sd, [&](std::uint64_t p, std::uint64_t d) {
    ++refs;
    if (d == 0) {
      ++fills;
    } else {
      ++reuses;
      if (d >= hist.size()) hist.resize(d + 1, 0);
      ++hist[d];
      if (d > max_dist) max_dist = d;
    }
    for (auto &s : sims) s.reference(p, d);
  });
  if (!ok) {
    std::fprintf(stderr, "alloclab-pagesim: cannot open %s\n", argv[1]);
    return 2;
  }
  std::uint64_t max_resident = sd.max_resident();

  // Pass 2, only for sizes given as fractions of the largest distance.
  if (!fractions.empty()) {
    std::vector<PrefetchSim> more(fractions.size());
    for (std::size_t i = 0; i < fractions.size(); ++i)
      more[i].memory = static_cast<std::uint64_t>(fractions[i] * static_cast<double>(max_dist));
    StackDistances sd2;
    std::uint64_t discards2 = 0;
    replay(argv[1], discards2, sd2, [&](std::uint64_t p, std::uint64_t d) {
      for (auto &s : more) s.reference(p, d);
    });
    for (auto &s : more) sims.push_back(std::move(s));
  }

  std::printf("{\"references\": %llu, \"fills\": %llu, \"reuses\": %llu, \"discards\": %llu, "
              "\"max_distance\": %llu, \"max_resident_pages\": %llu,\n \"curve\": [",
              (unsigned long long)refs, (unsigned long long)fills, (unsigned long long)reuses,
              (unsigned long long)discards, (unsigned long long)max_dist,
              (unsigned long long)max_resident);
  // Points where the step function changes: (0, misses(0)) and (d, misses(d)).
  std::uint64_t remaining = reuses;
  std::printf("[0, %llu]", (unsigned long long)remaining);
  for (std::uint64_t d = 1; d <= max_dist; ++d) {
    if (!hist[d]) continue;
    remaining -= hist[d];
    std::printf(", [%llu, %llu]", (unsigned long long)d, (unsigned long long)remaining);
  }
  std::printf("],\n \"prefetch\": [");
  for (std::size_t i = 0; i < sims.size(); ++i) {
    const PrefetchSim &r = sims[i];
    std::printf("%s{\"memory_pages\": %llu, \"misses\": %llu, \"prefetchable\": %llu, "
                "\"non_prefetchable\": %llu}",
                i ? ", " : "", (unsigned long long)r.memory, (unsigned long long)r.misses,
                (unsigned long long)r.prefetchable, (unsigned long long)r.non_prefetchable);
  }
  std::printf("]}\n");
  return 0;
}

// The shared perft hash table (engine/perft.h's PerftTable): used by the counting cores of every
// CPU level (engine/perft_core.cc) and by the perft front end that owns it.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "engine/position.h"

namespace arbiter {

// Shared perft hash. Each entry is four words: check = lo ^ hi ^ count ^ depth, hi, count,
// depth. A hit needs the full 128-bit key (lo through the XOR, hi directly) and the depth, so
// a false hit needs a 2^-128 coincidence; a torn concurrent write breaks the XOR and reads as
// a miss. Two entries share a 64-byte bucket; the shallower one is replaced.
class PerftTable {
 public:
  // Zeroes the table on `threads` threads: the first touch of fresh memory (the kernel clearing
  // its pages) is the cost, ~0.3-2 s a GB depending on the machine, and it divides.
  explicit PerftTable(size_t mb, int threads = 1) {
    const size_t buckets = Buckets(mb);
    mask_ = buckets - 1;
    size_ = buckets * sizeof(Bucket);
    mem_ = static_cast<Bucket*>(std::aligned_alloc(2 << 20, std::max<size_t>(size_, 2 << 20)));
    if (!mem_) return;  // ok() is false
    madvise(mem_, size_, MADV_HUGEPAGE);
    Clear(threads);
  }
  ~PerftTable() { std::free(mem_); }
  // The entries a table of `mb` MB holds (a power of two: the most that fit; none for 0 MB).
  static uint64_t Entries(size_t mb) { return mb == 0 ? 0 : Buckets(mb) * 2; }
  bool ok() const { return mem_ != nullptr; }

  // Zeroes every entry on `threads` threads.
  void Clear(int threads) {
    char* bytes_at = reinterpret_cast<char*>(mem_);
    // Slices on 2 MB (huge page) boundaries; the last one ends at the end (a 1 MB table is
    // one slice).
    const size_t pages = std::max<size_t>(1, size_ >> 21);
    const size_t parts = std::min<size_t>(size_t(std::max(1, threads)), pages);
    auto zero = [&](size_t t) {
      const size_t begin = pages * t / parts << 21;
      const size_t end = t + 1 == parts ? size_ : pages * (t + 1) / parts << 21;
      std::memset(bytes_at + begin, 0, end - begin);
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < parts; ++t) pool.emplace_back(zero, t);
    zero(0);
    for (std::thread& th : pool) th.join();
  }
  PerftTable(const PerftTable&) = delete;
  PerftTable& operator=(const PerftTable&) = delete;

  void Prefetch(const Key128& k) const { __builtin_prefetch(&mem_[k.lo & mask_]); }

  bool Probe(const Key128& k, int depth, uint64_t& count) const {
    const Bucket& b = mem_[k.lo & mask_];
    for (int i = 0; i < 2; ++i) {
      uint64_t check = b.w[4 * i].load(std::memory_order_relaxed);
      uint64_t hi = b.w[4 * i + 1].load(std::memory_order_relaxed);
      uint64_t c = b.w[4 * i + 2].load(std::memory_order_relaxed);
      uint64_t d = b.w[4 * i + 3].load(std::memory_order_relaxed);
      if (hi == k.hi && d == uint64_t(depth) && (check ^ hi ^ c ^ d) == k.lo) {
        count = c;
        return true;
      }
    }
    return false;
  }

  void Store(const Key128& k, int depth, uint64_t count) {
    Bucket& b = mem_[k.lo & mask_];
    uint64_t d0 = b.w[3].load(std::memory_order_relaxed);
    uint64_t d1 = b.w[7].load(std::memory_order_relaxed);
    int slot = d1 < d0 ? 1 : 0;
    b.w[4 * slot].store(k.lo ^ k.hi ^ count ^ uint64_t(depth), std::memory_order_relaxed);
    b.w[4 * slot + 1].store(k.hi, std::memory_order_relaxed);
    b.w[4 * slot + 2].store(count, std::memory_order_relaxed);
    b.w[4 * slot + 3].store(uint64_t(depth), std::memory_order_relaxed);
  }

  // The words of the key's bucket (two entries of check, hi, count, depth), for tests that tear
  // an entry.
  std::atomic<uint64_t>* BucketWordsForTest(const Key128& k) { return mem_[k.lo & mask_].w; }

 private:
  struct alignas(64) Bucket {
    std::atomic<uint64_t> w[8];
  };
  // The most buckets, a power of two, that fit in `mb` MB (at least one).
  static size_t Buckets(size_t mb) {
    size_t buckets = 1;
    while (buckets * 2 * sizeof(Bucket) <= mb << 20) buckets *= 2;
    return buckets;
  }
  Bucket* mem_ = nullptr;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace arbiter

// Transposition table of the builtin engine: one 16-byte entry per slot, indexed by the low half
// of the 128-bit key and verified with the high half. See
// https://www.chessprogramming.org/Transposition_Table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "engine/position.h"

namespace arbiter::search {

enum Bound : uint8_t { kBoundNone = 0, kBoundUpper = 1, kBoundLower = 2, kBoundExact = 3 };

struct TtEntry {
  uint64_t check = 0;
  int16_t score = 0;
  int16_t eval = 0;
  uint16_t move = 0;
  uint8_t depth = 0;
  uint8_t gen_bound = 0;  // generation << 2 | bound
  Bound bound() const { return Bound(gen_bound & 3); }
  uint8_t generation() const { return gen_bound >> 2; }
};
static_assert(sizeof(TtEntry) == 16);

class TranspositionTable {
 public:
  explicit TranspositionTable(size_t mb) { Resize(mb); }

  // Reallocates (and clears) the table to the largest power-of-two entry count within `mb`.
  void Resize(size_t mb) {
    size_t count = 1;
    while (count * 2 * sizeof(TtEntry) <= std::max<size_t>(mb, 1) << 20) count *= 2;
    entries_ = std::make_unique<TtEntry[]>(count);
    mask_ = count - 1;
  }
  void Clear() { std::fill(entries_.get(), entries_.get() + mask_ + 1, TtEntry{}); }
  void NewSearch() { generation_ = (generation_ + 1) & 63; }

  // The entry for `key` if stored, else nullptr.
  const TtEntry* Probe(const Key128& key) const {
    const TtEntry& e = entries_[key.lo & mask_];
    return e.check == key.hi && e.bound() != kBoundNone ? &e : nullptr;
  }

  // Stores unless a deeper entry of the same position from this search would be lost.
  void Store(const Key128& key, int depth, int score, int eval, Bound bound, Move move) {
    TtEntry& e = entries_[key.lo & mask_];
    const bool same = e.check == key.hi;
    if (same && move.IsNone()) move = Move(e.move);
    if (!same || bound == kBoundExact || depth + 2 >= e.depth || e.generation() != generation_) {
      e.check = key.hi;
      e.score = int16_t(score);
      e.eval = int16_t(eval);
      e.move = move.Raw();
      e.depth = uint8_t(std::max(depth, 0));
      e.gen_bound = uint8_t(generation_ << 2 | bound);
    }
  }

  // Per mille of a sample of entries written during the current search.
  int Hashfull() const {
    const size_t n = std::min<size_t>(1000, mask_ + 1);
    size_t used = 0;
    for (size_t i = 0; i < n; ++i)
      used += entries_[i].bound() != kBoundNone && entries_[i].generation() == generation_;
    return int(used * 1000 / n);
  }

 private:
  std::unique_ptr<TtEntry[]> entries_;
  size_t mask_ = 0;
  uint8_t generation_ = 0;
};

}  // namespace arbiter::search

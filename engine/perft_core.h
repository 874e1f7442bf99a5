// One compiled copy of the perft counting core (engine/perft_core.cc), for one x86-64 level.
#pragma once

#include <cstdint>

#include "engine/position.h"

namespace arbiter {

class PerftTable;

struct PerftPath {
  // "v2": magic sliders (x86-64-v2: POPCNT); "v3": PEXT sliders (x86-64-v3: BMI2, AVX2);
  // "v4": PEXT sliders and the AVX-512 piece counter (x86-64-v4 with VPOPCNTDQ, Ice Lake on).
  const char* name;
  bool pext;
  bool avx512;
  // Counts the leaves below `pos` at `depth` (>= 0), with the table when not null; own_entry
  // false: pos's own count is neither looked up nor stored (only its subtree's are).
  uint64_t (*count)(Position& pos, int depth, PerftTable* table, bool own_entry);
};

// The copies this binary may carry (engine/perft_path.cc says which it does).
extern const PerftPath kPerftPathV2, kPerftPathV3, kPerftPathV4, kPerftPathSingle;

}  // namespace arbiter

// Time management of the builtin engine: turns a UCI `go` command into a soft limit (do not
// start another iteration after it) and a hard limit (abort the search at it).
// See https://www.chessprogramming.org/Time_Management.
#pragma once

#include <cstdint>

#include "engine/types.h"

namespace arbiter::search {

// The limits of one `go` command, as parsed from UCI (times in milliseconds, -1 = not given).
struct GoLimits {
  int64_t time[2] = {-1, -1};  // wtime, btime
  int64_t inc[2] = {0, 0};     // winc, binc
  int movestogo = 0;
  int64_t movetime = -1;
  int depth = 0;       // 0 = no depth limit
  uint64_t nodes = 0;  // 0 = no node limit
  bool infinite = false;
  bool ponder = false;
};

// Milliseconds from the start of the search; -1 means no limit.
struct TimeBudget {
  int64_t soft_ms = -1;
  int64_t hard_ms = -1;
};

// Splits the clock of `us`: about remaining/moves_left + most of the increment, never more than
// the remaining time minus the move overhead (and at least 1 ms, so a move always comes back).
TimeBudget AllocateTime(const GoLimits& limits, Color us, int move_overhead_ms);

}  // namespace arbiter::search

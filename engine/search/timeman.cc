#include "engine/search/timeman.h"

#include <algorithm>

namespace arbiter::search {

TimeBudget AllocateTime(const GoLimits& limits, Color us, int move_overhead_ms) {
  TimeBudget budget;
  if (limits.infinite) return budget;
  const int64_t overhead = std::max(0, move_overhead_ms);
  if (limits.movetime >= 0) {
    const int64_t t = std::max<int64_t>(1, limits.movetime - overhead);
    budget.soft_ms = budget.hard_ms = t;
  }
  if (limits.time[us] >= 0) {
    const int64_t remaining = limits.time[us];
    const int64_t inc = std::max<int64_t>(0, limits.inc[us]);
    // What may be spent on this move without risking the flag.
    const int64_t usable = std::max<int64_t>(1, remaining - overhead);
    const int moves_left = limits.movestogo > 0 ? std::min(limits.movestogo, 40) : 26;
    int64_t soft = usable / moves_left + inc * 3 / 4;
    // Keep a reserve: never plan more than a share of what is left (all of it on the last move
    // of a period, which the next period's time follows).
    const int64_t cap_share = limits.movestogo == 1 ? usable * 8 / 10 : usable / 3;
    const int64_t hard = std::max<int64_t>(1, std::min(cap_share, soft * 4));
    soft = std::clamp<int64_t>(soft, 1, hard);
    if (budget.hard_ms < 0 || hard < budget.hard_ms) budget.hard_ms = hard;
    if (budget.soft_ms < 0 || soft < budget.soft_ms) budget.soft_ms = soft;
  }
  return budget;
}

}  // namespace arbiter::search

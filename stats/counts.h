// Match results as counts, always from the first engine's point of view.
//
//   Trinomial t{.losses = 10, .draws = 20, .wins = 12};        // one count per game result
//   Pentanomial p{{1, 10, 30, 12, 2}};                          // one count per game-pair score
#pragma once

#include <cstdint>

namespace arbiter::stats {

// Game counts: losses, draws and wins of the first engine.
struct Trinomial {
  uint64_t losses = 0, draws = 0, wins = 0;

  uint64_t Games() const { return losses + draws + wins; }
  // The same games from the second engine's point of view.
  Trinomial Reversed() const { return {.losses = wins, .draws = draws, .wins = losses}; }
  friend bool operator==(const Trinomial&, const Trinomial&) = default;
};

// Game-pair score counts (same opening, colours reversed): index 0..4 = pair score 0, 0.5, 1,
// 1.5, 2 of the first engine, worst to best (LL, LD, WL+DD, WD, WW).
struct Pentanomial {
  uint64_t counts[5] = {};

  uint64_t Pairs() const { return counts[0] + counts[1] + counts[2] + counts[3] + counts[4]; }
  uint64_t Games() const { return 2 * Pairs(); }
  // The same pairs from the second engine's point of view.
  Pentanomial Reversed() const { return {{counts[4], counts[3], counts[2], counts[1], counts[0]}}; }
  friend bool operator==(const Pentanomial&, const Pentanomial&) = default;
};

}  // namespace arbiter::stats

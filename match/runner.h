// The concurrent match runner: C slots, each with its own pair of engine processes, play game
// pairs (same opening, colours reversed) until the game count is reached or the SPRT decides.
// Results are counted from the first engine's point of view (trinomial and pentanomial).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "match/game.h"
#include "match/game_pgn.h"
#include "match/openings.h"
#include "stats/counts.h"
#include "stats/elo.h"
#include "stats/sprt.h"

namespace arbiter::match {

struct MatchOptions {
  EngineSpec engines[2];
  TimeControl tc;      // the match's; EngineSpec::tc overrides it per engine
  uint64_t games = 2;  // even; with an SPRT, the maximum (0 = until it decides)
  std::optional<stats::SprtParams> sprt;
  BookOptions book;
  bool chess960 = false;  // also set when the book needs it
  int concurrency = 1;
  bool affinity = false;  // pin slot i's engines to CPU i (mod the CPU count)
  std::string pgn_out;    // appended to; empty: no PGN
  PgnContext pgn;
  GameSettings settings;  // margin, grace, adjudication (tc filled in per game)
  EngineTimeouts timeouts;
  ProcessLimits limits;
  SandboxOptions sandbox;  // every engine process of the match runs in it
  int round_offset = 0;    // added to the PGN Round numbers (tournaments)
};

struct SideCounts {
  uint64_t time_losses = 0, disconnects = 0, stalls = 0, illegal_moves = 0;
};

struct MatchSummary {
  std::string names[2];
  stats::Trinomial trinomial;  // first engine's losses/draws/wins
  stats::Pentanomial pentanomial;
  stats::EloEstimate elo;  // from the pentanomial
  std::optional<stats::SprtResult> sprt;
  std::map<std::string, uint64_t> terminations;  // GameEndName -> games
  SideCounts faults[2];                          // per engine
  uint64_t games = 0, pairs = 0, moves = 0, aborted_games = 0;
  double seconds = 0;
  // Engine think time and arbiter overhead: (wall x slots - think) / moves, and arbiter CPU
  // (measured by the local runner only: a cluster run leaves it empty).
  double think_seconds = 0;
  double overhead_ms_per_move = 0, game_loop_overhead_ms_per_move = 0;
  std::optional<double> cpu_ms_per_move;
  uint64_t rss_kib = 0;  // arbiter's resident memory after the last pair
};

// Called after every finished pair with the summary so far (under the runner's lock).
using ProgressFn = std::function<void(const MatchSummary&)>;
// Called for every counted game with its 1-based round number (under the runner's lock).
using GameFn = std::function<void(uint64_t round, const GameRecord&)>;

absl::StatusOr<MatchSummary> RunMatch(const MatchOptions& options, const ProgressFn& progress = {},
                                      const GameFn& on_game = {});

// One-line progress ("Games 24/200  +8 =10 -6  Elo 29.0 +- 96.2  LLR 0.12 [-2.94, 2.94]").
std::string ProgressLine(const MatchSummary& s, uint64_t planned_games);
// The report lines after the statistics: W/D/L, terminations, faults per engine, speed.
std::string MatchDetails(const MatchSummary& s);

}  // namespace arbiter::match

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
#include "match/summary.h"
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
  // Told what may spoil the run without stopping it: more engine threads than CPUs.
  std::function<void(const std::string&)> warn;
};

// Called after every finished pair with the summary so far (under the runner's lock).
using ProgressFn = std::function<void(const MatchSummary&)>;
// Called for every counted game with its 1-based round number (under the runner's lock).
using GameFn = std::function<void(uint64_t round, const GameRecord&)>;

// FAILED_PRECONDITION naming the engine when a game could not be played (Unplayed: an engine
// could not be restarted or take its options, or exited before its first move): the match stops
// there, and that game is not counted.
absl::StatusOr<MatchSummary> RunMatch(const MatchOptions& options, const ProgressFn& progress = {},
                                      const GameFn& on_game = {});

// Several pairings played as one schedule, interleaved round by round: round r is the r-th
// game pair of every pairing in order, so that a run stopped early has played every pairing
// about equally often. Concurrency, affinity, PGN file, book, limits and sandbox come from
// `pairings[0]`; each pairing has its own engines, time controls and round offset (PGN Round:
// the game's 1-based number in the schedule plus that offset). No SPRT: every pairing plays its
// `games`. Each slot keeps one process per engine it has played, started on first use.
// `progress` and `on_game` also get the index of the pairing.
using ScheduleProgressFn = std::function<void(size_t pairing, const MatchSummary&)>;
using ScheduleGameFn = std::function<void(size_t pairing, uint64_t round, const GameRecord&)>;
absl::StatusOr<std::vector<MatchSummary>> RunSchedule(const std::vector<MatchOptions>& pairings,
                                                      const ScheduleProgressFn& progress = {},
                                                      const ScheduleGameFn& on_game = {});

}  // namespace arbiter::match

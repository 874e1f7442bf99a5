// The count of a match from the first engine's point of view, kept by the local runner and by
// the coordinator's match runs alike, its wire form (MatchResult) and the report's text.
//
//   MatchSummary s;
//   s.AddPair({GameCountOf(record0), GameCountOf(record1)});
//   v1::MatchResult r = ToMatchResult(s, sprt);
//   std::cout << FormatStatsReport(r.stats()) << MatchDetails(r);
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "match/game.h"
#include "proto/arbiter/v1/match.pb.h"
#include "stats/counts.h"
#include "stats/elo.h"
#include "stats/sprt.h"

namespace arbiter::match {

// One finished game as the count needs it (a local GameRecord, or a worker's ReportedGame).
struct GameCount {
  GameResult result = GameResult::kDraw;
  GameEnd end = GameEnd::kNormal;
  Color faulty = kWhite;  // the side at fault when IsFault(end)
  uint64_t engine_moves = 0;
  double think_seconds = 0, wall_seconds = 0;
};
GameCount GameCountOf(const GameRecord& record);

struct MatchSummary {
  std::string names[2];
  stats::Trinomial trinomial;  // first engine's losses/draws/wins
  stats::Pentanomial pentanomial;
  stats::EloEstimate elo;  // from the pentanomial
  std::optional<stats::SprtResult> sprt;
  std::map<std::string, uint64_t> terminations;  // GameEndName -> games
  FaultCounts faults[2];                         // per engine
  uint64_t games = 0, pairs = 0, moves = 0, aborted_games = 0;
  double seconds = 0;
  // Engine think time and wall time of the game loops; arbiter overhead: (wall x slots - think)
  // / moves, and arbiter CPU (measured by the local runner only: a cluster run leaves it empty).
  double think_seconds = 0, game_loop_seconds = 0;
  double overhead_ms_per_move = 0, game_loop_overhead_ms_per_move = 0;
  std::optional<double> cpu_ms_per_move;
  uint64_t rss_kib = 0;  // arbiter's resident memory after the last pair

  // Counts a pair: game 0 with the first engine as White, game 1 with colours reversed.
  // Elo and the SPRT are left to the caller.
  void AddPair(const GameCount& first_white, const GameCount& first_black);
};

// One-line progress ("Games 24/200  +8 =10 -6  Elo 29.0 +- 96.2  LLR 0.12 [-2.94, 2.94]").
std::string ProgressLine(const MatchSummary& s, uint64_t planned_games);
// The same line for one pairing of a tournament, naming it ("A vs B: Games 4/10 ...").
std::string PairingProgressLine(const MatchSummary& s, uint64_t planned_games);

// The summary on the wire: engines, counts, StatsReport (with `sprt` when given), terminations,
// faults, speed. Time controls, concurrency, PGN path and memory are the caller's.
v1::MatchResult ToMatchResult(const MatchSummary& s, const std::optional<stats::SprtParams>& sprt);

// The report lines after the statistics: W/D/L, terminations, faults per engine, speed (the
// arbiter CPU only when measured).
std::string MatchDetails(const v1::MatchResult& r);

// A tournament's lines after the standings, summed over its pairings: terminations, and the
// faults of each engine (time losses, disconnects, stalls, illegal moves) as MatchDetails
// writes them.
std::string TournamentDetails(const v1::TournamentResult& t);

}  // namespace arbiter::match

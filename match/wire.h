// The match's types on the wire (proto/arbiter/v1): game ends, results and sides as enums,
// fault counts, and the arbitration rules (GameRules). One place for each conversion, used by
// the CLI, the workers and the coordinator alike.
//
//   v1::GameRules rules = RulesToProto(options, event, limits);   // arbiter match --coordinator
//   ApplyRules(job.rules(), settings, timeouts);                   // a worker's match job
//   std::optional<GameEnd> end = GameEndFromProto(reported.end()); // the coordinator's replay
#pragma once

#include <optional>
#include <string>

#include "engine/types.h"
#include "match/game.h"
#include "match/runner.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/match.pb.h"

namespace arbiter::match {

// kAborted (never reported) is GAME_END_UNSPECIFIED; UNSPECIFIED or an unknown value reads as
// nullopt.
v1::GameEnd GameEndToProto(GameEnd end);
std::optional<GameEnd> GameEndFromProto(v1::GameEnd end);
// kOngoing is GAME_RESULT_UNSPECIFIED and reads back as nullopt.
v1::GameResult GameResultToProto(GameResult result);
std::optional<GameResult> GameResultFromProto(v1::GameResult result);
// "1-0", "0-1", "1/2-1/2" of a wire result ("*" when unspecified).
std::string_view GameResultText(v1::GameResult result);
// A game summary's result and end: the enums, and their text in the deprecated fields that
// readers older than the enums use.
void SetResultAndEnd(v1::GameSummary& game, v1::GameResult result, v1::GameEnd end);
v1::Side SideToProto(Color side);
std::optional<Color> SideFromProto(v1::Side side);

// The faults of the engine `name`.
v1::EngineFaults FaultsToProto(const FaultCounts& faults, const std::string& name);

// The arbitration flags of a local match (margin, timeouts, adjudication, Chess960, affinity)
// as a cluster run's rules, with the PGN `event` ("" = the worker's) and the engine `limits`.
v1::GameRules RulesToProto(const MatchOptions& options, const std::string& event,
                           const v1::EngineLimits& limits);
// A run's rules over a worker's defaults: a field the run left unset keeps the default. The
// event, Chess960, affinity and engine limits are read by the caller.
void ApplyRules(const v1::GameRules& rules, GameSettings& settings, EngineTimeouts& timeouts);

}  // namespace arbiter::match

// StatsReport (proto/arbiter/v1/stats.proto) from match counts, and its text form: shared by
// `arbiter stats` and every command that reports a match (same numbers, same layout).
//
//   stats::SprtParams sprt{.elo0 = 0, .elo1 = 2};
//   v1::StatsReport r = MakeStatsReport(pentanomial, &sprt);   // nullptr: no SPRT
//   std::cout << FormatStatsReport(r);
#pragma once

#include <string>

#include "proto/arbiter/v1/stats.pb.h"
#include "stats/counts.h"
#include "stats/sprt.h"

namespace arbiter::cli {

// The wire enum of an SPRT model.
v1::SprtModel SprtModelToProto(stats::SprtModel m);

// `sprt` must pass stats::ValidateSprtParams when given.
v1::StatsReport MakeStatsReport(const stats::Trinomial& counts, const stats::SprtParams* sprt);
// With kBayesElo the SPRT uses the game counts implied by the pairs (see stats::EvaluateSprt).
v1::StatsReport MakeStatsReport(const stats::Pentanomial& counts, const stats::SprtParams* sprt);

// Lines "Games: ...", "Elo: ...", "nElo: ...", "LOS: ...", and "SPRT ..." when present.
std::string FormatStatsReport(const v1::StatsReport& report);

}  // namespace arbiter::cli

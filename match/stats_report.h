// StatsReport (proto/arbiter/v1/stats.proto) from match counts, the SPRT's parameters on the
// wire, and the report's text form: shared by `arbiter stats`, every command that reports a
// match (same numbers, same layout) and the coordinator's match runs.
//
//   stats::SprtParams sprt{.elo0 = 0, .elo1 = 2};
//   v1::StatsReport r = MakeStatsReport(pentanomial, &sprt);   // nullptr: no SPRT
//   std::cout << FormatStatsReport(r);
#pragma once

#include <string>

#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/stats.pb.h"
#include "stats/counts.h"
#include "stats/sprt.h"

namespace arbiter::match {

// The wire enum of an SPRT model.
v1::SprtModel SprtModelToProto(stats::SprtModel m);
// A cluster run's SPRT and back (SPRT_MODEL_UNSPECIFIED reads as normalized).
v1::SprtSpec SprtSpecOf(const stats::SprtParams& params);
stats::SprtParams SprtParamsOf(const v1::SprtSpec& spec);

// `sprt` must pass stats::ValidateSprtParams when given.
v1::StatsReport MakeStatsReport(const stats::Trinomial& counts, const stats::SprtParams* sprt);
// With kBayesElo the SPRT uses the game counts implied by the pairs (see stats::EvaluateSprt).
v1::StatsReport MakeStatsReport(const stats::Pentanomial& counts, const stats::SprtParams* sprt);

// Lines "Games: ...", "Elo: ...", "nElo: ...", "LOS: ...", and "SPRT ..." when present.
std::string FormatStatsReport(const v1::StatsReport& report);

}  // namespace arbiter::match

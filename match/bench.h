// An engine's `bench` (the convention of Stockfish-family engines and of `arbiter bench`): the
// engine is run as `ENGINE [args] bench`, in the same box and limits as its games, and its
// summary ("Nodes searched  : N", "Nodes/second    : N", on stdout or stderr) is read.
//
//   ASSIGN_OR_RETURN(BenchResult b, RunEngineBench(spec, box, Millis(120000)));
//   if (b.nodes != declared) ...  // a different binary, CPU path or build
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"

namespace arbiter::match {

struct BenchResult {
  uint64_t nodes = 0;  // the node signature
  uint64_t nps = 0;    // nodes per second (0 when the engine printed none)
};

// The summary of bench output `lines` (stdout and stderr): INVALID_ARGUMENT naming what is
// missing when there is no "Nodes searched" line with a number.
absl::StatusOr<BenchResult> ParseBenchOutput(const std::vector<std::string_view>& lines);

// Runs the engine's bench under `sandbox` and waits at most `timeout`: DEADLINE_EXCEEDED (the
// process is killed) when it does not finish, FAILED_PRECONDITION when it exits without a
// summary or with an error; every message names the engine and says what happened.
absl::StatusOr<BenchResult> RunEngineBench(const EngineSpec& spec, const SandboxOptions& sandbox,
                                           Millis timeout);

}  // namespace arbiter::match

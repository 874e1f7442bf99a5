// What a worker checks about a match job's engines before the first game, once per artifact:
// the sha256 of the binary it will run (cached by path, size and modification time) and, when
// asked, its `bench` (cached by sha256 and arguments), run in the worker's sandbox with a
// timeout. Also the worker's speed for scaled clocks.
//
//   EngineChecker checker(box, Millis(120000));
//   ASSIGN_OR_RETURN(EngineIdentity id, checker.Identify(spec));
//   ASSIGN_OR_RETURN(match::BenchResult b, checker.Bench(spec, id));
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "match/bench.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"

namespace arbiter::worker {

struct EngineIdentity {
  std::string sha256;  // of the binary (the worker's own for builtin)
};

class EngineChecker {
 public:
  EngineChecker(match::SandboxOptions sandbox, match::Millis bench_timeout)
      : sandbox_(std::move(sandbox)), timeout_(bench_timeout) {}

  // The sha256 of the program `spec` runs; FAILED_PRECONDITION when it cannot be read.
  absl::StatusOr<EngineIdentity> Identify(const match::EngineSpec& spec);
  // The engine's bench, run once per (sha256, arguments, environment); failures are cached too
  // (a hanging bench costs its timeout once, not once per job).
  absl::StatusOr<match::BenchResult> Bench(const match::EngineSpec& spec, const EngineIdentity& id);
  // The bench of an engine that may not have one (a source engine's build, compared across
  // workers): at most `timeout`, and a timeout is cached too, so that an engine that never
  // answers `bench` costs it once.
  absl::StatusOr<match::BenchResult> ProbeBench(const match::EngineSpec& spec,
                                                const EngineIdentity& id, match::Millis timeout);

 private:
  const match::SandboxOptions sandbox_;
  const match::Millis timeout_;
  absl::Mutex mu_;  // one check at a time: a bench measures speed on an otherwise idle worker
  std::map<std::string, std::string> sha256_ ABSL_GUARDED_BY(mu_);  // path|size|mtime -> sha256
  std::map<std::string, absl::StatusOr<match::BenchResult>> bench_ ABSL_GUARDED_BY(mu_);
};

}  // namespace arbiter::worker

// The coordinator's checks of what arrives from outside: a SubmitMatchRequest / SubmitTournament
// request from arbitrary bytes is validated without crashing, a SubmitPerftRequest is validated
// and (up to depth 3, so that each input stays fast) split into jobs, and a reported match result
// from arbitrary bytes is replayed against a job without crashing.
#include <cstdint>

#include "coordinator/match_run.h"
#include "coordinator/perft_run.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 1 << 16) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto known = [](const std::string&) { return true; };
  switch (data[0] % 4) {
    case 0: {
      arbiter::v1::SubmitMatchRequest req;
      if (req.ParseFromString(bytes) && arbiter::coordinator::ValidateMatchRequest(req, known).ok())
        (void)arbiter::coordinator::PlanMatchJobs(req);
      break;
    }
    case 1: {
      arbiter::v1::SubmitTournamentRequest req;
      if (req.ParseFromString(bytes) &&
          arbiter::coordinator::ValidateTournamentRequest(req, known).ok())
        (void)arbiter::coordinator::PlanTournamentJobs(req);
      break;
    }
    case 3: {
      arbiter::v1::SubmitPerftRequest req;
      if (!req.ParseFromString(bytes) || req.perft().depth() > 3) break;
      absl::StatusOr<arbiter::coordinator::RunPlan> plan =
          arbiter::coordinator::PlanPerftRun(req, {.connected_workers = 2, .hash_tables = 2});
      if (plan.ok()) FUZZ_CHECK(plan->handler != nullptr);
      break;
    }
    default: {
      arbiter::v1::MatchJob job;
      job.set_tc("10+0.1");
      job.set_pairs(1);
      for (const char* name : {"a", "b"}) {
        arbiter::v1::EngineSpec* e = job.add_engines();
        e->set_name(name);
        e->set_builtin(true);
      }
      arbiter::v1::MatchJobResult result;
      if (result.ParseFromString(bytes)) (void)arbiter::coordinator::CheckMatchResult(job, result);
    }
  }
  return 0;
}

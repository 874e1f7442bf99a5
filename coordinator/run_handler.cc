#include "coordinator/run_handler.h"

#include <algorithm>

#include "base/strings.h"
#include "coordinator/games_run.h"
#include "coordinator/metrics.h"
#include "coordinator/movegen_run.h"
#include "coordinator/perft_run.h"

namespace arbiter::coordinator {

v1::RunKind Run::kind() const { return handler ? handler->kind() : v1::RUN_KIND_UNSPECIFIED; }

uint64_t Run::QueuedJobs() const {
  return jobs.size() - std::min<uint64_t>(jobs.size(), jobs_done + jobs_cancelled + jobs_leased);
}

void RunHandler::SetGauges(uint64_t run_id, double progress, CoordinatorMetrics& metrics) const {
  metrics.SetRunProgress(run_id, progress, 0);
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadRunHandler(v1::RunKind kind,
                                                           const std::string& spec) {
  switch (kind) {
    case v1::RUN_KIND_PERFT:
      return LoadPerftRun(spec);
    case v1::RUN_KIND_MATCH:
      return LoadMatchRun(spec);
    case v1::RUN_KIND_TOURNAMENT:
      return LoadTournamentRun(spec);
    case v1::RUN_KIND_MOVEGEN_CHECK:
      return LoadMovegenCheckRun(spec);
    default:
      return absl::DataLossError(Cat("unknown run kind ", int(kind)));
  }
}

std::pair<size_t, size_t> MajorityOf(const std::vector<Result>& results) {
  size_t best = 0, best_votes = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    size_t votes = 0;
    for (const Result& r : results) votes += r.counts == results[i].counts;
    if (votes > best_votes) best = i, best_votes = votes;
  }
  return {best, best_votes};
}

}  // namespace arbiter::coordinator

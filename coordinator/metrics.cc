#include "coordinator/metrics.h"

#include "net/metrics.h"

namespace arbiter::coordinator {

CoordinatorMetrics::CoordinatorMetrics(prometheus::Registry& r)
    : duration(net::RegisterHistogram(r, "arbiter_job_duration_seconds",
                                      "Wall time workers report for the jobs they complete.",
                                      net::kJobSecondsBuckets)),
      commit(net::RegisterHistogram(r, "arbiter_commit_duration_seconds",
                                    "Time to commit a group of results to the store.",
                                    {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5})),
      expiries(
          net::RegisterCounters(r, "arbiter_lease_expiries_total",
                                "Leases that expired without a result; their jobs were re-queued.")
              .Add({})),
      workers(net::RegisterGauges(r, "arbiter_workers_connected",
                                  "Workers seen within the last lease period or waiting for a job.")
                  .Add({})),
      jobs_held(net::RegisterGauges(
                    r, "arbiter_jobs_in_memory",
                    "Jobs the coordinator holds in memory: those of unfinished runs, and those of "
                    "finished runs that were ever leased.")
                    .Add({})),
      perft_nodes(net::RegisterCounters(r, "arbiter_perft_nodes_total",
                                        "Perft leaf nodes counted by accepted jobs (weighted by "
                                        "multiplicity, so a finished run adds exactly its total).")
                      .Add({})),
      disagreements(net::RegisterCounters(r, "arbiter_verify_disagreements_total",
                                          "Verified job results that differed from the majority.")
                        .Add({})),
      residual_flags(net::RegisterCounters(r, "arbiter_residual_flags_total",
                                           "Workers whose match games the residual check set "
                                           "aside (an improbable score beside the rest of a run).")
                         .Add({})),
      runs_(net::RegisterGauges(r, "arbiter_runs", "Runs known to the coordinator, by state.")),
      jobs_(net::RegisterGauges(r, "arbiter_jobs", "Jobs of unfinished runs, by state.")),
      completions_(
          net::RegisterCounters(r, "arbiter_job_completions_total",
                                "CompleteJob calls by outcome (committed, duplicate, rejected).")),
      progress_family_(net::RegisterGauges(
          r, "arbiter_run_progress_ratio",
          "Fraction of the estimated work done, per run (kept 5 min after it ends).")),
      run_nodes_family_(net::RegisterGauges(
          r, "arbiter_run_perft_nodes",
          "Perft leaf nodes counted so far, per run (kept 5 min after it ends).")),
      games_(net::RegisterCounters(r, "arbiter_games_total",
                                   "Counted match games by result (1-0, 0-1, 1/2-1/2).")),
      endings_(net::RegisterCounters(
          r, "arbiter_game_endings_total",
          "Counted match games by how they ended (normal, time forfeit, illegal "
          "move, disconnect = engine crash, stall, adjudication, resignation).")),
      llr_family_(net::RegisterGauges(
          r, "arbiter_run_sprt_llr",
          "SPRT log-likelihood ratio, per match run (kept 5 min after it ends).")),
      elo_family_(net::RegisterGauges(
          r, "arbiter_run_elo",
          "Elo estimate of the first engine, per match run (kept 5 min after it ends).")),
      verdict_family_(net::RegisterGauges(
          r, "arbiter_run_verdict",
          "1 for an ended run's verdict (passed, failed, inconclusive, measured, none), labelled "
          "with the run and its kind (kept 5 min after it ends).")),
      ended_(net::RegisterCounters(r, "arbiter_runs_ended_total",
                                   "Runs that ended, by kind, state and verdict.")) {}

void CoordinatorMetrics::RunEnded(uint64_t run, const std::string& kind, const std::string& state,
                                  const std::string& verdict) {
  verdict_family_.Add({{"run", std::to_string(run)}, {"kind", kind}, {"verdict", verdict}}).Set(1);
  verdicts_[run] = {kind, verdict};
  ended_.Add({{"kind", kind}, {"state", state}, {"verdict", verdict}}).Increment();
}

void CoordinatorMetrics::SetRuns(const std::map<std::string, double>& by_state) {
  for (const char* s : {"QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}) {
    auto it = by_state.find(s);
    runs_.Add({{"state", s}}).Set(it == by_state.end() ? 0 : it->second);
  }
}

void CoordinatorMetrics::SetJobs(double queued, double leased, double done, double cancelled) {
  jobs_.Add({{"state", "queued"}}).Set(queued);
  jobs_.Add({{"state", "leased"}}).Set(leased);
  jobs_.Add({{"state", "done"}}).Set(done);
  jobs_.Add({{"state", "cancelled"}}).Set(cancelled);
}

void CoordinatorMetrics::SetRunProgress(uint64_t run, double progress, double nodes) {
  progress_family_.Add({{"run", std::to_string(run)}}).Set(progress);
  run_nodes_family_.Add({{"run", std::to_string(run)}}).Set(nodes);
}

void CoordinatorMetrics::SetRunMatch(uint64_t run, double llr, double elo) {
  llr_family_.Add({{"run", std::to_string(run)}}).Set(llr);
  elo_family_.Add({{"run", std::to_string(run)}}).Set(elo);
}

void CoordinatorMetrics::RemoveRun(uint64_t run) {
  for (auto* family : {&llr_family_, &elo_family_, &progress_family_, &run_nodes_family_}) {
    prometheus::Gauge& g = family->Add({{"run", std::to_string(run)}});
    family->Remove(&g);
  }
  if (auto it = verdicts_.find(run); it != verdicts_.end()) {
    prometheus::Gauge& g = verdict_family_.Add(
        {{"run", std::to_string(run)}, {"kind", it->second.first}, {"verdict", it->second.second}});
    verdict_family_.Remove(&g);
    verdicts_.erase(it);
  }
}

void CoordinatorMetrics::Game(std::string_view result, match::GameEnd end) {
  games_.Add({{"result", std::string(result)}}).Increment();
  endings_.Add({{"end", std::string(match::GameEndName(end))}}).Increment();
}

}  // namespace arbiter::coordinator

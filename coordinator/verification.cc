// Results checked, not believed: perft spot checks (a worker's results count alone only after a
// recount by an independent worker agreed, then a share at random), the votes that follow a
// disagreement, and which engines a worker may fetch.
#include <algorithm>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/coordinator.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

absl::Status Coordinator::CheckEngineFetch(const std::string& worker_id, const std::string& sha256,
                                           const Caller& caller) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(WorkerInfo * w, CallerWorkerLocked(worker_id, caller));
  (void)w;
  auto runs_engine = [&](const v1::Job& work) {
    // An uploaded binary, or the archive of a source engine the worker builds.
    auto uses = [&](const v1::EngineSpec& e) {
      return e.sha256() == sha256 || e.source_tree().sha256() == sha256;
    };
    for (const v1::EngineSpec& e : work.match().engines())
      if (uses(e)) return true;
    return uses(work.movegen_check().engine());
  };
  for (const auto& [id, run] : runs_) {
    if (IsTerminal(run->state) || run->jobs_leased == 0) continue;
    for (uint64_t job_id : run->jobs) {
      const Job* job = queue_.Find(job_id);
      if (!job || std::none_of(job->leases.begin(), job->leases.end(),
                               [&](const Lease& l) { return l.worker_id == worker_id; }))
        continue;
      v1::Job work;
      run->handler->FillWork(*job, work);
      if (runs_engine(work)) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(Cat(
      "worker '", worker_id, "' holds no lease of a job that runs engine ", sha256.substr(0, 64)));
}

void Coordinator::CountersOfLocked(const Job& job, absl::flat_hash_set<std::string>& identities,
                                   absl::flat_hash_set<std::string>& hash_groups) {
  for (const Result& r : job.results) {
    identities.insert(r.token);
    if (const WorkerInfo* w = workers_.Find(r.worker_id); w && !w->hash_group.empty())
      hash_groups.insert(w->hash_group);
  }
}

bool Coordinator::SpotCheckLocked(Run& run, Job& job) {
  if (options_.perft_spot_check_percent <= 0 || !run.handler->SpotChecked() || job.want != 1 ||
      job.results.size() != 1)
    return false;
  const std::string& identity = job.results.front().token;
  if (identity.empty()) return false;  // known by neither token nor host: nobody to compare
  // A fixed pseudo-random share of jobs, by job id: the same jobs whatever the timing.
  const uint64_t mix = (job.id + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
  const bool sampled = double((mix >> 32) % 10000) < options_.perft_spot_check_percent * 100;
  if (!sampled && run.vouched.contains(identity) && !run.distrusted.contains(identity))
    return false;
  absl::flat_hash_set<std::string> identities, hash_groups;
  CountersOfLocked(job, identities, hash_groups);
  if (!IndependentLocked(run, job, identities, hash_groups)) return false;
  ++job.want;
  ++run.spot_checks;
  run.spot_checking.insert(job.id);
  // Out of its lane and first in line: another worker recounts it next, before the worker that
  // counted it gets far with results that wait on this one.
  job.lane = kNoLane;
  queue_.Requeue(job.id);
  return true;
}

void Coordinator::ApplyResultLocked(Run& run, Job& job, std::vector<RunUpdate>& updates) {
  if (SpotCheckLocked(run, job)) return;
  // Who agrees with the counts most results agree on (Ingest drops the counts once done).
  std::vector<bool> agrees;
  if (job.results.size() >= 2) {
    const size_t best = MajorityOf(job.results).first;
    for (const Result& r : job.results) agrees.push_back(r.counts == job.results[best].counts);
  }
  const IngestOutcome outcome = run.handler->Ingest(job, metrics_.get());
  if (outcome.set_aside) SetAsideLocked(run, *outcome.set_aside);
  // The tokens of workers that lost a vote: quarantined once this job is done.
  std::vector<std::pair<std::string, std::string>> losers;
  if (outcome.job == IngestOutcome::JobEffect::kDone) {
    for (size_t i = 0; i < job.results.size(); ++i) {
      Result& r = job.results[i];
      r.counted = agrees.empty() || agrees[i];
      if (agrees.empty() || !run.handler->Recountable()) continue;
      if (agrees[i]) {
        if (!r.token.empty() && run.handler->SpotChecked()) run.vouched.insert(r.token);
        continue;
      }
      // Counted otherwise than the majority: the worker carries the flag (`arbiter workers`, the
      // dashboard), and its token is quarantined until an admin acts.
      run.distrusted.insert(r.token);
      const std::string why = Cat("run ", run.id, ": perft job ", job.id, " counted by '",
                                  r.worker_name, "' otherwise than the majority of its recounts");
      if (WorkerInfo* w = workers_.Find(r.worker_id); w && w->flags.size() < kMaxWorkerFlags)
        w->flags.push_back(why);
      losers.emplace_back(r.token_name, why);
    }
  }
  if (const Result& counted = job.results.back(); counted.match)
    NoteEngineReportLocked(run, counted.worker_id, *counted.match);
  if (outcome.job != IngestOutcome::JobEffect::kRequeue) run.spot_checking.erase(job.id);
  switch (outcome.job) {
    case IngestOutcome::JobEffect::kNone:
      break;
    case IngestOutcome::JobEffect::kDone:
      job.done = true;
      ++run.jobs_done;
      run.estimate_done += run.handler->Estimate(job);
      break;
    case IngestOutcome::JobEffect::kRequeue: {
      // Results that disagree, and nobody independent of them connected to decide: the run fails
      // naming them rather than waiting, or taking either count on trust.
      absl::flat_hash_set<std::string> identities, hash_groups;
      CountersOfLocked(job, identities, hash_groups);
      if (run.handler->SpotChecked() && !IndependentLocked(run, job, identities, hash_groups))
        return FailUndecidedLocked(run, job, updates);
      if (run.handler->SpotChecked()) {
        job.lane = kNoLane;  // any independent worker, first
        run.spot_checking.insert(job.id);
      }
      queue_.Requeue(job.id);
      break;
    }
    case IngestOutcome::JobEffect::kFailed:
      job.failed = true;
      break;
  }
  // After this job is counted: its own majority stands, while the loser's other results go.
  for (const auto& [token, why] : losers) QuarantineLocked(token, why);
  if (outcome.finish)
    FinishRunLocked(run, *outcome.finish, outcome.message, updates);
  else if (run.jobs_done == run.jobs.size() && !run.handler->Expanding() &&
           !run.handler->AwaitsDecision())
    FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, NoteOfLocked(run), updates);
}

void Coordinator::FailUndecidedLocked(Run& run, Job& job, std::vector<RunUpdate>& updates) {
  std::string who;
  for (const Result& r : job.results) {
    uint64_t nodes = 0;
    for (uint64_t c : r.counts) nodes += c;
    who += Cat(who.empty() ? "" : ", ", "'", r.worker_name, "' ", nodes);
  }
  job.failed = true;
  run.spot_checking.erase(job.id);
  FinishRunLocked(run, v1::RUN_STATE_FAILED,
                  Cat("job ", job.id, ": workers disagree (", who,
                      " nodes) and no third worker is connected to decide"),
                  updates);
}

bool Coordinator::IndependentLocked(const Run& run, const Job& job,
                                    const absl::flat_hash_set<std::string>& identities,
                                    const absl::flat_hash_set<std::string>& hash_groups) {
  return workers_.IndependentWorkerConnected(
      identities, hash_groups,
      [&](const std::string& id, const WorkerInfo& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return UnmetRequirement(w, run.requirements).empty() &&
               IneligibleLocked(id, w, run, job).empty();
      });
}

void Coordinator::ResolveSpotChecksLocked(std::vector<RunUpdate>& updates) {
  for (auto& [run_id, run_ptr] : runs_) {
    Run& run = *run_ptr;
    if (run.spot_checking.empty() || IsTerminal(run.state)) continue;
    std::vector<uint64_t> waiting(run.spot_checking.begin(), run.spot_checking.end());
    for (uint64_t job_id : waiting) {
      Job* job = queue_.Find(job_id);
      if (!job || !job->open()) {
        run.spot_checking.erase(job_id);
        continue;
      }
      if (!job->leases.empty() || job->pending > 0) continue;  // being recounted
      absl::flat_hash_set<std::string> identities, hash_groups;
      CountersOfLocked(*job, identities, hash_groups);
      if (IndependentLocked(run, *job, identities, hash_groups)) continue;
      queue_.Unready(job_id);
      if (job->results.size() >= 2) {  // a disagreement nobody is left to decide
        FailUndecidedLocked(run, *job, updates);
        break;
      }
      // The only worker who could recount it left: its one result counts as it would have
      // without a spot check.
      spdlog::info("run {}: job {}: no independent worker left to recount it; counted as is",
                   run.id, job_id);
      run.spot_checking.erase(job_id);
      job->want = 1;
      ApplyResultLocked(run, *job, updates);
      if (IsTerminal(run.state)) break;
    }
  }
}

}  // namespace arbiter::coordinator

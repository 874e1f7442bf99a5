// Quarantined worker tokens: a worker that lost a vote on a perft count is not believed again.
// Its token's workers take no leases, the leases they hold are taken back, and every result of
// the token in an unfinished perft run is voided, so that the jobs whose count rested on it alone
// are counted again by other workers before the run can succeed. Stored: a restart keeps the
// quarantine and does not bring the voided results back. An admin lifts it.
#include <algorithm>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/coordinator.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

// A job counted again: its run, the stored spec and the counts that were counted (for a job that
// was done; empty for one still open).
struct Reopened {
  Run* run;
  Job* job;
  std::string spec;
  std::vector<uint64_t> counts;
};

}  // namespace

absl::Status Coordinator::QuarantinedLocked(const std::string& token) {
  auto it = quarantined_.find(token);
  if (token.empty() || it == quarantined_.end()) return absl::OkStatus();
  return absl::PermissionDeniedError(Cat("token '", token, "' is quarantined (", it->second.reason,
                                         "); an admin lifts it with `arbiter ", "tokens lift ",
                                         token, "`"));
}

void Coordinator::QuarantineLocked(const std::string& token, const std::string& reason) {
  // Without a token name every worker would share the quarantine (--no-auth, tests).
  if (token.empty() || quarantined_.contains(token)) return;
  const StoredQuarantine q{token, reason, UnixNow()};
  quarantined_[token] = q;
  auto of_token = [&](const Result& r) { return r.token_name == token; };
  std::vector<uint64_t> run_ids, job_ids;
  std::vector<Reopened> reopened;
  for (auto& [run_id, run_ptr] : runs_) {
    Run& run = *run_ptr;
    if (IsTerminal(run.state)) continue;
    const bool recountable = run.handler->Recountable();
    bool voided = false;
    for (uint64_t job_id : run.jobs) {
      Job* job = queue_.Find(job_id);
      if (!job) continue;
      // Its leases are taken back: whatever its workers count from now on is not believed.
      for (size_t i = job->leases.size(); i-- > 0;) {
        const WorkerInfo* w = workers_.Find(job->leases[i].worker_id);
        if (!w || w->token != token) continue;
        RemoveLeaseLocked(*job, i);
        if (job->open()) queue_.Requeue(job->id);
        ++run.version;
      }
      if (!recountable || job->cancelled || job->failed ||
          std::none_of(job->results.begin(), job->results.end(), of_token))
        continue;
      voided = true;
      // A done job stands when a counted result of another token agreed with the count.
      if (job->done && std::any_of(job->results.begin(), job->results.end(),
                                   [&](const Result& r) { return r.counted && !of_token(r); }))
        continue;
      Reopened& re = reopened.emplace_back(Reopened{&run, job, "", {}});
      job_ids.push_back(job->id);
      if (!job->done) continue;
      // What was counted is in the store only (a counted job's counts and spec leave memory).
      absl::StatusOr<StoredJob> spec = store_->LoadJob(job->id);
      absl::StatusOr<std::vector<StoredResult>> stored = store_->LoadJobResults(job->id);
      std::vector<Result> results;
      if (spec.ok() && stored.ok()) {
        re.spec = std::move(spec->spec);
        for (const StoredResult& sr : *stored)
          if (Result& r = results.emplace_back(); !run.handler->ParseResult(sr.result, r).ok())
            results.pop_back();
      }
      if (results.empty()) {
        spdlog::error("run {}: job {}: its stored count cannot be read to count it again: {}",
                      run.id, job->id, (spec.ok() ? stored.status() : spec.status()).ToString());
        reopened.pop_back();
        job_ids.pop_back();
        continue;
      }
      re.counts = results[MajorityOf(results).first].counts;
    }
    if (voided) run_ids.push_back(run_id);
  }
  if (absl::Status st = store_->Quarantine(q, run_ids, job_ids); !st.ok())
    spdlog::error("storing the quarantine of token '{}': {}", token, st.ToString());
  absl::flat_hash_map<uint64_t, size_t> recounted;  // by run
  for (Reopened& re : reopened) {
    Run& run = *re.run;
    Job& job = *re.job;
    if (job.done) {
      if (absl::Status st = run.handler->Uncount(job, re.spec, re.counts); !st.ok()) {
        spdlog::error("run {}: job {}: {}", run.id, job.id, st.ToString());
        continue;
      }
      job.done = false;
      --run.jobs_done;
      run.estimate_done = std::max(0.0, run.estimate_done - run.handler->Estimate(job));
    }
    // Counted afresh: the results it had are gone, and it waits for as many as a new job.
    const int before =
        std::max(0, job.want - int(job.results.size()) - int(job.leases.size()) - job.pending);
    job.results.clear();
    job.want = run.handler->ResultsWanted();
    const int after = std::max(0, job.want - int(job.leases.size()) - job.pending);
    for (int i = after; i < before; ++i) queue_.Unready(job.id);
    for (int i = before; i < after; ++i) queue_.Requeue(job.id);
    job.lane = kNoLane;
    run.spot_checking.erase(job.id);
    ++run.version;
    ++recounted[run.id];
  }
  for (auto& [run_id, run_ptr] : runs_) {
    Run& run = *run_ptr;
    if (IsTerminal(run.state)) continue;
    absl::erase_if(run.vouched,
                   [&](const std::string& identity) { return identity.starts_with(token + "@"); });
    for (uint64_t id : run_ids)
      if (id == run_id)
        run.quarantine_note = Cat(run.quarantine_note, run.quarantine_note.empty() ? "" : "; ",
                                  "token '", token, "' quarantined (", reason, "): its results ",
                                  "voided, ", recounted[run_id], " jobs counted again");
  }
  spdlog::warn("token '{}' quarantined ({}): {} jobs of {} runs counted again", token, reason,
               reopened.size(), run_ids.size());
}

absl::Status Coordinator::LiftQuarantine(const std::string& name) {
  absl::MutexLock lock(&mu_);
  if (!quarantined_.contains(name))
    return absl::NotFoundError(Cat("token '", name, "' is not quarantined"));
  RETURN_IF_ERROR(store_->LiftQuarantine(name));
  quarantined_.erase(name);
  spdlog::info("token '{}': quarantine lifted", name);
  return absl::OkStatus();
}

std::vector<StoredQuarantine> Coordinator::Quarantines() {
  absl::MutexLock lock(&mu_);
  std::vector<StoredQuarantine> out;
  for (const auto& [name, q] : quarantined_) out.push_back(q);
  std::sort(out.begin(), out.end(),
            [](const StoredQuarantine& a, const StoredQuarantine& b) { return a.name < b.name; });
  return out;
}

}  // namespace arbiter::coordinator

// The coordinator's own threads: the reaper's tick (expired leases, long polls past their
// deadline, watches of changed runs, gauges) and the producer of streamed perft splits.
#include <algorithm>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/metrics.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

void Coordinator::NotifyWatchesLocked(Deferred& deferred) {
  absl::flat_hash_map<uint64_t, std::shared_ptr<const v1::Run>> built;
  size_t kept = 0;
  for (size_t i = 0; i < watches_.size(); ++i) {
    auto r = runs_.find(watches_[i].run_id);
    if (r != runs_.end() && r->second->version > watches_[i].seen) {
      std::shared_ptr<const v1::Run>& run = built[r->first];
      if (!run) run = std::make_shared<const v1::Run>(BuildRunLocked(*r->second));
      deferred.push_back(
          [cb = std::move(watches_[i].cb), run, v = r->second->version] { cb(*run, v); });
    } else {
      if (kept != i) watches_[kept] = std::move(watches_[i]);
      ++kept;
    }
  }
  watches_.resize(kept);
}

void Coordinator::NotifyWatches() {
  Deferred deferred;
  {
    absl::MutexLock lock(&mu_);
    NotifyWatchesLocked(deferred);
  }
  for (auto& f : deferred) f();
}

void Coordinator::Tick() {
  Deferred deferred;
  std::vector<RunUpdate> updates;
  {
    absl::MutexLock lock(&mu_);
    TickLocked(deferred, updates);
  }
  for (auto& f : deferred) f();
  CommitTickUpdates(updates);
}

void Coordinator::CommitTickUpdates(const std::vector<RunUpdate>& updates) {
  if (updates.empty()) return;
  if (absl::Status st = store_->Commit({}, updates); !st.ok())
    spdlog::error("storing runs ended by their recounts failed: {}", st.ToString());
}

void Coordinator::TickLocked(Deferred& deferred, std::vector<RunUpdate>& updates) {
  const auto now = now_();
  // Recounts whose only possible counter left (verification.cc).
  ResolveSpotChecksLocked(updates);
  // Lost leases: back to the front of the queue.
  for (auto& [job, lease] : queue_.Expire()) {
    if (lease.stalls < now && lease.expiry >= now) {
      // Heartbeats, but nothing counted: the worker is told at its next heartbeat.
      job->stalled_lease = lease.id;
      spdlog::warn("job {}: lease {} of worker {} showed no progress for {} s; re-queued", job->id,
                   lease.id, lease.worker_id, options_.lease_progress_seconds);
    } else {
      spdlog::warn("job {}: lease {} of worker {} expired; re-queued", job->id, lease.id,
                   lease.worker_id);
    }
    LeaseEndedLocked(lease.worker_id);
    if (job->leases.empty() && job->pending == 0) {
      Run& run = *runs_[job->run_id];
      if (run.jobs_leased > 0) --run.jobs_leased;
    }
    ++runs_[job->run_id]->version;
    if (metrics_) metrics_->expiries.Increment();
  }
  DispatchLocked(deferred);
  // Long polls whose time is up get an empty answer.
  while (!waiters_.empty()) {
    auto it =
        std::min_element(waiters_.begin(), waiters_.end(),
                         [](const Waiter& a, const Waiter& b) { return a.deadline < b.deadline; });
    if (it->deadline > now) break;
    deferred.push_back([cb = std::move(it->cb)] { cb(v1::AcquireJobResponse()); });
    waiters_.erase(it);
  }
  NotifyWatchesLocked(deferred);
  if (now - last_token_flush_ > std::chrono::seconds(5)) {
    last_token_flush_ = now;
    deferred.push_back([this] {
      if (absl::Status st = tokens_->Flush(); !st.ok())
        spdlog::warn("recording token use failed: {}", st.ToString());
    });
  }
  // ended_gauges_ fills only with metrics_ (FinishRunLocked).
  for (; !ended_gauges_.empty() && ended_gauges_.front().first <= now; ended_gauges_.pop_front())
    metrics_->RemoveRun(ended_gauges_.front().second);
  if (metrics_ && now - last_gauges_ > std::chrono::milliseconds(500)) {
    last_gauges_ = now;
    UpdateGaugesLocked();
  }
}

double Coordinator::GaugeProgress(const Run& run) {
  if (run.state == v1::RUN_STATE_SUCCEEDED) return 1;
  return (run.estimate_total > 0 ? run.estimate_done / run.estimate_total : 0) *
         run.handler->ExpandedFraction();
}

void Coordinator::UpdateGaugesLocked() {
  std::map<std::string, double> by_state;
  double queued = 0, leased = 0, done = 0, cancelled = 0;
  for (const auto& [id, run] : runs_) {
    by_state[RunStateName(run->state)] += 1;
    if (IsTerminal(run->state)) continue;
    leased += double(run->jobs_leased);
    done += double(run->jobs_done);
    cancelled += double(run->jobs_cancelled);
    queued += double(run->QueuedJobs());
    run->handler->SetGauges(id, GaugeProgress(*run), *metrics_);
  }
  metrics_->SetRuns(by_state);
  metrics_->SetJobs(queued, leased, done, cancelled);
  metrics_->jobs_held.Set(double(queue_.size()));
  absl::flat_hash_set<std::string> waiting;
  for (const Waiter& w : waiters_) waiting.insert(w.worker_id);
  metrics_->workers.Set(double(workers_.CountConnected(waiting)));
}

void Coordinator::ReaperLoop() {
  for (;;) {
    Deferred deferred;
    std::vector<RunUpdate> updates;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_threads_), absl::Seconds(options_.tick_seconds));
      if (stop_threads_) return;
      TickLocked(deferred, updates);
    }
    for (auto& f : deferred) f();
    CommitTickUpdates(updates);
  }
}

// Jobs a run whose jobs come over time keeps queued ahead of the workers (per connected worker,
// and at least).
constexpr size_t kStreamAheadPerWorker = 4;
constexpr size_t kMinStreamAhead = 16;

uint64_t Coordinator::NextSourceLocked() {
  const size_t ahead =
      std::max(kMinStreamAhead, kStreamAheadPerWorker * workers_.ConnectedWorkers());
  for (auto it = sources_.begin(); it != sources_.end();) {
    auto run = runs_.find(it->first);
    if (run == runs_.end() || IsTerminal(run->second->state)) {
      it = sources_.erase(it);
      continue;
    }
    if (run->second->QueuedJobs() < ahead) return it->first;
    ++it;
  }
  return 0;
}

void Coordinator::ProducerLoop() {
  for (;;) {
    uint64_t run_id = 0;
    std::unique_ptr<JobSource> source;
    {
      absl::MutexLock lock(&mu_);
      // Polled every 20 ms rather than waited on as a Condition: absl evaluates a Condition at
      // every release of mu_ (each RPC), and NextSourceLocked counts the connected workers.
      while (!stop_threads_ && (run_id = NextSourceLocked()) == 0)
        mu_.AwaitWithTimeout(absl::Condition(&stop_threads_), absl::Milliseconds(20));
      if (stop_threads_) return;
      source = std::move(sources_[run_id]);
      sources_.erase(run_id);
    }
    absl::StatusOr<JobBatch> batch = source->Next();
    absl::Status status = batch.status();
    std::vector<StoredJob> stored;
    if (status.ok()) {
      stored.resize(batch->job_specs.size());
      for (size_t i = 0; i < stored.size(); ++i) stored[i].spec = std::move(batch->job_specs[i]);
      // Durable before anything is queued: a restart goes on from the stored cursor.
      status = store_->AppendJobs(run_id, stored, batch->run_spec);
    }
    std::vector<RunUpdate> updates;
    Deferred deferred;
    {
      absl::MutexLock lock(&mu_);
      ApplyBatchLocked(run_id, std::move(source), status, status.ok() ? *batch : JobBatch(), stored,
                       updates, deferred);
    }
    for (auto& f : deferred) f();
    if (!updates.empty())
      if (absl::Status st = store_->Commit({}, updates); !st.ok())
        spdlog::error("run {}: storing its state failed: {}", run_id, st.ToString());
    if (status.ok()) spdlog::info("run {}: {}", run_id, batch->summary);
  }
}

void Coordinator::ApplyBatchLocked(uint64_t run_id, std::unique_ptr<JobSource> source,
                                   const absl::Status& status, const JobBatch& batch,
                                   const std::vector<StoredJob>& stored,
                                   std::vector<RunUpdate>& updates, Deferred& deferred) {
  auto it = runs_.find(run_id);
  if (it == runs_.end() || IsTerminal(it->second->state)) return;  // cancelled meanwhile
  Run& run = *it->second;
  absl::Status st = status;
  if (st.ok()) st = run.handler->ApplyBatch(batch.run_spec);
  for (size_t i = 0; st.ok() && i < stored.size(); ++i) {
    st = run.handler->AddJob(stored[i].spec);
    if (!st.ok()) break;
    auto job = std::make_unique<Job>();
    job->id = stored[i].id;
    job->run_id = run_id;
    job->index = uint32_t(run.jobs.size());
    job->want = run.handler->ResultsWanted();
    // A run with lanes: the batch's jobs in contiguous ranges, one per lane, the first range
    // rotating from batch to batch (a batch of one job goes to each lane in turn).
    if (const size_t lanes = run.lane_workers.size(); lanes >= 2)
      job->lane = uint32_t((i * lanes / stored.size() + run.batches) % lanes);
    run.jobs.push_back(job->id);
    run.estimate_total += run.handler->Estimate(*job);
    queue_.Add(std::move(job));
  }
  if (!st.ok()) {
    FinishRunLocked(run, v1::RUN_STATE_FAILED,
                    Cat("producing the run's jobs failed: ", std::string(st.message())), updates);
    return;
  }
  ++run.version;
  ++run.batches;
  if (run.handler->Expanding())
    sources_[run_id] = std::move(source);
  else if (run.jobs_done == run.jobs.size() && !run.handler->AwaitsDecision())
    FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, NoteOfLocked(run), updates);
  DispatchLocked(deferred);
}

}  // namespace arbiter::coordinator

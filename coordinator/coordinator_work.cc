// The worker-facing half of the Coordinator facade (WorkService): registration, leases and long
// polls, heartbeats, completions through the commit log, and the reaper's tick.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "base/cpu.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/match_run.h"
#include "coordinator/metrics.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

absl::Status NoJobError(uint64_t job_id) {
  return absl::NotFoundError(Cat("job ", job_id, " does not exist"));
}
absl::Status UnknownWorkerError(const std::string& worker_id) {
  return absl::NotFoundError(Cat("unknown worker id '", worker_id, "': register first"));
}

}  // namespace

absl::StatusOr<v1::RegisterResponse> Coordinator::Register(const v1::RegisterRequest& request,
                                                           const Caller& caller) {
  if (request.name().size() > 256 || request.version().size() > 256 ||
      request.isolation().size() > 64 || request.hash_group().size() > 256 ||
      request.cpu_flags_size() > 512)
    return absl::InvalidArgumentError(
        "worker name, version and hash_group must have at most 256 bytes, cpu_flags 512 entries");
  if (request.engine_dirs_size() > 64)
    return absl::InvalidArgumentError(
        Cat("at most 64 engine directories, got ", request.engine_dirs_size()));
  for (const std::string& d : request.engine_dirs())
    if (d.empty() || d[0] != '/' || d.size() > 4096)
      return absl::InvalidArgumentError(Cat("engine directory '", d.substr(0, 64),
                                            "' must be an absolute path of at most 4096 bytes"));
  RETURN_IF_ERROR(ValidateEngineLimits(request.engine_limits(), "engine_limits"));
  RETURN_IF_ERROR(ValidateLabels(request.labels(), "worker labels"));
  if (request.build_toolchain().size() > 256)
    return absl::InvalidArgumentError(
        Cat("build_toolchain must have at most 256 bytes, got ", request.build_toolchain().size()));
  if (request.perft_path().size() > 16)
    return absl::InvalidArgumentError(
        Cat("perft_path must have at most 16 bytes, got ", request.perft_path().size()));
  if (request.cpu_level() > 4 || request.hostname().size() > 256)
    return absl::InvalidArgumentError(Cat("cpu_level must be 0..4 (got ", request.cpu_level(),
                                          ") and hostname at most 256 bytes (got ",
                                          request.hostname().size(), ")"));
  for (const std::string& f : request.cpu_flags())
    if (f.size() > 32)
      return absl::InvalidArgumentError(Cat("cpu flag '", f.substr(0, 40), "' is over 32 bytes"));
  if (request.threads() > kMaxWorkerThreads)
    return absl::InvalidArgumentError(
        Cat("threads must be at most ", kMaxWorkerThreads, ", got ", request.threads()));
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  if (!workers_.MakeRoom(caller.name, kMaxWorkersPerToken))
    return absl::ResourceExhaustedError(
        Cat("token '", caller.name, "' has ", kMaxWorkersPerToken,
            " workers registered and connected: no more (use another token for more)"));
  WorkerInfo info;
  info.name = request.name();
  // A worker leases at most as many jobs as it runs threads (and one whose result it reports
  // while counting the next, when it says so); the declarations are capped.
  info.threads = std::clamp<uint32_t>(request.threads(), 1, kMaxWorkerThreads);
  info.results_in_flight = std::min<uint32_t>(request.results_in_flight(), 1);
  info.hash_group = request.hash_group();
  info.token = caller.name;
  // Empty (only the worker id tells it apart) when the caller is known by neither.
  if (!caller.name.empty() || !caller.peer.empty())
    info.identity = Cat(caller.name, "@", caller.peer);
  info.isolated = request.isolation() == "namespaces" || request.isolation() == "landlock";
  info.isolation = request.isolation();
  info.version = request.version();
  info.cores = request.cores();
  info.engine_dirs.assign(request.engine_dirs().begin(), request.engine_dirs().end());
  info.engine_limits = request.engine_limits();
  info.cpu_level = std::max<int>(1, int(request.cpu_level()));
  info.memory_bytes = request.memory_bytes();
  info.labels.insert(request.labels().begin(), request.labels().end());
  info.hostname = request.hostname();
  info.perft_path = request.perft_path();
  info.perft_lanes = request.perft_lanes();
  info.build_toolchain = request.build_toolchain();
  info.cpu_flags.assign(request.cpu_flags().begin(), request.cpu_flags().end());
  const std::string id = workers_.Register(std::move(info));
  spdlog::info(
      "worker {} registered: name '{}', {} threads, {} cores, cpu {}, perft path {}, version "
      "'{}', engine isolation '{}'",
      id, workers_.Find(id)->name, request.threads(), request.cores(),
      CpuLevelName(std::max<int>(1, int(request.cpu_level()))), request.perft_path(),
      request.version(), request.isolation());
  v1::RegisterResponse out;
  out.set_worker_id(id);
  out.set_heartbeat_seconds(options_.heartbeat_seconds);
  return out;
}

absl::StatusOr<WorkerInfo*> Coordinator::CallerWorkerLocked(const std::string& worker_id,
                                                            const Caller& caller) {
  WorkerInfo* w = workers_.Find(worker_id);
  if (!w) return UnknownWorkerError(worker_id);
  if (w->token != caller.name)
    return absl::PermissionDeniedError(
        Cat("worker id '", worker_id, "' was registered by another token; register your own"));
  return w;
}

void Coordinator::LeaseEndedLocked(const std::string& worker_id) {
  WorkerInfo* w = workers_.Find(worker_id);
  if (w && w->leases > 0) --w->leases;
}

v1::AcquireJobResponse Coordinator::LeaseLocked(Job& job, const std::string& worker_id) {
  Run& run = *runs_[job.run_id];
  if (job.leases.empty() && job.pending == 0) ++run.jobs_leased;
  WorkerInfo* w = workers_.Find(worker_id);
  const Lease& lease = queue_.Grant(job, worker_id, w ? w->identity : std::string());
  if (w) ++w->leases;
  if (run.state == v1::RUN_STATE_QUEUED) {
    run.state = v1::RUN_STATE_RUNNING;
    if (run.started_unix == 0) run.started_unix = UnixNow();
  }
  ++run.version;
  v1::AcquireJobResponse out;
  v1::Job* j = out.mutable_job();
  j->set_job_id(job.id);
  j->set_run_id(job.run_id);
  j->set_lease_id(lease.id);
  j->set_lease_seconds(options_.lease_seconds);
  run.handler->FillWork(job, *j);
  return out;
}

void Coordinator::RemoveLeaseLocked(Job& job, size_t index) {
  LeaseEndedLocked(job.leases[index].worker_id);
  if (queue_.RemoveLease(job, index) && job.pending == 0) {
    auto r = runs_.find(job.run_id);
    if (r != runs_.end() && r->second->jobs_leased > 0) --r->second->jobs_leased;
  }
}

uint64_t Coordinator::AcquireJob(const v1::AcquireJobRequest& request, JobCallback cb,
                                 const Caller& caller) {
  absl::StatusOr<v1::AcquireJobResponse> now;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<WorkerInfo*> found = CallerWorkerLocked(request.worker_id(), caller);
    WorkerInfo* w = found.ok() ? *found : nullptr;
    if (shutting_down_) {
      now = ShuttingDownError();
    } else if (!found.ok()) {
      now = found.status();
    } else if (w->leases >= w->LeaseSlots()) {
      now = absl::ResourceExhaustedError(Cat(
          "worker ", request.worker_id(), " holds ", w->leases,
          " leases, as many as the threads it declared (", w->threads, ") and the results ",
          "it reports while counting (", w->results_in_flight, "); complete or release one first"));
    } else if (request.wait_seconds() < 0 || request.wait_seconds() > 60) {
      now = absl::InvalidArgumentError(
          Cat("wait_seconds must be in 0..60, got ", request.wait_seconds()));
    } else {
      workers_.Touch(*w);
      if (Job* job = TakeJobLocked(request.worker_id())) {
        now = LeaseLocked(*job, request.worker_id());
      } else {
        double wait =
            request.wait_seconds() > 0 ? request.wait_seconds() : options_.default_wait_seconds;
        uint64_t id = next_id_++;
        waiters_.push_back({id, request.worker_id(), now_() + Seconds(wait), std::move(cb)});
        return id;
      }
    }
  }
  cb(std::move(now));
  return 0;
}

bool Coordinator::CancelAcquire(uint64_t waiter_id) {
  absl::MutexLock lock(&mu_);
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->id == waiter_id) {
      waiters_.erase(it);
      return true;
    }
  }
  return false;
}

void Coordinator::DispatchLocked(Deferred& deferred) {
  while (!waiters_.empty() && queue_.HasReady()) {
    bool served = false;
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      Job* job = TakeJobLocked(it->worker_id);
      if (!job) continue;
      auto response = std::make_shared<v1::AcquireJobResponse>(LeaseLocked(*job, it->worker_id));
      deferred.push_back([cb = std::move(it->cb), response] { cb(std::move(*response)); });
      waiters_.erase(it);
      served = true;
      break;
    }
    if (!served) break;
  }
}

absl::StatusOr<v1::HeartbeatResponse> Coordinator::Heartbeat(const v1::HeartbeatRequest& request,
                                                             const Caller& caller) {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<WorkerInfo*> w = CallerWorkerLocked(request.worker_id(), caller);
  if (!w.ok()) return w.status();
  workers_.Touch(**w);
  Job* found = queue_.Find(request.job_id());
  if (!found) return NoJobError(request.job_id());
  Job& job = *found;
  v1::HeartbeatResponse out;
  if (job.cancelled) {
    // The job's run ended: cancelled, or finished without it (an SPRT decided, a run failed).
    auto run = runs_.find(job.run_id);
    const v1::RunState state = run == runs_.end() ? v1::RUN_STATE_CANCELLED : run->second->state;
    out.set_stop(true);
    out.set_reason(state == v1::RUN_STATE_CANCELLED
                       ? Cat("run ", job.run_id, " was cancelled")
                       : Cat("run ", job.run_id, " has ended (", RunStateName(state), ")"));
    return out;
  }
  const size_t index = JobQueue::LeaseIndex(job, request.lease_id());
  if (index < job.leases.size()) {
    if (job.leases[index].worker_id != request.worker_id())
      return absl::FailedPreconditionError(
          Cat("lease ", request.lease_id(), " of job ", job.id, " belongs to another worker"));
    queue_.Extend(job, index);
    out.set_lease_seconds(options_.lease_seconds);
    return out;
  }
  if (JobQueue::WasIssued(job, request.lease_id())) {
    out.set_stop(true);
    out.set_reason(job.done ? Cat("job ", job.id, " is already done")
                            : Cat("lease ", request.lease_id(), " of job ", job.id,
                                  " expired; the job was re-queued"));
    return out;
  }
  return absl::FailedPreconditionError(
      Cat("job ", job.id, " was never leased with lease ", request.lease_id()));
}

absl::Status Coordinator::CheckCompletionLocked(Job& job, const v1::CompleteJobRequest& request,
                                                size_t index) {
  if (index < job.leases.size()) {
    if (job.leases[index].worker_id != request.worker_id())
      return absl::FailedPreconditionError(
          Cat("lease ", request.lease_id(), " of job ", job.id, " belongs to another worker"));
    return absl::OkStatus();
  }
  if (job.cancelled)
    return absl::FailedPreconditionError(
        Cat("run ", job.run_id, " of job ", job.id, " was cancelled"));
  if (JobQueue::WasIssued(job, request.lease_id()))
    return absl::FailedPreconditionError(
        Cat("lease ", request.lease_id(), " of job ", job.id,
            " is stale (expired or released; the job was leased again)"));
  if (job.past_leases.empty())
    return absl::FailedPreconditionError(Cat("job ", job.id, " was never leased; lease ",
                                             request.lease_id(), " is not one of its leases"));
  return absl::FailedPreconditionError(
      Cat("lease ", request.lease_id(), " was never issued for job ", job.id));
}

void Coordinator::CompleteJob(const v1::CompleteJobRequest& request, CompleteCallback cb,
                              const Caller& caller) {
  // A slow check (a match's replay) runs outside the lock on copies (the job's spec does not
  // change while the job can still take a result); the lease checks below decide whether its
  // verdict is used.
  std::optional<absl::Status> slow;
  {
    std::function<absl::Status()> check;
    {
      absl::MutexLock lock(&mu_);
      Job* job = queue_.Find(request.job_id());
      if (job) check = runs_[job->run_id]->handler->SlowCheck(*job, request);
    }
    if (check) slow = check();
  }
  absl::Status error;
  bool duplicate = false;
  std::vector<RunUpdate> bench_updates;  // a run that a source bench disagreement ended
  {
    absl::MutexLock lock(&mu_);
    Job* job = queue_.Find(request.job_id());
    absl::StatusOr<WorkerInfo*> worker = CallerWorkerLocked(request.worker_id(), caller);
    if (shutting_down_) {
      error = ShuttingDownError();
    } else if (!worker.ok()) {
      error = worker.status();
    } else if (!job) {
      error = NoJobError(request.job_id());
    } else {
      for (const Result& r : job->results)
        if (r.lease_id == request.lease_id()) duplicate = true;
      if (!duplicate) {
        if (CommitLog::Entry* queued = commits_->Find(job->id, request.lease_id())) {
          queued->callbacks.push_back(std::move(cb));
          if (metrics_) metrics_->Completion("duplicate");
          return;
        }
        const size_t index = JobQueue::LeaseIndex(*job, request.lease_id());
        error = CheckCompletionLocked(*job, request, index);
        if (error.ok()) {
          Run& run = *runs_[job->run_id];
          bool requeue = false;
          absl::StatusOr<Result> result = run.handler->CheckResult(*job, request, slow, requeue);
          if (result.ok() && request.has_match())
            if (absl::Status st = SourceBenchLocked(run, *job, **worker, request, bench_updates);
                !st.ok()) {
              result = st;  // not counted: another worker plays the job, this one no more of it
              requeue = true;
            }
          if (result.ok()) {
            WorkerInfo* w = *worker;
            CommitLog::Entry e{job->id, job->run_id, run.handler.get(), std::move(*result), {}};
            e.result.worker_id = request.worker_id();
            e.result.worker_name = w->name;
            e.result.token = w->identity;
            e.result.lease_id = request.lease_id();
            e.result.seconds = request.seconds();
            e.callbacks.push_back(std::move(cb));
            ++job->pending;
            RemoveLeaseLocked(*job, index);
            commits_->Add(std::move(e));
            workers_.Touch(*w);
            return;  // the commit log answers
          }
          error = result.status();
          if (requeue) {
            ++run.version;
            RemoveLeaseLocked(*job, index);
            queue_.Requeue(job->id);
            spdlog::warn("job {}: result of worker {} refused: {}", job->id, request.worker_id(),
                         std::string(error.message()));
          }
        }
      }
    }
    if (metrics_) metrics_->Completion(duplicate ? "duplicate" : "rejected");
  }
  if (!bench_updates.empty())
    if (absl::Status st = store_->Commit({}, bench_updates); !st.ok())
      spdlog::error("storing a run's end: {}", st.ToString());
  if (duplicate) {
    v1::CompleteJobResponse r;
    r.set_duplicate(true);
    cb(r);
  } else {
    cb(error);
  }
}

absl::Status Coordinator::ReleaseJob(const v1::ReleaseJobRequest& request, const Caller& caller) {
  if (request.reason().size() > 4096)
    return absl::InvalidArgumentError(
        Cat("reason must have at most 4096 bytes, got ", request.reason().size()));
  if (request.has_refusal()) RETURN_IF_ERROR(CheckEngineRefusal(request.refusal()));
  Deferred deferred;
  std::vector<RunUpdate> updates;
  {
    absl::MutexLock lock(&mu_);
    absl::StatusOr<WorkerInfo*> w = CallerWorkerLocked(request.worker_id(), caller);
    if (!w.ok()) return w.status();
    Job* job = queue_.Find(request.job_id());
    if (!job) return NoJobError(request.job_id());
    const size_t index = JobQueue::LeaseIndex(*job, request.lease_id());
    if (index == job->leases.size() || job->leases[index].worker_id != request.worker_id())
      return absl::FailedPreconditionError(Cat("lease ", request.lease_id(), " of job ", job->id,
                                               " is not held by worker ", request.worker_id()));
    RemoveLeaseLocked(*job, index);
    if (!job->done && !job->cancelled) queue_.Requeue(job->id);
    Run& run = *runs_[job->run_id];
    ++run.version;
    spdlog::info("job {}: released by worker {} ({})", job->id, request.worker_id(),
                 request.reason());
    if (request.has_refusal())
      RefusedLocked(run, **w, request.worker_id(), request.refusal(), updates);
    DispatchLocked(deferred);
  }
  for (auto& f : deferred) f();
  if (!updates.empty()) RETURN_IF_ERROR(store_->Commit({}, updates));
  return absl::OkStatus();
}

void Coordinator::IngestResultLocked(Job& job, Result result, std::vector<RunUpdate>& updates) {
  --job.pending;
  Run& run = *runs_[job.run_id];
  if (job.leases.empty() && job.pending == 0 && run.jobs_leased > 0) --run.jobs_leased;
  if (WorkerInfo* w = workers_.Find(result.worker_id)) {
    double nodes = 0;
    for (uint64_t c : result.counts) nodes += double(c);
    workers_.NoteWork(*w, nodes, result.seconds,
                      result.match ? uint32_t(result.match->games_size()) : 0);
  }
  job.results.push_back(std::move(result));
  ++run.version;
  if (!job.open() || IsTerminal(run.state)) return;
  ApplyResultLocked(run, job, updates);
}

std::vector<RunUpdate> Coordinator::BeforeCommitLocked(const std::vector<CommitLog::Entry>& batch) {
  std::vector<RunUpdate> started;
  for (const CommitLog::Entry& e : batch) {
    Run& run = *runs_[e.run_id];
    if (!run.started_persisted && !IsTerminal(run.state)) {
      run.started_persisted = true;
      started.push_back({run.id, int(run.state), run.started_unix, 0, "", ""});
    }
  }
  return started;
}

void Coordinator::AfterCommitLocked(std::vector<CommitLog::Entry>& batch, const absl::Status& st,
                                    double seconds, std::vector<RunUpdate>& finished,
                                    Deferred& deferred) {
  if (metrics_) metrics_->commit.Observe(seconds);
  for (CommitLog::Entry& e : batch) {
    Job* job = queue_.Find(e.job_id);
    if (!st.ok()) {
      if (job) {
        --job->pending;
        if (!job->done && !job->cancelled) queue_.Requeue(e.job_id);
      }
    } else if (job) {
      IngestResultLocked(*job, std::move(e.result), finished);
    }
    if (metrics_) metrics_->Completion(st.ok() ? "committed" : "rejected");
  }
  for (CommitLog::Entry& e : batch) {
    for (auto& cb : e.callbacks) {
      if (st.ok())
        deferred.push_back([cb = std::move(cb)] { cb(v1::CompleteJobResponse()); });
      else
        deferred.push_back([cb = std::move(cb), st] {
          cb(absl::UnavailableError(Cat("result not committed: ", std::string(st.message()))));
        });
    }
  }
  if (!st.ok()) DispatchLocked(deferred);
  // A run these results finished is told to its watchers as soon as its end is stored (the
  // deferred steps run after `finished` is committed), not at the next tick: the command
  // that waits for a run's result would otherwise wait up to a tick longer.
  if (!finished.empty()) deferred.push_back([this] { NotifyWatches(); });
}

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
    spdlog::warn("job {}: lease {} of worker {} expired; re-queued", job->id, lease.id,
                 lease.worker_id);
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
  else if (run.jobs_done == run.jobs.size())
    FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, "", updates);
  DispatchLocked(deferred);
}

}  // namespace arbiter::coordinator

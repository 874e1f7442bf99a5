// The worker-facing half of the Coordinator facade (WorkService): registration, leases and long
// polls, heartbeats, completions through the commit log (the reaper's tick: coordinator_tick.cc).
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
#include "proto/wire_enums.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

absl::Status NoJobError(uint64_t job_id) {
  return absl::NotFoundError(Cat("job ", job_id, " does not exist"));
}
absl::Status UnknownWorkerError(const std::string& worker_id) {
  return absl::NotFoundError(Cat("unknown worker id '", worker_id, "': register first"));
}

// What the worker declared: RegisterRequest.worker, or from a worker older than it the
// deprecated fields of the same numbers, read as a WorkerInfo. The one place the old strings
// become enums; an enum value this coordinator does not know reads as unspecified, so the
// registry holds known values only and an unknown isolation confines nothing.
v1::WorkerInfo DeclaredWorker(const v1::RegisterRequest& request) {
  v1::WorkerInfo info;
  if (request.has_worker()) {
    info = request.worker();
  } else {
    info.ParseFromString(request.SerializeAsString());
    // results_in_flight, perft_lanes, job_progress: the request's own fields, and isolation and
    // perft_path, WorkerInfo's reserved ones, all unknown to it. Cleared at the top only:
    // protobuf 3.21's DiscardUnknownFields walks into the labels map and reads freed memory (a SEGV
    // under ThreadSanitizer).
    info.GetReflection()->MutableUnknownFields(&info)->Clear();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    info.set_engine_isolation(IsolationFromString(request.isolation()));
    info.set_perft_core_path(PerftPathFromString(request.perft_path()));
#pragma GCC diagnostic pop
  }
  if (!v1::Isolation_IsValid(info.engine_isolation()))
    info.set_engine_isolation(v1::ISOLATION_UNSPECIFIED);
  if (!v1::PerftPath_IsValid(info.perft_core_path()))
    info.set_perft_core_path(v1::PERFT_PATH_UNSPECIFIED);
  return info;
}

}  // namespace

absl::StatusOr<v1::RegisterResponse> Coordinator::Register(const v1::RegisterRequest& request,
                                                           const Caller& caller) {
  const v1::WorkerInfo declared = DeclaredWorker(request);
  if (declared.name().size() > 256 || declared.version().size() > 256 ||
      declared.hash_group().size() > 256 || declared.cpu_flags_size() > 512)
    return absl::InvalidArgumentError(
        "worker name, version and hash_group must have at most 256 bytes, cpu_flags 512 entries");
  if (HasControl(declared.name()) || HasControl(declared.version()) ||
      HasControl(declared.hostname()) || HasControl(declared.hash_group()))
    return absl::InvalidArgumentError(
        "worker name, version, hostname and hash_group may not hold control characters");
  if (declared.engine_dirs_size() > 64)
    return absl::InvalidArgumentError(
        Cat("at most 64 engine directories, got ", declared.engine_dirs_size()));
  for (const std::string& d : declared.engine_dirs())
    if (d.empty() || d[0] != '/' || d.size() > 4096)
      return absl::InvalidArgumentError(Cat("engine directory '", d.substr(0, 64),
                                            "' must be an absolute path of at most 4096 bytes"));
  RETURN_IF_ERROR(ValidateEngineLimits(declared.engine_limits(), "engine_limits"));
  RETURN_IF_ERROR(ValidateLabels(declared.labels(), "worker labels"));
  if (declared.build_toolchain().size() > 256)
    return absl::InvalidArgumentError(Cat("build_toolchain must have at most 256 bytes, got ",
                                          declared.build_toolchain().size()));
  if (declared.cpu_level() > 4 || declared.hostname().size() > 256)
    return absl::InvalidArgumentError(Cat("cpu_level must be 0..4 (got ", declared.cpu_level(),
                                          ") and hostname at most 256 bytes (got ",
                                          declared.hostname().size(), ")"));
  for (const std::string& f : declared.cpu_flags())
    if (f.size() > 32)
      return absl::InvalidArgumentError(Cat("cpu flag '", f.substr(0, 40), "' is over 32 bytes"));
  if (declared.threads() > kMaxWorkerThreads)
    return absl::InvalidArgumentError(
        Cat("threads must be at most ", kMaxWorkerThreads, ", got ", declared.threads()));
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  if (!workers_.MakeRoom(caller.name, kMaxWorkersPerToken))
    return absl::ResourceExhaustedError(
        Cat("token '", caller.name, "' has ", kMaxWorkersPerToken,
            " workers registered and connected: no more (use another token for more)"));
  WorkerInfo info;
  info.name = declared.name();
  // A worker leases at most as many jobs as it runs threads (and one whose result it reports
  // while counting the next, when it says so); the declarations are capped.
  info.threads = std::clamp<uint32_t>(declared.threads(), 1, kMaxWorkerThreads);
  info.results_in_flight = std::min<uint32_t>(request.results_in_flight(), 1);
  info.hash_group = declared.hash_group();
  info.token = caller.name;
  // Empty (only the worker id tells it apart) when the caller is known by neither.
  if (!caller.name.empty() || !caller.peer.empty())
    info.identity = Cat(caller.name, "@", caller.peer);
  info.isolation = declared.engine_isolation();
  info.version = declared.version();
  info.cores = declared.cores();
  info.engine_dirs.assign(declared.engine_dirs().begin(), declared.engine_dirs().end());
  info.engine_limits = declared.engine_limits();
  info.cpu_level = std::max<int>(1, int(declared.cpu_level()));
  info.memory_bytes = declared.memory_bytes();
  info.labels.insert(declared.labels().begin(), declared.labels().end());
  info.hostname = declared.hostname();
  info.perft_path = declared.perft_core_path();
  info.perft_lanes = request.perft_lanes();
  info.job_progress = request.job_progress();
  info.build_toolchain = declared.build_toolchain();
  info.cpu_flags.assign(declared.cpu_flags().begin(), declared.cpu_flags().end());
  const std::string id = workers_.Register(std::move(info));
  spdlog::info(
      "worker {} registered: name '{}', {} threads, {} cores, cpu {}, perft path {}, version "
      "'{}', engine isolation '{}'",
      id, workers_.Find(id)->name, declared.threads(), declared.cores(),
      CpuLevelName(std::max<int>(1, int(declared.cpu_level()))),
      PerftPathString(declared.perft_core_path()), declared.version(),
      IsolationString(declared.engine_isolation()));
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
  // Watched when the worker reports the job's progress: every worker for perft, a worker that
  // declares it (RegisterRequest.job_progress) for the other kinds.
  const bool watched = options_.lease_progress_seconds > 0 && run.handler->ReportsProgress() &&
                       (!run.handler->ProgressDeclared() || (w && w->job_progress));
  const Lease& lease = queue_.Grant(
      job, worker_id, w ? w->identity : std::string(),
      watched ? Seconds(options_.lease_progress_seconds) : SteadyClock::duration::zero());
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
    } else if (absl::Status quarantined = QuarantinedLocked(w->token); !quarantined.ok()) {
      now = quarantined;
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
  if (absl::Status quarantined = QuarantinedLocked((*w)->token); !quarantined.ok()) {
    // Its leases were taken back when the quarantine began.
    out.set_stop(true);
    out.set_reason(std::string(quarantined.message()));
    return out;
  }
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
    queue_.Progress(job, index, request.progress(), Seconds(options_.lease_progress_seconds));
    out.set_lease_seconds(options_.lease_seconds);
    return out;
  }
  if (JobQueue::WasIssued(job, request.lease_id())) {
    out.set_stop(true);
    out.set_reason(job.done ? Cat("job ", job.id, " is already done")
                   : job.stalled_lease == request.lease_id()
                       ? Cat("lease ", request.lease_id(), " of job ", job.id,
                             " showed no progress for ", options_.lease_progress_seconds,
                             " s (--lease-progress-s); the job was re-queued")
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
    } else if (absl::Status quarantined = QuarantinedLocked((*worker)->token); !quarantined.ok()) {
      error = quarantined;
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
            e.result.token_name = w->token;
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
  if (run.handler->Recountable() && quarantined_.contains(result.token_name) &&
      !result.token_name.empty()) {
    // Its token was quarantined while the result was committed (or before a restart): voided.
    if (absl::Status st = store_->DeleteResult(job.id, result.lease_id); !st.ok())
      spdlog::error("job {}: voiding a result of quarantined token '{}': {}", job.id,
                    result.token_name, st.ToString());
    if (job.open() && !IsTerminal(run.state)) queue_.Requeue(job.id);
    return;
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

}  // namespace arbiter::coordinator

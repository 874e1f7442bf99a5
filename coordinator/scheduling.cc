// The scheduling half of the Coordinator facade: which worker may take which run's jobs (run
// requirements, isolation, engine directories, refusals, lanes), why a run waits, a run's
// priority and throughput, and the workers' list and draining. JobQueue picks among the runs.
#include "coordinator/scheduling.h"

#include <optional>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/coordinator.h"
#include "proto/run_states.h"
#include "proto/wire_enums.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

absl::Status CheckScheduling(std::optional<int> priority, std::optional<uint32_t> throughput,
                             const Caller& caller) {
  if (priority && (*priority < -100 || *priority > 100))
    return absl::InvalidArgumentError(Cat("priority must be in -100..100, got ", *priority));
  if (throughput && *throughput > 1000)
    return absl::InvalidArgumentError(
        Cat("throughput must be in 1..1000 percent (0: 100), got ", *throughput));
  if (priority && *priority > 0 && !caller.admin())
    return absl::PermissionDeniedError(
        Cat("priority ", *priority, " is above the default (0): only an admin may set it"));
  // A larger share takes leases from everyone else's runs, as a higher priority does.
  if (throughput && *throughput > 100 && !caller.admin())
    return absl::PermissionDeniedError(
        Cat("throughput ", *throughput, "% is above the default (100): only an admin may set it"));
  return absl::OkStatus();
}

absl::Status CheckScheduling(const v1::Scheduling& s, const Caller& caller) {
  RETURN_IF_ERROR(ValidateRequirements(s.requirements()));
  return CheckScheduling(s.priority(), s.throughput(), caller);
}

absl::StatusOr<v1::Run> Coordinator::SetScheduling(const v1::SetSchedulingRequest& request,
                                                   const Caller& caller) {
  std::optional<int> priority;
  std::optional<uint32_t> throughput;
  if (request.has_priority()) priority = request.priority();
  if (request.has_throughput()) throughput = request.throughput();
  RETURN_IF_ERROR(CheckScheduling(priority, throughput, caller));
  int new_priority, new_throughput;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(request.run_id());
    if (it == runs_.end()) return NoRunError(request.run_id());
    Run& run = *it->second;
    if (run.owner != caller.name && !caller.admin())
      return absl::PermissionDeniedError(Cat("run ", run.id, " belongs to '", run.owner,
                                             "': only its owner or an admin may change it"));
    if (IsTerminal(run.state))
      return absl::FailedPreconditionError(Cat("run ", run.id, " has finished"));
    new_priority = priority.value_or(run.priority);
    new_throughput = throughput ? (*throughput == 0 ? 100 : int(*throughput)) : run.throughput;
  }
  // Durable before it takes effect (a restart keeps it).
  RETURN_IF_ERROR(store_->SetScheduling(request.run_id(), new_priority, new_throughput));
  Deferred deferred;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(request.run_id());
    if (it == runs_.end()) return NoRunError(request.run_id());
    Run& run = *it->second;
    run.priority = new_priority;
    run.throughput = new_throughput;
    if (!IsTerminal(run.state)) queue_.SetRun(run.id, run.owner, run.priority, run.throughput);
    ++run.version;
    DispatchLocked(deferred);
    out = BuildRunLocked(run);
  }
  for (auto& f : deferred) f();
  spdlog::info("run {}: priority {}, throughput {}% (by '{}')", out.id(), new_priority,
               new_throughput, caller.name);
  return out;
}

Job* Coordinator::TakeJobLocked(const std::string& worker_id) {
  WorkerInfo* w = workers_.Find(worker_id);
  if (!w || w->draining || w->leases >= w->LeaseSlots() || quarantined_.contains(w->token))
    return nullptr;
  const WorkerInfo& worker = *w;
  return queue_.Take(
      worker_id, w->identity,
      [&](uint64_t run_id) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        auto r = runs_.find(run_id);
        return r == runs_.end() ? kNoLane : LaneOfLocked(*r->second, worker_id);
      },
      [&](const Job& job) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        auto r = runs_.find(job.run_id);
        return r == runs_.end() || IneligibleLocked(worker_id, worker, *r->second, job).empty();
      },
      // A worker that lacks what a run requires skips the whole run, not job by job.
      [&](uint64_t run_id) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        auto r = runs_.find(run_id);
        return r == runs_.end() || UnmetRequirement(worker, r->second->requirements).empty();
      },
      [&](const Job& far_end, uint64_t queued) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        auto r = runs_.find(far_end.run_id);
        return r == runs_.end() || MayStealLocked(*r->second, far_end, queued);
      });
}

bool Coordinator::MayStealLocked(const Run& run, const Job& far_end, uint64_t queued) {
  // Lanes of jobs: any time (each job is a region of the tree of its own; a worker's table helps
  // its neighbours less). Lanes of keys: a lane's jobs are the same regions as the other lanes'
  // and the lane's worker's table holds what they share.
  if (run.handler->WorkLane(far_end) == kNoLane || queued >= kStealMinQueued) return true;
  if (far_end.lane >= run.lane_workers.size()) return true;  // a lane nobody has claimed
  const std::string& owner = run.lane_workers[far_end.lane];
  const WorkerInfo* w = owner.empty() ? nullptr : workers_.Find(owner);
  return !w || !workers_.Connected(owner) || w->draining;
}

std::string Coordinator::IneligibleLocked(const std::string& worker_id, const WorkerInfo& worker,
                                          const Run& run, const Job& job) {
  // Someone else's uploaded program runs only where it is boxed in, unless an admin vouched;
  // a `path` engine only where the worker's --engine-dir allows it.
  const RunHandler& handler = *run.handler;
  if (!IsolationConfines(worker.isolation) && !run.trusted && handler.RunsUploadedCode(job))
    return Cat("isolation '", IsolationString(worker.isolation),
               "', the run's uploaded engines need namespaces or landlock");
  if (worker.build_toolchain.empty() && handler.BuildsSource(job))
    return "no compiler, the run's engines are built from source";
  if (!AllowsEnginePaths(worker, handler.EnginePaths(job)))
    return "an --engine-dir that does not hold the run's engine paths";
  // A worker that refused the run's engines (their bench) gets none of its jobs again, and a
  // game slot never needs more threads than the worker declared.
  if (run.refused_workers.contains(worker_id)) return "refused the run's engines (their bench)";
  // Games the residual check set aside (or an admin voided): none of the run's jobs for the
  // worker or the other workers of its token.
  if (run.barred_workers.contains(worker_id) ||
      (!worker.token.empty() && run.barred_tokens.contains(worker.token)))
    return "its games in the run were set aside by the residual check";
  // A job of a lane of keys goes only to a worker that counts the lane alone, not the whole job.
  if (!worker.perft_lanes && handler.WorkLane(job) != kNoLane)
    return "no lanes of keys (an older worker), the run's perft jobs count lanes of keys";
  if (const uint32_t needs = handler.ThreadsPerGame(job); needs > worker.threads)
    return Cat(worker.threads, " threads, a game of the run needs ", needs);
  return "";
}

std::string Coordinator::WaitingLocked(const Run& run) {
  const Job* queued = nullptr;  // what the run's next lease needs
  for (uint64_t id : run.jobs) {
    const Job* job = queue_.Find(id);
    if (job && job->open() && job->leases.empty() && job->pending == 0) {
      queued = job;
      break;
    }
  }
  if (!queued) return "";
  return workers_.WhyNoWorker(
      [&](const std::string& id, const WorkerInfo& w) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        std::string unmet = UnmetRequirement(w, run.requirements);
        return unmet.empty() ? IneligibleLocked(id, w, run, *queued) : unmet;
      });
}

uint32_t Coordinator::LaneOfLocked(Run& run, const std::string& worker_id) {
  std::vector<std::string>& lanes = run.lane_workers;
  for (size_t l = 0; l < lanes.size(); ++l)
    if (lanes[l] == worker_id) return uint32_t(l);
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (lanes[l].empty() || !workers_.Connected(lanes[l])) {
      lanes[l] = worker_id;
      return uint32_t(l);
    }
  }
  return kNoLane;
}

v1::ListWorkersResponse Coordinator::ListWorkersLocked(bool all) {
  v1::ListWorkersResponse out = workers_.List(all);
  // The runs of each worker's leases.
  absl::flat_hash_map<std::string, std::vector<uint64_t>> runs_of;
  for (const auto& [id, run] : runs_) {
    if (IsTerminal(run->state) || run->jobs_leased == 0) continue;
    for (uint64_t job_id : run->jobs)
      if (const Job* job = queue_.Find(job_id))
        for (const Lease& l : job->leases) runs_of[l.worker_id].push_back(id);
  }
  for (v1::WorkerStatus& w : *out.mutable_workers()) {
    if (auto it = runs_of.find(w.worker_id()); it != runs_of.end())
      for (uint64_t run : it->second) w.add_leased_runs(run);
    if (auto q = quarantined_.find(w.token()); q != quarantined_.end() && !w.token().empty())
      w.set_quarantine(q->second.reason);
  }
  return out;
}

v1::ListWorkersResponse Coordinator::ListWorkers(const v1::ListWorkersRequest& request) {
  absl::MutexLock lock(&mu_);
  return ListWorkersLocked(request.include_disconnected());
}

absl::StatusOr<v1::ListWorkersResponse> Coordinator::DrainWorkers(
    const v1::DrainWorkersRequest& request, const Caller& caller) {
  if (request.name().size() > 256 || request.worker_id().size() > 256)
    return absl::InvalidArgumentError("worker name and id have at most 256 bytes");
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(workers_.Drain(request.name(), request.worker_id(), !request.undo()));
  spdlog::info("workers {}{}: {} (by '{}')", request.name(), request.worker_id(),
               request.undo() ? "leased to again" : "draining", caller.name);
  return ListWorkersLocked(true);
}

}  // namespace arbiter::coordinator

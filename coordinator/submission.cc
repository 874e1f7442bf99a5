// Submissions: the plan of a run (at most max_concurrent_plans at once), the submitter's limits
// (unfinished runs, rate, queued jobs), the run stored with its jobs and queued; and uploads.
#include <algorithm>
#include <thread>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/coordinator.h"
#include "coordinator/games_run.h"
#include "coordinator/movegen_run.h"
#include "coordinator/perft_run.h"
#include "coordinator/scheduling.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

PlanContext Coordinator::Context() {
  PlanContext context;
  {
    absl::MutexLock lock(&mu_);
    context.connected_workers = workers_.ConnectedWorkers();
    context.hash_tables = workers_.ConnectedHashTables();
    context.max_worker_threads = workers_.MaxThreads();
    context.workers_fill_host =
        workers_.FillHost(options_.host, std::max(1u, std::thread::hardware_concurrency()));
    context.workers_count_key_lanes = workers_.AllCountKeyLanes();
  }
  context.engine_known = [this](const std::string& sha) { return engines_->Known(sha); };
  return context;
}

absl::StatusOr<v1::Run> Coordinator::SubmitPerft(const v1::SubmitPerftRequest& request,
                                                 const Caller& caller) {
  RETURN_IF_ERROR(CheckAcceptingRuns());
  RETURN_IF_ERROR(CheckScheduling(request.scheduling(), caller));
  RETURN_IF_ERROR(CheckOwnerLimits(caller.name));
  return Submit(PlanInSlot([&] { return PlanPerftRun(request, Context()); }), caller,
                request.scheduling());
}

absl::StatusOr<v1::Run> Coordinator::SubmitMatch(const v1::SubmitMatchRequest& request,
                                                 const Caller& caller) {
  RETURN_IF_ERROR(CheckScheduling(request.settings().scheduling(), caller));
  RETURN_IF_ERROR(CheckOwnerLimits(caller.name));
  return Submit(PlanInSlot([&] { return PlanMatchRun(request, Context()); }), caller,
                request.settings().scheduling());
}

absl::StatusOr<v1::Run> Coordinator::SubmitTournament(const v1::SubmitTournamentRequest& request,
                                                      const Caller& caller) {
  RETURN_IF_ERROR(CheckScheduling(request.settings().scheduling(), caller));
  RETURN_IF_ERROR(CheckOwnerLimits(caller.name));
  return Submit(PlanInSlot([&] { return PlanTournamentRun(request, Context()); }), caller,
                request.settings().scheduling());
}

absl::StatusOr<v1::Run> Coordinator::SubmitMovegenCheck(
    const v1::SubmitMovegenCheckRequest& request, const Caller& caller) {
  RETURN_IF_ERROR(CheckAcceptingRuns());
  RETURN_IF_ERROR(CheckScheduling(request.scheduling(), caller));
  RETURN_IF_ERROR(CheckOwnerLimits(caller.name));
  return Submit(PlanInSlot([&] { return PlanMovegenCheckRun(request, Context()); }), caller,
                request.scheduling());
}

absl::Status Coordinator::CheckOwnerLimits(const std::string& owner) {
  absl::MutexLock lock(&mu_);
  size_t active = 0;
  for (const auto& [id, run] : runs_) active += run->owner == owner && !IsTerminal(run->state);
  if (active >= options_.max_active_runs)
    return absl::ResourceExhaustedError(Cat("'", owner, "' has ", active,
                                            " unfinished runs, the limit per token (",
                                            options_.max_active_runs, "); cancel one or wait"));
  const auto now = now_();
  std::deque<Clock::time_point>& times = submissions_[owner];
  while (!times.empty() && now - times.front() > std::chrono::minutes(1)) times.pop_front();
  if (times.size() >= options_.max_submissions_per_minute)
    return absl::ResourceExhaustedError(Cat("'", owner, "' submitted ", times.size(),
                                            " runs in the last minute, the limit per token (",
                                            options_.max_submissions_per_minute, ")"));
  times.push_back(now);
  return absl::OkStatus();
}

absl::StatusOr<RunPlan> Coordinator::PlanInSlot(
    const std::function<absl::StatusOr<RunPlan>()>& plan) {
  constexpr double kPlanWaitSeconds = 30;
  {
    absl::MutexLock lock(&plan_mu_);
    const auto free = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(plan_mu_) {
      return plans_running_ < options_.max_concurrent_plans;
    };
    if (!plan_mu_.AwaitWithTimeout(absl::Condition(&free), absl::Seconds(kPlanWaitSeconds)))
      return absl::ResourceExhaustedError(
          Cat("the coordinator is planning ", plans_running_, " other runs; submit again later"));
    ++plans_running_;
  }
  absl::StatusOr<RunPlan> out = plan();
  absl::MutexLock lock(&plan_mu_);
  --plans_running_;
  return out;
}

absl::Status Coordinator::DeleteEngine(const std::string& sha256, const Caller& caller) {
  ASSIGN_OR_RETURN(v1::Engine engine, engines_->Get(sha256));
  if (!caller.admin() && engine.owner() != caller.name)
    return absl::PermissionDeniedError(Cat("engine ", sha256, " was uploaded by '", engine.owner(),
                                           "'; only its uploader or an admin may delete it"));
  return engines_->Delete(sha256);
}

absl::StatusOr<v1::Engine> Coordinator::AddEngine(const std::string& name,
                                                  const std::string& temp_path,
                                                  const Caller& caller) {
  return engines_->Add(name, temp_path, caller.name, options_.upload_quota_bytes);
}

absl::StatusOr<v1::Run> Coordinator::Submit(absl::StatusOr<RunPlan> planned, const Caller& caller,
                                            const v1::Scheduling& scheduling) {
  if (!planned.ok()) return planned.status();
  RETURN_IF_ERROR(CheckAcceptingRuns());
  RunPlan& plan = *planned;
  {
    absl::MutexLock lock(&mu_);
    RETURN_IF_ERROR(workers_.CheckEnginePaths(plan.engine_paths));
    if (!caller.admin()) {
      uint64_t queued = 0;
      for (const auto& [id, run] : runs_)
        if (run->owner == caller.name && !IsTerminal(run->state))
          queued += run->jobs.size() - run->jobs_done - run->jobs_cancelled;
      if (queued + plan.job_specs.size() > options_.max_queued_jobs)
        return absl::ResourceExhaustedError(
            Cat("'", caller.name, "' has ", queued, " jobs queued; this run's ",
                plan.job_specs.size(), " would pass the limit per token (",
                options_.max_queued_jobs, "): cancel a run, or wait for one to finish"));
    }
  }
  const auto store_start = Clock::now();
  auto run = std::make_unique<Run>();
  run->state = v1::RUN_STATE_QUEUED;
  run->created_unix = UnixNow();
  run->owner = caller.name;
  run->trusted = caller.admin();
  run->priority = scheduling.priority();
  run->throughput = scheduling.throughput() == 0 ? 100 : int(scheduling.throughput());
  run->handler = std::move(plan.handler);
  if (const size_t lanes = run->handler->LaneCount(); lanes >= 2)
    run->lane_workers.assign(lanes, "");
  StoredRun stored;
  stored.kind = run->kind();
  stored.state = run->state;
  stored.created_unix = run->created_unix;
  stored.owner = run->owner;
  stored.priority = run->priority;
  stored.throughput = run->throughput;
  stored.spec = run->handler->SerializeSpec();
  std::vector<StoredJob> stored_jobs(plan.job_specs.size());
  for (size_t i = 0; i < stored_jobs.size(); ++i)
    stored_jobs[i].spec = std::move(plan.job_specs[i]);
  RETURN_IF_ERROR(store_->CreateRun(stored, stored_jobs));
  run->id = stored.id;
  std::vector<std::unique_ptr<Job>> jobs;
  jobs.reserve(stored_jobs.size());
  for (size_t i = 0; i < stored_jobs.size(); ++i) {
    auto job = std::make_unique<Job>();
    job->id = stored_jobs[i].id;
    job->run_id = run->id;
    job->index = uint32_t(i);
    job->want = run->handler->ResultsWanted();
    if (i < plan.lanes.size()) job->lane = plan.lanes[i];
    jobs.push_back(std::move(job));
  }
  Deferred deferred;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    const uint64_t id = run->id;
    AddRunLocked(std::move(run), std::move(jobs));
    Run& added = *runs_[id];
    if (!IsTerminal(added.state))
      if (std::unique_ptr<JobSource> source = added.handler->MakeJobSource())
        sources_[id] = std::move(source);
    DispatchLocked(deferred);
    out = BuildRunLocked(added);
  }
  for (auto& f : deferred) f();
  spdlog::info("run {}: {}; stored {:.3f} s", out.id(), plan.summary,
               std::chrono::duration<double>(Clock::now() - store_start).count());
  return out;
}

size_t Coordinator::JobsInMemory() {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

absl::Status Coordinator::CheckAcceptingRuns() {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  return absl::OkStatus();
}

}  // namespace arbiter::coordinator

#include "coordinator/coordinator.h"

#include <malloc.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/engine_reports.h"
#include "coordinator/games_run.h"
#include "coordinator/metrics.h"
#include "coordinator/movegen_run.h"
#include "coordinator/perft_run.h"
#include "coordinator/pgn_export.h"
#include "coordinator/run_outcome.h"
#include "coordinator/scheduling.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
Coordinator::Coordinator(const CoordinatorOptions& options, std::unique_ptr<Store> store,
                         prometheus::Registry* registry)
    : options_(options),
      now_(options.clock ? options.clock : [] { return Clock::now(); }),
      store_(std::move(store)),
      queue_(options.lease_seconds, now_),
      workers_(Seconds(options.lease_seconds + options.default_wait_seconds), now_) {
  if (registry) metrics_ = std::make_unique<CoordinatorMetrics>(*registry);
}

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Open(const CoordinatorOptions& options,
                                                               prometheus::Registry* registry) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data DIR is required");
  if (options.lease_seconds <= 0)
    return absl::InvalidArgumentError(
        Cat("lease seconds must be > 0, got ", options.lease_seconds));
  if (!(options.tick_seconds > 0 && options.tick_seconds <= 3600))
    return absl::InvalidArgumentError(
        Cat("tick seconds must be in (0, 3600], got ", options.tick_seconds));
  if (!(options.finished_run_gauge_seconds >= 0 && options.finished_run_gauge_seconds <= 86400))
    return absl::InvalidArgumentError(Cat("finished run gauge seconds must be in [0, 86400], got ",
                                          options.finished_run_gauge_seconds));
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(options.data_dir));
  std::unique_ptr<Coordinator> c(new Coordinator(options, std::move(store), registry));
  ASSIGN_OR_RETURN(c->engines_, EngineStore::Open(options.data_dir, c->store_.get()));
  ASSIGN_OR_RETURN(c->tokens_, TokenRegistry::Open(c->store_.get()));
  RETURN_IF_ERROR(c->Load());
  c->reaper_ = std::thread([p = c.get()] { p->ReaperLoop(); });
  c->producer_ = std::thread([p = c.get()] { p->ProducerLoop(); });
  Coordinator* p = c.get();
  c->commits_ = std::make_unique<CommitLog>(
      c->mu_, *c->store_,
      CommitLog::Hooks{
          .before = [p](const std::vector<CommitLog::Entry>& batch)
                        ABSL_NO_THREAD_SAFETY_ANALYSIS { return p->BeforeCommitLocked(batch); },
          .after =
              [p](std::vector<CommitLog::Entry>& batch, const absl::Status& st, double seconds,
                  std::vector<RunUpdate>& finished, Deferred& deferred)
                  ABSL_NO_THREAD_SAFETY_ANALYSIS {
                    p->AfterCommitLocked(batch, st, seconds, finished, deferred);
                  }});
  return c;
}

Coordinator::~Coordinator() {
  Shutdown();
  commits_.reset();  // writes what is queued
  {
    absl::MutexLock lock(&mu_);
    stop_threads_ = true;
  }
  if (reaper_.joinable()) reaper_.join();
  if (producer_.joinable()) producer_.join();
  if (tokens_) (void)tokens_->Flush();
}

absl::Status Coordinator::Load() {
  ASSIGN_OR_RETURN(std::vector<StoredRun> runs, store_->LoadRuns());
  ASSIGN_OR_RETURN(std::vector<StoredQuarantine> quarantines, store_->LoadQuarantines());
  ASSIGN_OR_RETURN(std::vector<StoredResidual> residuals, store_->LoadResiduals());
  std::map<uint64_t, std::vector<v1::WorkerResidual>> verdicts;  // by run
  for (const StoredResidual& r : residuals)
    if (!verdicts[r.run_id].emplace_back().ParseFromString(r.verdict))
      return absl::DataLossError(
          Cat("run ", r.run_id, ": unreadable residual verdict of worker ", r.worker_id));
  std::vector<RunUpdate> updates;
  {
    absl::MutexLock lock(&mu_);
    // Before the runs: a result of a quarantined token stored in the moment before its quarantine
    // is voided as it loads.
    for (StoredQuarantine& q : quarantines) quarantined_[q.name] = std::move(q);
    int resumed = 0;
    for (StoredRun& stored : runs) {
      const bool unfinished = !IsTerminal(v1::RunState(stored.state));
      RETURN_IF_ERROR(LoadRun(stored, verdicts[stored.id], updates));
      resumed += unfinished;
    }
    if (resumed) spdlog::info("resumed {} unfinished run(s)", resumed);
  }
  if (!updates.empty()) RETURN_IF_ERROR(store_->Commit({}, updates));
  return absl::OkStatus();
}

absl::Status Coordinator::LoadRun(StoredRun& stored,
                                  const std::vector<v1::WorkerResidual>& verdicts,
                                  std::vector<RunUpdate>& updates) {
  auto run = std::make_unique<Run>();
  run->id = stored.id;
  run->owner = stored.owner;
  run->trusted = tokens_->IsAdmin(stored.owner);
  run->priority = stored.priority;
  run->throughput = stored.throughput;
  run->state = v1::RunState(stored.state);
  run->message = stored.message;
  run->created_unix = stored.created_unix;
  run->started_unix = stored.started_unix;
  run->started_persisted = stored.started_unix > 0;
  run->finished_unix = stored.finished_unix;
  absl::StatusOr<std::unique_ptr<RunHandler>> handler =
      LoadRunHandler(v1::RunKind(stored.kind), stored.spec);
  if (!handler.ok())
    return absl::DataLossError(
        Cat("run ", stored.id, ": ", std::string(handler.status().message())));
  run->handler = std::move(*handler);
  if (IsTerminal(run->state)) {
    run->final = std::make_unique<v1::Run>();
    if (stored.result.empty() || !run->final->ParseFromString(stored.result)) {
      run->final->set_id(run->id);
      run->final->set_kind(run->kind());
      run->final->set_state(run->state);
      run->final->set_message(run->message);
      run->final->set_created_unix(run->created_unix);
      run->final->set_finished_unix(run->finished_unix);
    }
    runs_[run->id] = std::move(run);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(std::vector<StoredJob> stored_jobs, store_->LoadJobs(stored.id));
  ASSIGN_OR_RETURN(std::vector<StoredResult> results, store_->LoadResults(stored.id));
  std::vector<std::unique_ptr<Job>> jobs;
  for (StoredJob& sj : stored_jobs) {
    if (absl::Status st = run->handler->AddJob(sj.spec); !st.ok())
      return absl::DataLossError(Cat("job ", sj.id, ": ", std::string(st.message())));
    auto job = std::make_unique<Job>();
    job->id = sj.id;
    job->run_id = sj.run_id;
    job->index = uint32_t(jobs.size());
    job->want = run->handler->ResultsWanted();
    jobs.push_back(std::move(job));
  }
  const uint64_t run_id = run->id;
  AddRunLocked(std::move(run), std::move(jobs));
  Run& loaded = *runs_[run_id];
  // Before the results: a set-aside worker's games stay out of the count as they load.
  for (const v1::WorkerResidual& v : verdicts) RestoreResidualLocked(loaded, v);
  for (StoredResult& sr : results) {
    Job* job = queue_.Find(sr.job_id);
    if (!job || job->run_id != run_id) continue;
    Result r;
    r.worker_id = sr.worker_id;
    r.worker_name = sr.worker_name;
    r.token_name = sr.token;
    r.lease_id = sr.lease_id;
    r.seconds = sr.seconds;
    if (absl::Status st = loaded.handler->ParseResult(sr.result, r); !st.ok())
      return absl::DataLossError(Cat("result of job ", sr.job_id, ": ", std::string(st.message())));
    // A result counts as a ready entry consumed: take its slot off the queue.
    queue_.Unready(sr.job_id);
    job->pending++;
    IngestResultLocked(*job, std::move(r), updates);
  }
  if (!results.empty() && loaded.state == v1::RUN_STATE_QUEUED)
    loaded.state = v1::RUN_STATE_RUNNING;
  if (absl::Status st = loaded.handler->Resumable(); !st.ok() && !IsTerminal(loaded.state))
    FinishRunLocked(loaded, v1::RUN_STATE_FAILED, std::string(st.message()), updates);
  // Lanes again, unclaimed (the workers register afresh): a job of a lane of keys in its lane,
  // else the jobs still to do in contiguous ranges, one per lane, so that each worker's hash
  // again sees one region of the tree.
  if (const size_t lanes = loaded.handler->LaneCount(); lanes >= 2 && !IsTerminal(loaded.state)) {
    loaded.lane_workers.assign(lanes, "");
    std::vector<Job*> open;
    for (uint64_t job_id : loaded.jobs)
      if (Job* job = queue_.Find(job_id); job && job->open()) open.push_back(job);
    for (size_t k = 0; k < open.size(); ++k) {
      const uint32_t lane = loaded.handler->WorkLane(*open[k]);
      open[k]->lane = lane < lanes ? lane : uint32_t(k * lanes / open.size());
    }
  }
  // A streamed split goes on from its stored cursor: the shards already stored are not redone.
  if (!IsTerminal(loaded.state))
    if (std::unique_ptr<JobSource> source = loaded.handler->MakeJobSource())
      sources_[run_id] = std::move(source);
  spdlog::info("run {}: resumed with {}/{} jobs done{}", run_id, loaded.jobs_done,
               loaded.jobs.size(),
               loaded.handler->Expanding() ? ", its split still expanding" : "");
  return absl::OkStatus();
}

void Coordinator::AddRunLocked(std::unique_ptr<Run> run, std::vector<std::unique_ptr<Job>> jobs) {
  run->requirements = run->handler->Requirements();
  queue_.SetRun(run->id, run->owner, run->priority, run->throughput);
  for (auto& job : jobs) {
    run->jobs.push_back(job->id);
    run->estimate_total += run->handler->Estimate(*job);
    queue_.Add(std::move(job));
  }
  const uint64_t id = run->id;
  runs_[id] = std::move(run);
  Run& r = *runs_[id];
  // A run with no jobs (no legal moves at the root) is finished at once.
  if (r.jobs.empty() && !r.handler->Expanding()) {
    std::vector<RunUpdate> updates;
    FinishRunLocked(r, v1::RUN_STATE_SUCCEEDED, "", updates);
    (void)store_->Commit({}, updates);
  }
}

absl::StatusOr<v1::GetPgnResponse> Coordinator::GetPgn(uint64_t run_id) {
  PgnRequest request;
  request.run_id = run_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NoRunError(run_id);
    const Run& run = *it->second;
    std::optional<PgnSource> source = PgnSourceOf(*run.handler);
    if (!source)
      return absl::FailedPreconditionError(
          Cat("run ", run_id, " is not a match or tournament run"));
    request.source = std::move(*source);
    request.job_ids = run.jobs;
    if (run.final && request.source.counted.empty()) {
      request.from_store = true;
      request.final_games = run.final->has_match() ? run.final->match().result().games()
                                                   : run.final->tournament().games();
    }
  }
  return ExportPgn(request, *store_);
}

absl::StatusOr<v1::Run> Coordinator::GetRun(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return NoRunError(run_id);
  return BuildRunLocked(*it->second);
}

absl::StatusOr<v1::ListRunsResponse> Coordinator::ListRuns(const v1::ListRunsRequest& request) {
  const uint32_t asked = request.page_size() > 0 ? request.page_size() : request.limit();
  if (asked > 1000)
    return absl::InvalidArgumentError(Cat("page_size must be at most 1000, got ", asked));
  const size_t limit = asked == 0 ? 100 : asked;
  uint64_t below = UINT64_MAX;  // ids of this page are below the previous page's last
  if (!request.page_token().empty()) {
    char* end = nullptr;
    below = std::strtoull(request.page_token().c_str(), &end, 10);
    if (request.page_token().size() > 20 || *end != '\0' || below == 0)
      return absl::InvalidArgumentError(
          Cat("page_token '", request.page_token().substr(0, 40), "' is not one this server gave"));
  }
  v1::ListRunsResponse out;
  absl::MutexLock lock(&mu_);
  auto it = std::make_reverse_iterator(runs_.lower_bound(below));
  for (; it != runs_.rend(); ++it) {
    const Run& r = *it->second;
    if (request.states_size() > 0 && std::find(request.states().begin(), request.states().end(),
                                               r.state) == request.states().end())
      continue;
    if (!request.owner().empty() && r.owner != request.owner()) continue;
    if (!r.owner.starts_with(request.owner_prefix())) continue;
    if (request.kinds_size() > 0 && std::find(request.kinds().begin(), request.kinds().end(),
                                              r.handler->kind()) == request.kinds().end())
      continue;
    if (size_t(out.runs_size()) == limit) {
      out.set_next_page_token(std::to_string(out.runs(out.runs_size() - 1).id()));
      break;
    }
    // Lists carry summaries: no divide, no book text (BookSummary says what it was), no chart
    // history. A 960-position book would otherwise repeat its ~80 KB in every list; a match run
    // is about 1.5 KB of JSON.
    v1::Run run = BuildRunLocked(r);
    if (run.has_perft()) run.mutable_perft()->mutable_result()->clear_divide();
    // Nor what only the run's page shows: the workers' engine reports, refusals, the game
    // rules, terminations and faults (of each of a tournament's pairings too).
    run.clear_engines();
    run.clear_refusals();
    if (run.has_match()) {
      v1::MatchRunStatus& m = *run.mutable_match();
      m.mutable_request()->mutable_settings()->clear_openings();
      m.mutable_request()->mutable_settings()->clear_rules();
      m.clear_history();
      m.mutable_result()->clear_game_list();
      m.mutable_result()->clear_terminations();
      m.mutable_result()->clear_faults();
      m.mutable_result()->clear_engine_time_controls();
    }
    if (run.has_tournament()) {
      run.mutable_tournament()->mutable_request()->mutable_settings()->clear_openings();
      run.mutable_tournament()->mutable_request()->mutable_settings()->clear_rules();
      for (v1::MatchResult& p : *run.mutable_tournament()->mutable_pairings()) {
        p.clear_game_list();
        p.clear_terminations();
        p.clear_faults();
        p.clear_engine_time_controls();
      }
    }
    *out.add_runs() = std::move(run);
  }
  return out;
}

absl::StatusOr<v1::Run> Coordinator::CancelRun(uint64_t run_id, const std::string& reason,
                                               const Caller& caller) {
  std::vector<RunUpdate> updates;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NoRunError(run_id);
    Run& run = *it->second;
    if (!caller.admin() && run.owner != caller.name)
      return absl::PermissionDeniedError(Cat("run ", run_id, " belongs to '", run.owner,
                                             "'; only its owner or an admin may cancel it"));
    if (IsTerminal(run.state))
      return absl::FailedPreconditionError(
          Cat("run ", run_id, " already finished (", RunStateName(run.state), ")"));
    FinishRunLocked(run, v1::RUN_STATE_CANCELLED,
                    reason.empty() ? std::string("cancelled by request") : reason, updates);
    out = BuildRunLocked(run);
  }
  RETURN_IF_ERROR(store_->Commit({}, updates));
  spdlog::info("run {}: cancelled ({})", run_id, out.message());
  return out;
}

uint64_t Coordinator::WatchRun(uint64_t run_id, uint64_t seen, RunCallback cb,
                               const std::string& owner) {
  absl::StatusOr<v1::Run> now;
  uint64_t version = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) {
      now = NoRunError(run_id);
    } else if (!owner.empty() && !tokens_->Exists(owner)) {
      now = absl::UnauthenticatedError(Cat("token '", owner, "' was revoked"));
    } else if (shutting_down_) {
      now = ShuttingDownError();
    } else if (it->second->version > seen) {
      now = BuildRunLocked(*it->second);
      version = it->second->version;
    } else {
      uint64_t id = next_id_++;
      watches_.push_back({id, run_id, seen, std::move(cb), owner});
      return id;
    }
  }
  cb(std::move(now), version);
  return 0;
}

absl::Status Coordinator::RevokeToken(const std::string& name) {
  RETURN_IF_ERROR(tokens_->Revoke(name));
  // A token created again under the name starts afresh (its results stay voided).
  if (absl::Status st = LiftQuarantine(name); !st.ok() && !absl::IsNotFound(st)) return st;
  const absl::Status gone = absl::UnauthenticatedError(Cat("token '", name, "' was revoked"));
  Deferred deferred;
  {
    absl::MutexLock lock(&mu_);
    std::erase_if(watches_, [&](Watch& w) {
      if (w.owner != name) return false;
      deferred.push_back([cb = std::move(w.cb), gone] { cb(gone, 0); });
      return true;
    });
    const absl::flat_hash_set<std::string> disowned = workers_.Disown(name);
    std::erase_if(waiters_, [&](Waiter& w) {
      if (!disowned.contains(w.worker_id)) return false;
      deferred.push_back([cb = std::move(w.cb), gone] { cb(gone); });
      return true;
    });
  }
  for (auto& f : deferred) f();
  spdlog::info("token '{}' revoked: its watches, long polls and workers ended", name);
  return absl::OkStatus();
}

bool Coordinator::CancelWatch(uint64_t watch_id) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < watches_.size(); ++i) {
    if (watches_[i].id == watch_id) {
      watches_.erase(watches_.begin() + std::ptrdiff_t(i));
      return true;
    }
  }
  return false;
}

// Runs of at least this many jobs give their memory back to the system when they end.
constexpr size_t kTrimAfterJobs = 10'000;

void Coordinator::FinishRunLocked(Run& run, v1::RunState state, const std::string& message,
                                  std::vector<RunUpdate>& updates) {
  run.state = state;
  run.message = message;
  run.finished_unix = UnixNow();
  if (run.started_unix == 0) run.started_unix = run.finished_unix;
  ++run.version;
  for (uint64_t id : run.jobs) {
    Job* job = queue_.Find(id);
    if (!job) continue;
    if (!job->done) {
      job->cancelled = true;
      ++run.jobs_cancelled;
    }
    for (const Lease& l : job->leases) LeaseEndedLocked(l.worker_id);
    queue_.ClearLeases(*job);
  }
  run.jobs_leased = 0;
  queue_.RemoveRun(run.id);
  run.final = std::make_unique<v1::Run>(BuildRunLocked(run));
  updates.push_back({run.id, int(state), run.started_unix, run.finished_unix, message,
                     run.final->SerializeAsString()});
  if (metrics_) {
    // The final values, shown for a while (TickLocked removes them).
    run.handler->SetGauges(run.id, GaugeProgress(run), *metrics_);
    metrics_->RunEnded(run.id, RunKindName(run.kind()), RunStateName(state),
                       RunVerdictName(OutcomeOf(*run.final).verdict()));
    ended_gauges_.emplace_back(now_() + Seconds(options_.finished_run_gauge_seconds), run.id);
  }
  last_gauges_ = {};  // refresh the gauges at the next tick
  // Job specs and result payloads of a finished run are no longer needed in memory (the store
  // has them); the jobs that were leased stay so that late or repeated calls about them get
  // precise answers.
  // Jobs that were never leased cannot be asked about: they go (a cancelled run of a million
  // games keeps only its result).
  run.handler->ReleaseJobs();
  bool kept = false;
  for (uint64_t id : run.jobs) {
    if (Job* job = queue_.Find(id)) {
      if (job->past_leases.empty() && job->results.empty() && job->pending == 0) {
        queue_.Erase(id);
        continue;
      }
      kept = true;
      for (Result& r : job->results) {
        r.counts = {};
        r.match.reset();
      }
    }
  }
  // The freed jobs sit in the arena of whichever thread planned the run; glibc hands them back
  // to the system only when asked, and a later plan on another thread would not reuse them.
  const size_t jobs = run.jobs.size();
  if (!kept) run.jobs = {};  // nothing left to ask about (the job counts are in run.final)
  if (jobs >= kTrimAfterJobs) malloc_trim(0);
  if (state == v1::RUN_STATE_SUCCEEDED && run.final->has_perft())
    spdlog::info("run {}: succeeded, {} nodes in {:.3f} s", run.id,
                 run.final->perft().result().nodes_decimal(),
                 run.final->perft().result().seconds());
  else
    spdlog::info("run {}: {} {}", run.id, RunStateName(state), message);
}

v1::Run Coordinator::BuildRunLocked(const Run& run) {
  if (run.final) {
    v1::Run out = *run.final;
    *out.mutable_outcome() = OutcomeOf(out);  // runs stored before the field get one too
    return out;
  }
  v1::Run out;
  out.set_id(run.id);
  out.set_owner(run.owner);
  out.mutable_scheduling()->set_priority(run.priority);
  out.mutable_scheduling()->set_throughput(uint32_t(run.throughput));
  *out.mutable_scheduling()->mutable_requirements() = run.requirements;
  out.set_kind(run.kind());
  out.set_state(run.state);
  out.set_message(run.message.empty() ? NoteOfLocked(run) : run.message);
  out.set_created_unix(run.created_unix);
  out.set_started_unix(run.started_unix);
  out.set_finished_unix(run.finished_unix);
  v1::JobCounts* jc = out.mutable_jobs();
  jc->set_total(run.jobs.size());
  jc->set_done(run.jobs_done);
  jc->set_cancelled(run.jobs_cancelled);
  jc->set_leased(run.jobs_leased);
  jc->set_queued(run.QueuedJobs());
  // A run whose jobs are still being produced: the share of the stored jobs done, scaled by the
  // share of the production done.
  const double progress =
      run.state == v1::RUN_STATE_SUCCEEDED
          ? 1.0
          : (run.estimate_total > 0 ? run.estimate_done / run.estimate_total : 0.0) *
                run.handler->ExpandedFraction();
  out.set_progress(progress);
  const double end = run.finished_unix > 0 ? run.finished_unix : UnixNow();
  const double elapsed = run.started_unix > 0 ? std::max(0.0, end - run.started_unix) : 0.0;
  if (progress > 0 && progress < 1 && elapsed > 0)
    out.set_eta_seconds(elapsed * (1 - progress) / progress);
  run.handler->FillStatus(run, elapsed, out);
  if (out.jobs().queued() > 0 && run.jobs_leased == 0) out.set_waiting(WaitingLocked(run));
  FillEngineReports(run, out);
  *out.mutable_outcome() = OutcomeOf(out);
  return out;
}

void Coordinator::Shutdown() {
  Deferred deferred;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (Waiter& w : waiters_)
      deferred.push_back([cb = std::move(w.cb)] { cb(ShuttingDownError()); });
    waiters_.clear();
    for (Watch& w : watches_)
      deferred.push_back([cb = std::move(w.cb)] { cb(ShuttingDownError(), 0); });
    watches_.clear();
  }
  for (auto& f : deferred) f();
}

size_t Coordinator::ConnectedWorkers() {
  absl::MutexLock lock(&mu_);
  return workers_.ConnectedWorkers();
}

size_t Coordinator::ConnectedHashTables() {
  absl::MutexLock lock(&mu_);
  return workers_.ConnectedHashTables();
}

uint32_t Coordinator::MaxWorkerThreads() {
  absl::MutexLock lock(&mu_);
  return workers_.MaxThreads();
}

}  // namespace arbiter::coordinator

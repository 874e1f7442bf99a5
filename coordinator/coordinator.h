// The coordinator's run/job model, independent of gRPC: runs split into jobs, jobs leased to
// workers with an expiry (re-queued when a lease is lost), results fenced by lease id, committed
// in groups to SQLite before they are acknowledged, and aggregated into run totals.
//
//   auto c = Coordinator::Open({.data_dir = "/var/lib/arbiter"}, &registry);
//   absl::StatusOr<v1::Run> run = c->SubmitPerft(request);    // splits; may take a while
//   c->AcquireJob(acquire_request, [](auto job) { ... });     // long poll, callback once
//
// The facade over its rooms: each run kind's handler (perft_run, games_run), the job queue with
// leases and lanes (job_queue), the worker registry, the group commit (commit_log), the engine
// store, the PGN export and the metrics. Locking: one mutex, mu_, guards runs, the queue, the
// registry, waiters, watches and the commit queue (every call is short; bench/coordinator_load.sh
// measures it); the engine store has its own. Slow work (perft splitting, game replay, SQLite
// writes) runs outside mu_. Callbacks run on the caller's thread or on the coordinator's own
// threads, never under its lock.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/auth.h"
#include "coordinator/commit_log.h"
#include "coordinator/engine_store.h"
#include "coordinator/job_queue.h"
#include "coordinator/run_handler.h"
#include "coordinator/store.h"
#include "coordinator/worker_registry.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"
#include "proto/arbiter/v1/work_service.pb.h"
#include "proto/arbiter/v1/worker.pb.h"

namespace prometheus {
class Registry;
}

namespace arbiter::coordinator {

struct CoordinatorOptions {
  std::string data_dir;
  // A lease lasts this long after it is granted or extended by a heartbeat.
  double lease_seconds = 15;
  double heartbeat_seconds = 3;
  // Long-poll time when the worker does not ask for one.
  double default_wait_seconds = 20;
  uint64_t max_upload_bytes = uint64_t(256) << 20;
  // Bytes of all uploads in progress (their temporary files), whoever sends them.
  uint64_t max_uploading_bytes = uint64_t(1) << 30;
  // Per token: unfinished runs, submissions in any minute, bytes of uploads kept.
  uint32_t max_active_runs = 20;
  uint32_t max_submissions_per_minute = 60;
  uint64_t upload_quota_bytes = uint64_t(4) << 30;
  // Per token but admins: jobs not yet done in its unfinished runs (each costs the coordinator
  // about 250 bytes; docs/scaling.md). A match of a million games is 250,000 jobs of 2 pairs.
  uint64_t max_queued_jobs = 1'000'000;
  // Submissions planned at once, over gRPC and HTTP together (a plan can take hundreds of MB
  // before it is refused or stored); others wait up to kPlanWaitSeconds, then are refused.
  uint32_t max_concurrent_plans = 2;
  // The host this coordinator runs on (its host name; `arbiter coordinator` sets it). Workers that
  // report it and whose threads fill its cores share the coordinator's CPU: a perft run is then
  // planned for the least coordinator CPU (PlanContext::workers_fill_host). Empty: never assumed.
  std::string host;
  // The time leases, long polls, worker liveness and submission rates are measured in. Empty: the
  // steady clock. Tests pass a simulated clock and call Coordinator::Tick after moving it.
  std::function<SteadyClock::time_point()> clock;
  // How often the coordinator expires leases, answers long polls whose time is up and tells the
  // watchers of runs what changed (a run's end is told at once, once it is stored).
  double tick_seconds = 0.05;
  // A finished run's gauges (progress, perft nodes, SPRT LLR, Elo) stay on /metrics this long
  // with their final values, so that a scraper sees how a run ended even when it ran shorter than
  // a scrape interval; then they are removed (finished runs do not grow /metrics without bound).
  double finished_run_gauge_seconds = 300;
  // Perft results are checked, not believed: a worker's results in a run count alone only after
  // one of them was recounted by a different worker (another token or host, not sharing its hash)
  // and agreed; after that, this share of its jobs is recounted at random. 0: no recounts.
  double perft_spot_check_percent = 3;
  // A lease whose heartbeats report no progress (perft nodes counted, match moves played, movegen
  // positions checked) for this long is taken back and its job queued again: heartbeats alone do
  // not hold a job (but for an older worker's match and movegen leases). 0: not watched.
  double lease_progress_seconds = 300;
};

// Bounds on what one worker may claim.
inline constexpr uint32_t kMaxWorkerThreads = 256;
// Workers one token may have registered at once: a 200-pod Deployment sharing its token, with
// room for restarts; a flood of registrations under one token stops here.
inline constexpr size_t kMaxWorkersPerToken = 1024;

class CoordinatorMetrics;

class Coordinator {
 public:
  using Clock = SteadyClock;
  using RunCallback = std::function<void(absl::StatusOr<v1::Run>, uint64_t version)>;
  using JobCallback = std::function<void(absl::StatusOr<v1::AcquireJobResponse>)>;
  using CompleteCallback = CommitLog::Callback;

  // Opens the store under options.data_dir and resumes every unfinished run.
  // `registry` may be null (no metrics).
  static absl::StatusOr<std::unique_ptr<Coordinator>> Open(const CoordinatorOptions& options,
                                                           prometheus::Registry* registry);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Runs. SubmitPerft validates, splits and stores the run before returning it.
  // `caller` becomes the run's owner; per-owner limits apply (RESOURCE_EXHAUSTED).
  absl::StatusOr<v1::Run> SubmitPerft(const v1::SubmitPerftRequest& request,
                                      const Caller& caller = {});
  // Match runs: batches of game pairs; every reported game is replayed before it counts, and a
  // decided SPRT finishes the run (outstanding jobs are cancelled).
  absl::StatusOr<v1::Run> SubmitMatch(const v1::SubmitMatchRequest& request,
                                      const Caller& caller = {});
  // Tournament runs: a round robin or gauntlet, each pairing's game pairs in match jobs (played
  // and replayed like a match's), rated together as results come in.
  absl::StatusOr<v1::Run> SubmitTournament(const v1::SubmitTournamentRequest& request,
                                           const Caller& caller = {});
  // movegen-check runs: the positions in jobs; each worker compares the engine's perft with
  // arbiter's and descends on a difference; failures are deduplicated.
  absl::StatusOr<v1::Run> SubmitMovegenCheck(const v1::SubmitMovegenCheckRequest& request,
                                             const Caller& caller = {});
  // PGN of a match or tournament run's counted games (and a summary of each), from the store.
  absl::StatusOr<v1::GetPgnResponse> GetPgn(uint64_t run_id);
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id);
  // Newest first, paged (page_token: the last id of the previous page), filtered by state/owner.
  absl::StatusOr<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& request);
  // A run's priority or throughput: its owner or an admin; a priority above 0 needs an admin.
  absl::StatusOr<v1::Run> SetScheduling(const v1::SetSchedulingRequest& request,
                                        const Caller& caller = {});
  // Only the run's owner or an admin (PERMISSION_DENIED otherwise).
  absl::StatusOr<v1::Run> CancelRun(uint64_t run_id, const std::string& reason,
                                    const Caller& caller = {});
  // Calls `cb` once, as soon as the run's version is above `seen` (at once if it already is).
  // Returns a watch id for CancelWatch, or 0 when `cb` was already called.
  // `owner`: the token whose call it serves ("" for the coordinator's own, e.g. the dashboard's
  // shared live pages), whose revocation ends it.
  uint64_t WatchRun(uint64_t run_id, uint64_t seen, RunCallback cb, const std::string& owner = "");
  // True when the watch was still waiting (its callback will never be called).
  bool CancelWatch(uint64_t watch_id);

  // Work. A worker id belongs to the token that registered it: calls about it under another
  // token are PERMISSION_DENIED. Two worker ids under one token count as one worker for
  // verification; a worker holds at most as many leases as it declared threads.
  absl::StatusOr<v1::RegisterResponse> Register(const v1::RegisterRequest& request,
                                                const Caller& caller = {});
  // Calls `cb` once with a leased job, or with no job when the wait is over. Returns a waiter
  // id for CancelAcquire, or 0 when `cb` was already called.
  uint64_t AcquireJob(const v1::AcquireJobRequest& request, JobCallback cb,
                      const Caller& caller = {});
  bool CancelAcquire(uint64_t waiter_id);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request,
                                                  const Caller& caller = {});
  // `cb` gets OK only after the result is committed to the store.
  void CompleteJob(const v1::CompleteJobRequest& request, CompleteCallback cb,
                   const Caller& caller = {});
  absl::Status ReleaseJob(const v1::ReleaseJobRequest& request, const Caller& caller = {});
  // One rating list over the games of many runs (coordinator/ratings.h).
  absl::StatusOr<v1::GetRatingsResponse> GetRatings(const v1::GetRatingsRequest& request);
  // The workers, connected ones first (with their isolation, engine directories and limits).
  v1::ListWorkersResponse ListWorkers(const v1::ListWorkersRequest& request);
  // No new leases for the named workers (or again, with `undo`); the server checks for admin.
  absl::StatusOr<v1::ListWorkersResponse> DrainWorkers(const v1::DrainWorkersRequest& request,
                                                       const Caller& caller = {});

  // Engines: uploads count against the uploader's quota; deleting needs the uploader or admin.
  absl::StatusOr<v1::Engine> AddEngine(const std::string& name, const std::string& temp_path,
                                       const Caller& caller = {});
  absl::Status DeleteEngine(const std::string& sha256, const Caller& caller = {});
  // Whether worker `worker_id` of `caller` may fetch uploaded engine `sha256`: only while it holds
  // a lease of a job that runs it (a worker token does not open every upload).
  absl::Status CheckEngineFetch(const std::string& worker_id, const std::string& sha256,
                                const Caller& caller);
  TokenRegistry& tokens() { return *tokens_; }
  // Revokes a token and ends what it holds open: its run watches and its workers' long polls
  // fail with UNAUTHENTICATED, and its workers are disowned (WorkerRegistry::Disown); their
  // leases expire as lost ones do. Open dashboard pages notice within a second (LiveRuns).
  absl::Status RevokeToken(const std::string& name);
  // Quarantined worker tokens (a worker of theirs lost a vote on a perft count): their workers
  // take no leases until an admin lifts it (NOT_FOUND when `name` is not quarantined). The
  // quarantine is stored; lifting it does not bring back the results it voided.
  absl::Status LiftQuarantine(const std::string& name);
  std::vector<StoredQuarantine> Quarantines();
  // A match run's worker whose games the residual check set aside (docs/residuals.md): ACCEPTED
  // counts them again (the worker and its token may take the run's jobs again), VOIDED keeps them
  // out for good. NOT_FOUND, FAILED_PRECONDITION (not set aside; the run has ended). The server
  // checks for admin.
  absl::StatusOr<v1::Run> DecideResidual(uint64_t run_id, const std::string& worker_id,
                                         v1::ResidualState decision);

  EngineStore& engines() { return *engines_; }
  uint64_t max_upload_bytes() const { return options_.max_upload_bytes; }
  // Room for `bytes` more of an upload in progress: counted with the caller's kept engines
  // against its quota, and against max_uploading_bytes (EngineStore::Reserve).
  absl::Status ReserveUpload(const Caller& caller, uint64_t bytes) {
    return engines_->Reserve(caller.name, bytes, options_.upload_quota_bytes,
                             options_.max_uploading_bytes);
  }
  void ReleaseUpload(const Caller& caller, uint64_t bytes) {
    engines_->Release(caller.name, bytes);
  }

  // The periodic maintenance, now: expired leases re-queued, long polls past their deadline
  // answered, changed runs' watches called. A thread of the coordinator calls it every 50 ms.
  void Tick();

  // Fails every waiting long poll and watch with UNAVAILABLE and refuses new ones.
  void Shutdown();

  size_t ConnectedWorkers();
  // Perft hash tables among the connected workers (workers of one hash group share one).
  size_t ConnectedHashTables();
  // The largest --threads among connected workers (0 when none is connected).
  uint32_t MaxWorkerThreads();
  // Jobs held in memory (arbiter_jobs_in_memory): what a run's memory grows with.
  size_t JobsInMemory();

 private:
  struct Waiter {
    uint64_t id;
    std::string worker_id;
    Clock::time_point deadline;
    JobCallback cb;
  };
  struct Watch {
    uint64_t id, run_id, seen;
    RunCallback cb;
    std::string owner;
  };
  using Deferred = CommitLog::Deferred;

  Coordinator(const CoordinatorOptions& options, std::unique_ptr<Store> store,
              prometheus::Registry* registry);
  absl::Status Load();
  // `verdicts`: the stored verdicts of the run's residual check.
  absl::Status LoadRun(StoredRun& stored, const std::vector<v1::WorkerResidual>& verdicts,
                       std::vector<RunUpdate>& updates) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<v1::Run> Submit(absl::StatusOr<RunPlan> plan, const Caller& caller,
                                 const v1::Scheduling& scheduling);
  // RESOURCE_EXHAUSTED when `owner` may not submit now (active runs, rate); records the attempt.
  absl::Status CheckOwnerLimits(const std::string& owner);
  // One of max_concurrent_plans planning slots, held while `plan` runs; RESOURCE_EXHAUSTED when
  // none frees up within kPlanWaitSeconds.
  absl::StatusOr<RunPlan> PlanInSlot(const std::function<absl::StatusOr<RunPlan>()>& plan);
  // The registered worker `worker_id` if it belongs to `caller` (NOT_FOUND, PERMISSION_DENIED).
  absl::StatusOr<WorkerInfo*> CallerWorkerLocked(const std::string& worker_id, const Caller& caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A lease of the worker ended (result, release, expiry, finished run).
  void LeaseEndedLocked(const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  PlanContext Context();
  // Adds a run with its jobs (in job order); `lanes` as in RunPlan.
  void AddRunLocked(std::unique_ptr<Run> run, std::vector<std::unique_ptr<Job>> jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a committed result; may finish the job and the run (appending the run's update).
  void IngestResultLocked(Job& job, Result result, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What a committed result (already in job.results) does to its job and run: a spot check, the
  // handler's count or vote, the end of the run.
  void ApplyResultLocked(Run& run, Job& job, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Perft spot checks (CoordinatorOptions::perft_spot_check_percent): whether the job's single
  // result waits for a recount by an independent worker (the job is then queued again for it).
  bool SpotCheckLocked(Run& run, Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Recounts waiting for a worker that is no longer there: a single result counts as it is, a
  // disagreement fails the run (FailUndecidedLocked).
  void ResolveSpotChecksLocked(std::vector<RunUpdate>& updates) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FailUndecidedLocked(Run& run, Job& job, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Quarantines worker token `token` (quarantine.cc): its workers' leases are taken back, and in
  // every unfinished run whose results can be counted again its results are voided, in memory
  // and in the store, and the jobs they counted are counted again by other workers. Rare (once
  // per caught worker), so its store reads and the write run under the lock.
  void QuarantineLocked(const std::string& token, const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The residual check set a worker of `run` aside (residual_check.cc): it and its token take
  // no more of the run's jobs, the verdict is stored, the worker carries a flag.
  void SetAsideLocked(Run& run, const v1::WorkerResidual& verdict)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A stored verdict into a run being loaded (its handler, its barred workers and tokens).
  void RestoreResidualLocked(Run& run, const v1::WorkerResidual& verdict)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The run's workers and tokens barred by set-aside or voided verdicts, from its handler's.
  void BarResidualsLocked(Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // What quarantines and the residual check did to the run: its message while it runs, and
  // once it succeeds.
  std::string NoteOfLocked(const Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // PERMISSION_DENIED naming the quarantine when `token` is quarantined, else OK.
  absl::Status QuarantinedLocked(const std::string& token) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a connected worker independent of `identities` and `hash_groups` may take `job`.
  bool IndependentLocked(const Run& run, const Job& job,
                         const absl::flat_hash_set<std::string>& identities,
                         const absl::flat_hash_set<std::string>& hash_groups)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The identities and hash groups of the workers whose results the job has.
  void CountersOfLocked(const Job& job, absl::flat_hash_set<std::string>& identities,
                        absl::flat_hash_set<std::string>& hash_groups)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishRunLocked(Run& run, v1::RunState state, const std::string& message,
                       std::vector<RunUpdate>& updates) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A worker would not play a job of `run` (an engine's bench), or could not (a fault of the
  // engine): flags the worker, leases it no more of the run's jobs, and fails the run when no
  // connected worker is left to play it, or at a fault in the run's first job or on a second
  // worker.
  void RefusedLocked(Run& run, WorkerInfo& worker, const std::string& worker_id,
                     const v1::EngineRefusal& refusal, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The bench signature of a source engine's build must be the same on every worker (the first
  // result's is the reference, kept as soon as it is accepted): a result whose build counts
  // otherwise is FAILED_PRECONDITION, and its worker is refused the run (RefusedLocked).
  absl::Status SourceBenchLocked(Run& run, const Job& job, WorkerInfo& worker,
                                 const v1::CompleteJobRequest& request,
                                 std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps what a counted result says about the engines (sha256, bench) and the clock scale.
  void NoteEngineReportLocked(Run& run, const std::string& worker_id,
                              const v1::MatchJobResult& result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::Run BuildRunLocked(const Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Job* TakeJobLocked(const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why `worker` may not take `job` of `run` (empty: it may), the run's requirements aside
  // (JobQueue::Take checks those once per run, UnmetRequirement): an uploaded
  // engine on a worker that does not isolate it, a path outside its --engine-dir, a refused
  // bench, too few threads for one game.
  std::string IneligibleLocked(const std::string& worker_id, const WorkerInfo& worker,
                               const Run& run, const Job& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Run.waiting: why a run with queued jobs has none leased.
  std::string WaitingLocked(const Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lane of `run` that `worker_id` works on, claiming a free one (or one whose worker is gone)
  // if it has none; kNoLane when every lane has a live worker.
  uint32_t LaneOfLocked(Run& run, const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a worker of another lane may take `far_end`, the last job of its lane in `run`,
  // `queued` jobs queued in the lane: always in lanes of jobs; in lanes of keys when the lane's
  // worker is gone (never came, disconnected, draining) or at least kStealMinQueued are queued.
  bool MayStealLocked(const Run& run, const Job& far_end, uint64_t queued)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::AcquireJobResponse LeaseLocked(Job& job, const std::string& worker_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveLeaseLocked(Job& job, size_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchLocked(Deferred& deferred) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Expired leases, spot checks nobody is left to do (their run updates in `updates`), long polls
  // whose time is up, watches, gauges.
  void TickLocked(Deferred& deferred, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Stores the run updates of a tick (outside the lock).
  void CommitTickUpdates(const std::vector<RunUpdate>& updates);
  // Answers the watches of runs that changed since they last saw them, each run built once.
  void NotifyWatchesLocked(Deferred& deferred) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // NotifyWatchesLocked, taking the lock, then the answers (for a Deferred step of its own).
  void NotifyWatches();
  void UpdateGaugesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A run's progress in [0, 1] as its gauge shows it (1 once it succeeded).
  static double GaugeProgress(const Run& run);
  v1::ListWorkersResponse ListWorkersLocked(bool all) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReaperLoop();
  // Produces the next jobs of runs whose jobs come over time (a streamed perft split), one batch
  // at a time, while a run has fewer queued jobs than StreamAheadLocked: the batch is computed
  // outside mu_, stored with the run's advanced cursor in one transaction, then queued.
  void ProducerLoop();
  // The run whose source should produce next (lowest id), or 0.
  uint64_t NextSourceLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a stored batch of run `run_id` (or the error that fails the run).
  void ApplyBatchLocked(uint64_t run_id, std::unique_ptr<JobSource> source,
                        const absl::Status& status, const JobBatch& batch,
                        const std::vector<StoredJob>& stored, std::vector<RunUpdate>& updates,
                        Deferred& deferred) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::vector<RunUpdate> BeforeCommitLocked(const std::vector<CommitLog::Entry>& batch)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AfterCommitLocked(std::vector<CommitLog::Entry>& batch, const absl::Status& status,
                         double seconds, std::vector<RunUpdate>& finished, Deferred& deferred)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The refusal of a completion that cannot be accepted, or OK.
  absl::Status CheckCompletionLocked(Job& job, const v1::CompleteJobRequest& request, size_t index)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // UNAVAILABLE once shutting down.
  absl::Status CheckAcceptingRuns();

  const CoordinatorOptions options_;
  const std::function<Clock::time_point()> now_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CoordinatorMetrics> metrics_;
  std::unique_ptr<EngineStore> engines_;
  std::unique_ptr<TokenRegistry> tokens_;

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint64_t, std::unique_ptr<Run>> runs_ ABSL_GUARDED_BY(mu_);
  JobQueue queue_ ABSL_GUARDED_BY(mu_);
  WorkerRegistry workers_ ABSL_GUARDED_BY(mu_);
  std::deque<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  std::vector<Watch> watches_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;  // waiters and watches
  Clock::time_point last_gauges_ ABSL_GUARDED_BY(mu_);
  // Finished runs whose gauges are still shown, in the order they finished: (until when, run id).
  std::deque<std::pair<Clock::time_point, uint64_t>> ended_gauges_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_token_flush_ ABSL_GUARDED_BY(mu_);
  // Quarantined worker tokens by name.
  absl::flat_hash_map<std::string, StoredQuarantine> quarantined_ ABSL_GUARDED_BY(mu_);
  // Submission times per owner within the last minute.
  std::map<std::string, std::deque<Clock::time_point>> submissions_ ABSL_GUARDED_BY(mu_);
  absl::Mutex plan_mu_;
  uint32_t plans_running_ ABSL_GUARDED_BY(plan_mu_) = 0;

  bool stop_threads_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_;
  // The job sources of expanding runs, by run id (one is out while it produces).
  std::map<uint64_t, std::unique_ptr<JobSource>> sources_ ABSL_GUARDED_BY(mu_);
  std::thread producer_;
  std::unique_ptr<CommitLog> commits_;  // started once the runs are loaded
};

}  // namespace arbiter::coordinator

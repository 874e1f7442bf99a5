// The coordinator's model of runs and jobs, and the interface each run kind implements.
//
// A Run and its Jobs hold what every kind shares (state, leases, results, progress); what only
// one kind knows (a perft run's positions and divide, a match's pentanomial and SPRT, a
// tournament's pairings) lives in that kind's RunHandler, one per run. The Coordinator calls a
// handler under its lock; a handler touches only its own run. A new run kind is a new handler
// file and one line in LoadRunHandler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "base/strings.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/work_service.pb.h"
#include "stats/counts.h"

namespace arbiter::coordinator {

class CoordinatorMetrics;
class RunHandler;

using SteadyClock = std::chrono::steady_clock;

// A job's lease: one worker may work on it until `expiry` (extended by heartbeats).
struct Lease {
  uint64_t id = 0;
  std::string worker_id;
  std::string token;  // the worker's identity for verification (WorkerInfo::identity)
  SteadyClock::time_point expiry;
  // The work its heartbeats last reported (HeartbeatRequest.progress), and when it is taken back
  // unless that grows (max: never, for jobs whose progress is not watched).
  uint64_t progress = 0;
  SteadyClock::time_point stalls = SteadyClock::time_point::max();
};

// A worker's accepted answer for a job.
struct Result {
  std::string worker_id, worker_name;
  std::string token;  // WorkerInfo::identity (not stored: verification of resumed runs uses ids)
  std::string token_name;  // WorkerInfo::token, the name a quarantine goes by (stored)
  uint64_t lease_id = 0;
  double seconds = 0;
  std::vector<uint64_t> counts;                         // perft
  std::shared_ptr<const v1::MatchJobResult> match;      // match and tournament
  std::shared_ptr<const v1::MovegenJobResult> movegen;  // movegen-check
  // Its counts are the job's counted ones (it agreed with the majority when the job was done).
  bool counted = false;
};

// The error of every call once the coordinator shuts down.
inline absl::Status ShuttingDownError() {
  return absl::UnavailableError("coordinator is shutting down");
}

// The error of a run id the coordinator does not know.
inline absl::Status NoRunError(uint64_t run_id) {
  return absl::NotFoundError(Cat("run ", run_id, " does not exist"));
}

// Perft runs on workers with hashes of their own give jobs lanes (see JobQueue); kNoLane: any
// worker, in queue order.
inline constexpr uint32_t kNoLane = UINT32_MAX;
// In lanes of keys, a worker whose lane is empty takes the far end of another worker's lane only
// when at least this many of the lane's jobs are queued (or its worker is gone): the job is cold
// for it. Measured on start-position perft(8) (docs/scaling.md): the last job of a lane took its
// lane's worker 0.012-0.015 s and the other worker, whose table lacks the lane's entries,
// 0.093-0.098 s (7x), while its own worker sat idle; with 8 queued the owner has about as long
// to go.
inline constexpr uint64_t kStealMinQueued = 8;

struct Job {
  uint64_t id = 0, run_id = 0;
  uint32_t index = 0;  // in its run's job list (the handler keeps the job's spec at this index)
  int want = 1;        // results wanted: 1, or 2 when verifying (+1 per disagreement)
  std::vector<Result> results;
  std::vector<Lease> leases;
  std::vector<uint64_t> past_leases;
  int pending = 0;  // completions being committed
  bool done = false, cancelled = false, failed = false;
  uint32_t lane = kNoLane;
  uint64_t stalled_lease = 0;  // the last lease taken back for making no progress
  // Neither done, cancelled nor failed: may still take a result.
  bool open() const { return !done && !cancelled && !failed; }
};

// The games of one pairing of a run: `first` against `second` (engine names), counts from
// `first`'s side.
struct RunPairing {
  std::string first, second;
  stats::Trinomial counts;
};

struct Run {
  uint64_t id = 0;
  v1::RunState state = v1::RUN_STATE_QUEUED;
  std::string message;
  std::string owner;     // name of the token that submitted the run
  bool trusted = false;  // submitted by an admin: its uploads may run on unisolated workers
  int priority = 0;      // Scheduling in run.proto
  int throughput = 100;
  double created_unix = 0, started_unix = 0, finished_unix = 0;
  bool started_persisted = false;
  std::unique_ptr<RunHandler> handler;
  std::vector<uint64_t> jobs;
  double estimate_total = 0, estimate_done = 0;
  uint64_t jobs_done = 0, jobs_leased = 0, jobs_cancelled = 0;
  uint64_t version = 1;
  std::unique_ptr<v1::Run> final;         // set once finished
  std::vector<std::string> lane_workers;  // the worker of each lane ("" = not claimed yet)
  uint32_t batches = 0;                   // batches of jobs its JobSource added (lane rotation)
  v1::WorkerRequirements requirements;    // the handler's, kept for the scheduler
  // What workers reported about the engines with counted results (by engine name): the distinct
  // sha256 of the binaries they ran and the last bench; the clock scales they used; and the
  // jobs they refused (those workers get no more jobs of the run). Kept in memory: the engine
  // reports and scales are rebuilt from the stored results after a restart, refusals are not.
  struct EngineSeen {
    std::vector<std::string> sha256s;
    uint64_t bench = 0;
  };
  std::vector<std::pair<std::string, EngineSeen>> engines_seen;
  double scale_min = 0, scale_max = 0;
  uint64_t nps_min = 0, nps_max = 0;
  absl::flat_hash_set<std::string> scaled_workers;
  std::vector<v1::EngineRefusal> refusals;
  absl::flat_hash_set<std::string> refused_workers;
  // Perft spot checks: the identities (WorkerInfo::identity) whose recounted result agreed, those
  // that disagreed with a majority (every result of theirs is recounted), and the recounts asked.
  absl::flat_hash_set<std::string> vouched, distrusted;
  uint64_t spot_checks = 0;
  absl::flat_hash_set<uint64_t> spot_checking;  // jobs waiting for a recount or a deciding vote
  // What quarantines did to the run (its message while it runs and once it succeeds).
  std::string quarantine_note;
  // Workers (by id) and tokens (by name) whose games the residual check set aside or an admin
  // voided: they take no more of the run's jobs.
  absl::flat_hash_set<std::string> barred_workers, barred_tokens;

  v1::RunKind kind() const;
  // Jobs neither done, cancelled nor leased.
  uint64_t QueuedJobs() const;
};

// The result whose counts most of `results` share, and how many share them (perft votes).
std::pair<size_t, size_t> MajorityOf(const std::vector<Result>& results);

// What a committed result did to its job and run.
struct IngestOutcome {
  enum class JobEffect { kNone, kDone, kRequeue, kFailed };
  JobEffect job = JobEffect::kNone;
  // Set when the result decides the run (an SPRT bound, a verification that cannot agree).
  std::optional<v1::RunState> finish;
  std::string message;
  // A worker the residual check set aside with this result (match runs; docs/residuals.md).
  std::optional<v1::WorkerResidual> set_aside;
};

// The next part of a run whose jobs are produced over time: its jobs' specs (as stored) and the
// run's spec with the producer's cursor advanced past them, stored together in one transaction.
struct JobBatch {
  std::vector<std::string> job_specs;
  std::string run_spec;
  std::string summary;  // what was produced, for the log
};

// Produces the jobs of a run part by part (a streamed perft split), outside the coordinator's
// lock, from the cursor in the run's stored spec. One caller at a time.
class JobSource {
 public:
  virtual ~JobSource() = default;
  // The next batch; an error fails the run. Slow: expands part of a tree.
  virtual absl::StatusOr<JobBatch> Next() = 0;
};

class RunHandler {
 public:
  virtual ~RunHandler() = default;
  virtual v1::RunKind kind() const = 0;
  // The run's record for the store (StoredRun.spec), from which LoadRunHandler restores it.
  virtual std::string SerializeSpec() const = 0;
  // Appends the spec of the run's next job (as stored in StoredJob.spec).
  virtual absl::Status AddJob(const std::string& stored_spec) = 0;
  // What a worker must offer to take the run's jobs (the submitted WorkerRequirements, raised by
  // the engines' cpu levels).
  virtual v1::WorkerRequirements Requirements() const = 0;
  // Results each job wants before it counts.
  virtual int ResultsWanted() const { return 1; }
  // The job's share of the run's work, in the run's own unit (progress and ETA).
  virtual double Estimate(const Job& job) const = 0;
  // The work a worker receives with a lease.
  virtual void FillWork(const Job& job, v1::Job& out) const = 0;
  // Whether the job runs programs someone uploaded (they go only to workers that isolate them,
  // unless an admin submitted the run).
  virtual bool RunsUploadedCode(const Job& /*job*/) const { return false; }
  // Whether the job has an engine each worker builds from source (a worker without a compiler
  // gets none of it).
  virtual bool BuildsSource(const Job& /*job*/) const { return false; }
  // Whether a job's single result may be recounted by another worker before it counts (perft:
  // counts can be recomputed exactly; games cannot be replayed the same way).
  virtual bool SpotChecked() const { return false; }
  // Whether workers report the job's progress in heartbeats (a lease without progress is taken
  // back: CoordinatorOptions::lease_progress_seconds).
  virtual bool ReportsProgress() const { return false; }
  // Whether only workers that declare it report that progress (RegisterRequest.job_progress):
  // an older worker's leases of the kind are then held by heartbeats alone.
  virtual bool ProgressDeclared() const { return false; }
  // Whether a counted job can be counted again (a quarantined token's results are voided): true
  // for kinds whose results can be recomputed exactly (perft).
  virtual bool Recountable() const { return false; }
  // Takes a counted job's result back out of the run's totals, `counts` being what was counted,
  // and restores its work from `stored_spec` (StoredJob.spec) so that it can be leased again.
  virtual absl::Status Uncount(const Job& /*job*/, const std::string& /*stored_spec*/,
                               const std::vector<uint64_t>& /*counts*/) {
    return absl::FailedPreconditionError("this run's results cannot be counted again");
  }
  // The `path` engines the job starts (they go only to workers whose --engine-dir allow them).
  virtual std::vector<std::string> EnginePaths(const Job& /*job*/) const { return {}; }
  // Cores one game slot of the job needs (its engines' largest `Threads` option): the job goes
  // only to workers that declared at least that many threads.
  virtual uint32_t ThreadsPerGame(const Job& /*job*/) const { return 1; }
  // A check of a completion too slow for the coordinator's lock (a replay), or nothing; it
  // works on copies, so it runs on any thread.
  virtual std::function<absl::Status()> SlowCheck(const Job& /*job*/,
                                                  const v1::CompleteJobRequest& /*request*/) const {
    return {};
  }
  // The result a completion carries, or why it is refused. `slow` is SlowCheck's verdict when it
  // ran. `requeue` is set when a refused result sends the job back to the queue.
  virtual absl::StatusOr<Result> CheckResult(const Job& job, const v1::CompleteJobRequest& request,
                                             const std::optional<absl::Status>& slow,
                                             bool& requeue) = 0;
  // A stored result's payload (StoredResult.result) and back.
  virtual std::string SerializeResult(const Result& result) const = 0;
  virtual absl::Status ParseResult(const std::string& blob, Result& out) const = 0;
  // Counts the job's newest result (job.results.back()); `metrics` may be null.
  virtual IngestOutcome Ingest(Job& job, CoordinatorMetrics* metrics) = 0;
  // The kind's part of the run's status; `out` has the shared fields (progress, ETA) set.
  virtual void FillStatus(const Run& run, double elapsed, v1::Run& out) const = 0;
  // The residual check of match runs (docs/residuals.md): the verdicts on workers so far; a
  // stored verdict restored before the run's results are counted again; an admin's decision on
  // a set-aside worker (ACCEPTED or VOIDED), with what the changed count does to the run in
  // `outcome` (an SPRT decided); and whether games wait for that decision (the run does not
  // finish when its jobs are done).
  virtual std::vector<v1::WorkerResidual> Residuals() const { return {}; }
  virtual void RestoreResidual(const v1::WorkerResidual& /*verdict*/) {}
  virtual absl::StatusOr<v1::WorkerResidual> DecideResidual(const std::string& /*worker_id*/,
                                                            v1::ResidualState /*decision*/,
                                                            IngestOutcome& /*outcome*/) {
    return absl::FailedPreconditionError("only match runs have a residual check");
  }
  virtual bool AwaitsDecision() const { return false; }
  // The games so far of each pairing (match and tournament runs; empty for the others).
  virtual std::vector<RunPairing> Pairings() const { return {}; }
  // The run's per-run gauges (`progress` as in the run's status).
  virtual void SetGauges(uint64_t run_id, double progress, CoordinatorMetrics& metrics) const;
  // The run finished: job specs and payloads are no longer needed in memory (the store has them).
  virtual void ReleaseJobs() = 0;
  // Runs whose jobs come over time: true while more are to come (the run does not finish when
  // its stored jobs are done), the share of the production done (0..1), the source of the jobs
  // not yet stored (null for other runs), and a stored batch's run spec (the advanced cursor).
  virtual bool Expanding() const { return false; }
  virtual double ExpandedFraction() const { return 1; }
  virtual std::unique_ptr<JobSource> MakeJobSource() const { return nullptr; }
  virtual absl::Status ApplyBatch(const std::string& /*run_spec*/) {
    return absl::FailedPreconditionError("this run's jobs are planned at once");
  }
  // Whether a stored run may go on after a restart (an error fails it with that message).
  virtual absl::Status Resumable() const { return absl::OkStatus(); }
  // The run's lane count as planned (0 or 1: none), at submit and after a restart.
  virtual size_t LaneCount() const { return 0; }
  // The lane a job belongs to by its work (a perft job of a lane of keys), or none (kNoLane): a
  // restart then gives the jobs left contiguous ranges, one per lane.
  virtual uint32_t WorkLane(const Job&) const { return kNoLane; }
};

// What a planner may know of the cluster when it plans a run.
struct PlanContext {
  size_t connected_workers = 0;
  size_t hash_tables = 0;           // perft hash tables among the connected workers
  uint32_t max_worker_threads = 0;  // the largest --threads among them
  // Every connected worker runs on the coordinator's own host and their threads fill its cores:
  // whatever CPU the coordinator spends on a run is taken from the workers.
  bool workers_fill_host = false;
  // Every connected worker counts a perft job's lane of keys (none older ignores it).
  bool workers_count_key_lanes = false;
  std::function<bool(const std::string&)> engine_known;  // an uploaded engine's sha256
};

// A new run: its handler (holding the jobs' specs and its lane count), the jobs' stored specs in
// job order, and the lane of each job (empty: no lanes).
struct RunPlan {
  std::unique_ptr<RunHandler> handler;
  std::vector<std::string> job_specs;
  std::vector<uint32_t> lanes;
  std::string summary;  // what was planned, for the log
  // Every `path` engine of the run: refused at submit when no connected worker allows them.
  std::vector<std::string> engine_paths;
};

// The handler of a stored run of `kind` whose record is `spec`.
absl::StatusOr<std::unique_ptr<RunHandler>> LoadRunHandler(v1::RunKind kind,
                                                           const std::string& spec);

}  // namespace arbiter::coordinator

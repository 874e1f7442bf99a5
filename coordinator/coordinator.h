// The coordinator's run/job model, independent of gRPC: runs split into jobs, jobs leased to
// workers with an expiry (re-queued when a lease is lost), results fenced by lease id, committed
// in groups to SQLite before they are acknowledged, and aggregated into run totals.
//
//   auto c = Coordinator::Open({.data_dir = "/var/lib/arbiter"}, &registry);
//   absl::StatusOr<v1::Run> run = c->SubmitPerft(request);    // splits; may take a while
//   c->AcquireJob(acquire_request, [](auto job) { ... });     // long poll, callback once
//
// Callbacks run on the caller's thread or on the coordinator's own threads, never under its lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/match_run.h"
#include "coordinator/store.h"
#include "proto/arbiter/v1/cluster.pb.h"
#include "proto/arbiter/v1/store.pb.h"

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
};

class CoordinatorMetrics;

class Coordinator {
 public:
  using Clock = std::chrono::steady_clock;
  using RunCallback = std::function<void(absl::StatusOr<v1::Run>, uint64_t version)>;
  using JobCallback = std::function<void(absl::StatusOr<v1::AcquireJobResponse>)>;
  using CompleteCallback = std::function<void(absl::StatusOr<v1::CompleteJobResponse>)>;

  // Opens the store under options.data_dir and resumes every unfinished run.
  // `registry` may be null (no metrics).
  static absl::StatusOr<std::unique_ptr<Coordinator>> Open(const CoordinatorOptions& options,
                                                           prometheus::Registry* registry);
  ~Coordinator();
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;

  // Runs. SubmitPerft validates, splits and stores the run before returning it.
  absl::StatusOr<v1::Run> SubmitPerft(const v1::SubmitPerftRequest& request);
  // Match runs: batches of game pairs; every reported game is replayed before it counts, and a
  // decided SPRT finishes the run (outstanding jobs are cancelled).
  absl::StatusOr<v1::Run> SubmitMatch(const v1::SubmitMatchRequest& request);
  // Tournament runs: a round robin or gauntlet, each pairing's game pairs in match jobs (played
  // and replayed like a match's), rated together as results come in.
  absl::StatusOr<v1::Run> SubmitTournament(const v1::SubmitTournamentRequest& request);
  // PGN of a match or tournament run's counted games (and a summary of each), from the store.
  absl::StatusOr<v1::GetPgnResponse> GetPgn(uint64_t run_id);
  absl::StatusOr<v1::Run> GetRun(uint64_t run_id);
  v1::ListRunsResponse ListRuns(const v1::ListRunsRequest& request);
  absl::StatusOr<v1::Run> CancelRun(uint64_t run_id, const std::string& reason);
  // Calls `cb` once, as soon as the run's version is above `seen` (at once if it already is).
  // Returns a watch id for CancelWatch, or 0 when `cb` was already called.
  uint64_t WatchRun(uint64_t run_id, uint64_t seen, RunCallback cb);
  // True when the watch was still waiting (its callback will never be called).
  bool CancelWatch(uint64_t watch_id);

  // Work.
  absl::StatusOr<v1::RegisterResponse> Register(const v1::RegisterRequest& request);
  // Calls `cb` once with a leased job, or with no job when the wait is over. Returns a waiter
  // id for CancelAcquire, or 0 when `cb` was already called.
  uint64_t AcquireJob(const v1::AcquireJobRequest& request, JobCallback cb);
  bool CancelAcquire(uint64_t waiter_id);
  absl::StatusOr<v1::HeartbeatResponse> Heartbeat(const v1::HeartbeatRequest& request);
  // `cb` gets OK only after the result is committed to the store.
  void CompleteJob(const v1::CompleteJobRequest& request, CompleteCallback cb);
  absl::Status ReleaseJob(const v1::ReleaseJobRequest& request);

  // Engines: a finished upload (the bytes are in `temp_path`, which is moved into the store).
  absl::StatusOr<v1::Engine> AddEngine(const std::string& name, const std::string& temp_path);
  v1::ListEnginesResponse ListEngines();
  // Path of a stored artifact, or NOT_FOUND.
  absl::StatusOr<std::string> EnginePath(const std::string& sha256);
  std::string UploadDir() const;
  uint64_t max_upload_bytes() const { return options_.max_upload_bytes; }

  // Fails every waiting long poll and watch with UNAVAILABLE and refuses new ones; stops threads.
  void Shutdown();

  size_t ConnectedWorkers();
  // Perft hash tables among the connected workers (workers of one hash group share one).
  size_t ConnectedHashTables();
  // The largest --threads among connected workers (0 when none is connected).
  uint32_t MaxWorkerThreads();

 private:
  struct Lease {
    uint64_t id = 0;
    std::string worker_id;
    Clock::time_point expiry;
  };
  struct Result {
    std::string worker_id, worker_name;
    uint64_t lease_id = 0;
    double seconds = 0;
    std::vector<uint64_t> counts;                     // perft
    std::shared_ptr<const v1::MatchJobResult> match;  // match
  };
  struct Job {
    uint64_t id = 0, run_id = 0;
    v1::StoredPerftJob spec;        // perft runs
    v1::StoredMatchJob match_spec;  // match and tournament runs
    uint32_t pairing = 0;           // tournaments: the pairing's index (kept after the run ends)
    int want = 1;                   // results wanted: 1, or 2 when verifying (+1 per disagreement)
    std::vector<Result> results;
    std::vector<Lease> leases;
    std::vector<uint64_t> past_leases;
    int pending = 0;  // completions being committed
    bool done = false, cancelled = false, failed = false;
    // Perft runs on workers with hashes of their own: the worker lane the job belongs to (a
    // contiguous range of the split's order per worker, so that each worker's hash sees one
    // region of the tree); kNoLane: any worker, in queue order.
    uint32_t lane = kNoLane;
  };
  static constexpr uint32_t kNoLane = UINT32_MAX;
  struct Run {
    uint64_t id = 0;
    v1::RunKind kind = v1::RUN_KIND_PERFT;
    v1::RunState state = v1::RUN_STATE_QUEUED;
    std::string message;
    double created_unix = 0, started_unix = 0, finished_unix = 0;
    bool started_persisted = false;
    v1::StoredPerftRun perft;
    v1::StoredMatchRun match;
    v1::StoredTournamentRun tournament;
    MatchTally tally;
    std::vector<MatchTally> pairing_tallies;  // tournaments, in TournamentPairings order
    std::optional<stats::SprtParams> sprt;
    std::vector<std::pair<uint64_t, uint64_t>> counted;  // (job, lease) of counted match results
    std::vector<uint64_t> jobs;
    unsigned __int128 total = 0;
    std::vector<unsigned __int128> divide;
    double estimate_total = 0, estimate_done = 0;
    uint64_t jobs_done = 0, jobs_leased = 0, jobs_cancelled = 0;
    std::vector<v1::Disagreement> disagreements;
    uint64_t version = 1;
    std::unique_ptr<v1::Run> final;         // set once finished
    std::vector<std::string> lane_workers;  // the worker of each lane ("" = not claimed yet)
  };
  struct Worker {
    std::string name;
    uint32_t threads = 0;
    std::string hash_group;  // empty: its own hash
    Clock::time_point last_seen;
  };
  struct Waiter {
    uint64_t id;
    std::string worker_id;
    Clock::time_point deadline;
    JobCallback cb;
  };
  struct Watch {
    uint64_t id, run_id, seen;
    RunCallback cb;
  };
  struct Pending {
    uint64_t job_id, run_id;
    Result result;
    std::vector<CompleteCallback> callbacks;
  };
  using Deferred = std::vector<std::function<void()>>;

  Coordinator(const CoordinatorOptions& options, std::unique_ptr<Store> store,
              prometheus::Registry* registry);
  absl::Status Load();
  void AddRunLocked(std::unique_ptr<Run> run, std::vector<std::unique_ptr<Job>> jobs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a committed result; may finish the job and the run (appending the run's update).
  void IngestResultLocked(Job& job, Result result, std::vector<RunUpdate>& updates)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void FinishRunLocked(Run& run, v1::RunState state, const std::string& message,
                       std::vector<RunUpdate>& updates) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::Run BuildRunLocked(const Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Job* TakeJobLocked(const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The lane of `run` that `worker_id` works on, claiming a free one (or one whose worker is gone)
  // if it has none; kNoLane when every lane has a live worker.
  uint32_t LaneOfLocked(Run& run, const std::string& worker_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  v1::AcquireJobResponse LeaseLocked(Job& job, const std::string& worker_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveLeaseLocked(Job& job, size_t index) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DispatchLocked(Deferred& deferred) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void TickLocked(Deferred& deferred) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdateGaugesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReaperLoop();
  void CommitLoop();
  bool JobHeldBy(const Job& job, const std::string& worker_id) const;
  // Index of the job's live lease `lease_id`, or job.leases.size() when it has none such.
  static size_t LeaseIndex(const Job& job, uint64_t lease_id);
  // Whether `lease_id` was ever granted for the job (live or not).
  static bool WasIssued(const Job& job, uint64_t lease_id);
  // Jobs of the run neither done, cancelled nor leased.
  static uint64_t QueuedJobs(const Run& run);
  // Seen within a lease period plus a long poll: counts as connected.
  bool SeenRecently(const Worker& worker, Clock::time_point now) const;
  absl::StatusOr<v1::Run> AddNewRun(std::unique_ptr<Run> run, std::vector<StoredJob> stored,
                                    std::vector<std::unique_ptr<Job>> jobs,
                                    const std::string& spec);
  // Stores and starts a match or tournament run whose jobs are `plan`.
  absl::StatusOr<v1::Run> AddGamesRun(std::unique_ptr<Run> run, std::vector<v1::MatchJob> plan,
                                      const std::string& spec);
  // A queued run of `kind`, created now.
  static std::unique_ptr<Run> NewRun(v1::RunKind kind);
  // UNAVAILABLE once shutting down.
  absl::Status CheckAcceptingRuns();
  bool EngineKnown(const std::string& sha256);

  const CoordinatorOptions options_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CoordinatorMetrics> metrics_;

  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  std::map<uint64_t, std::unique_ptr<Run>> runs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::unique_ptr<Job>> jobs_ ABSL_GUARDED_BY(mu_);
  // One entry per result still wanted and not leased: job ids, oldest run first.
  std::deque<uint64_t> ready_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<uint64_t> leased_jobs_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Worker> workers_ ABSL_GUARDED_BY(mu_);
  std::deque<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  std::vector<Watch> watches_ ABSL_GUARDED_BY(mu_);
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, v1::Engine> engines_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;  // waiters and watches
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  Clock::time_point last_gauges_ ABSL_GUARDED_BY(mu_);

  bool stop_threads_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reaper_, committer_;
};

// The decimal text of a 128-bit count.
std::string Uint128ToString(unsigned __int128 v);

}  // namespace arbiter::coordinator

// The coordinator's durable state: runs, jobs and job results in SQLite (WAL mode,
// synchronous=FULL), so that a result acknowledged to a worker survives a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

struct sqlite3;

namespace arbiter::coordinator {

// The schema this build reads and writes (PRAGMA user_version); another is refused at Open, but
// for kOldestUpgradableSchemaVersion and the versions after it, which are upgraded in place.
inline constexpr int kSchemaVersion = 6;
inline constexpr int kOldestUpgradableSchemaVersion = 4;

struct StoredRun {
  uint64_t id = 0;
  std::string owner;  // the submitting token's name
  int kind = 0;       // v1::RunKind
  int state = 0;      // v1::RunState
  double created_unix = 0, started_unix = 0, finished_unix = 0;
  std::string message;
  std::string spec;    // serialized StoredPerftRun (or another kind's record)
  std::string result;  // serialized final v1::Run, once finished
  int priority = 0;
  int throughput = 100;  // percent
};

struct StoredJob {
  uint64_t id = 0;
  uint64_t run_id = 0;
  std::string spec;  // serialized StoredPerftJob
};

struct StoredResult {
  uint64_t job_id = 0;
  uint64_t run_id = 0;
  std::string worker_id;
  std::string worker_name;
  uint64_t lease_id = 0;
  double seconds = 0;
  std::string result;  // serialized PerftJobResult
  std::string token;   // name of the worker's token
};

// A worker token whose workers take no leases (one of them lost a vote on a perft count), until
// an admin lifts it.
struct StoredQuarantine {
  std::string name;
  std::string reason;
  double since_unix = 0;
};

// The residual check's verdict on one worker's games in a match run (a serialized
// v1::WorkerResidual): set aside, accepted or voided.
struct StoredResidual {
  uint64_t run_id = 0;
  std::string worker_id;
  std::string verdict;
};

struct StoredEngine {
  std::string sha256;
  std::string name;
  uint64_t size_bytes = 0;
  double uploaded_unix = 0;
  std::string owner;  // the uploading token's name
};

// An API token: only the SHA-256 of its secret is kept.
struct StoredToken {
  std::string name;
  int role = 0;  // v1::Role
  std::string hash;
  double created_unix = 0, last_used_unix = 0;
};

// What a run's state update in a commit batch writes.
struct RunUpdate {
  uint64_t id = 0;
  int state = 0;
  double started_unix = 0, finished_unix = 0;
  std::string message;
  std::string result;
};

class Store {
 public:
  // Opens (creating if needed) DIR/arbiter.db. Refuses a directory another process holds
  // (DIR/arbiter.lock), a database that fails SQLite's quick_check or has another schema version.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts a run and its jobs in one transaction; fills in their ids.
  absl::Status CreateRun(StoredRun& run, std::vector<StoredJob>& jobs);
  // Appends jobs to run `run_id` and replaces its spec (a streamed split's advanced cursor) in one
  // transaction; fills in the jobs' ids.
  absl::Status AppendJobs(uint64_t run_id, std::vector<StoredJob>& jobs,
                          const std::string& run_spec);
  // One transaction: results, then run updates.
  absl::Status Commit(const std::vector<StoredResult>& results, const std::vector<RunUpdate>& runs);

  absl::Status SetScheduling(uint64_t run_id, int priority, int throughput);
  absl::StatusOr<std::vector<StoredRun>> LoadRuns();
  absl::StatusOr<std::vector<StoredJob>> LoadJobs(uint64_t run_id);
  absl::StatusOr<std::vector<StoredResult>> LoadResults(uint64_t run_id);
  absl::StatusOr<std::vector<StoredResult>> LoadJobResults(uint64_t job_id);
  absl::StatusOr<StoredJob> LoadJob(uint64_t job_id);
  // Highest job and lease-free ids so far (ids keep growing across restarts).
  absl::StatusOr<uint64_t> MaxJobId();

  absl::Status PutEngine(const StoredEngine& engine);
  absl::StatusOr<std::vector<StoredEngine>> LoadEngines();
  absl::Status DeleteEngine(const std::string& sha256);

  absl::Status PutToken(const StoredToken& token);
  absl::Status DeleteToken(const std::string& name);
  absl::Status TouchTokens(const std::vector<std::pair<std::string, double>>& last_used);
  absl::StatusOr<std::vector<StoredToken>> LoadTokens();

  // One transaction: token `q.name` is quarantined, its results in runs `run_ids` are voided and
  // jobs `job_ids` lose every result (they are counted again).
  absl::Status Quarantine(const StoredQuarantine& q, const std::vector<uint64_t>& run_ids,
                          const std::vector<uint64_t>& job_ids);
  // Voids one result (of a token quarantined while the result was being committed).
  absl::Status DeleteResult(uint64_t job_id, uint64_t lease_id);
  absl::Status LiftQuarantine(const std::string& name);
  absl::StatusOr<std::vector<StoredQuarantine>> LoadQuarantines();
  // Replaces the verdict on `r.worker_id` in run `r.run_id`.
  absl::Status PutResidual(const StoredResidual& r);
  absl::StatusOr<std::vector<StoredResidual>> LoadResiduals();

 private:
  Store(sqlite3* db, int lock_fd) : db_(db), lock_fd_(lock_fd) {}
  absl::Status Exec(const char* sql);
  // The first column of the first row of `sql`, as text.
  absl::StatusOr<std::string> QueryText(const char* sql);
  // BEGIN IMMEDIATE, `body`, then COMMIT, or ROLLBACK when `body` fails (its error is returned).
  absl::Status InTransaction(const std::function<absl::Status()>& body);
  // Converts the match and tournament runs an older schema stored (inside Open's transaction).
  absl::Status UpgradeRuns();
  absl::Mutex mu_;
  sqlite3* db_;
  int lock_fd_ = -1;  // flock'd DATA/arbiter.lock
};

}  // namespace arbiter::coordinator

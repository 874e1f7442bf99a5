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

struct StoredRun {
  uint64_t id = 0;
  int kind = 0;   // v1::RunKind
  int state = 0;  // v1::RunState
  double created_unix = 0, started_unix = 0, finished_unix = 0;
  std::string message;
  std::string spec;    // serialized StoredPerftRun (or another kind's record)
  std::string result;  // serialized final v1::Run, once finished
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
};

struct StoredEngine {
  std::string sha256;
  std::string name;
  uint64_t size_bytes = 0;
  double uploaded_unix = 0;
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
  // Opens (creating if needed) DIR/arbiter.db.
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& dir);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts a run and its jobs in one transaction; fills in their ids.
  absl::Status CreateRun(StoredRun& run, std::vector<StoredJob>& jobs);
  // One transaction: results, then run updates.
  absl::Status Commit(const std::vector<StoredResult>& results, const std::vector<RunUpdate>& runs);

  absl::StatusOr<std::vector<StoredRun>> LoadRuns();
  absl::StatusOr<std::vector<StoredJob>> LoadJobs(uint64_t run_id);
  absl::StatusOr<std::vector<StoredResult>> LoadResults(uint64_t run_id);
  // Highest job and lease-free ids so far (ids keep growing across restarts).
  absl::StatusOr<uint64_t> MaxJobId();

  absl::Status PutEngine(const StoredEngine& engine);
  absl::StatusOr<std::vector<StoredEngine>> LoadEngines();

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  absl::Status Exec(const char* sql);
  // BEGIN IMMEDIATE, `body`, then COMMIT, or ROLLBACK when `body` fails (its error is returned).
  absl::Status InTransaction(const std::function<absl::Status()>& body);
  absl::Mutex mu_;
  sqlite3* db_;
};

}  // namespace arbiter::coordinator

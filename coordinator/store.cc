#include "coordinator/store.h"

#include <sqlite3.h>

#include <filesystem>

#include "base/status_macros.h"
#include "base/strings.h"

namespace arbiter::coordinator {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, state INTEGER NOT NULL,
  created_unix REAL NOT NULL, started_unix REAL NOT NULL DEFAULT 0,
  finished_unix REAL NOT NULL DEFAULT 0, message TEXT NOT NULL DEFAULT '',
  spec BLOB NOT NULL, result BLOB);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, spec BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id);
CREATE TABLE IF NOT EXISTS results (
  job_id INTEGER NOT NULL, run_id INTEGER NOT NULL, worker_id TEXT NOT NULL,
  worker_name TEXT NOT NULL, lease_id INTEGER NOT NULL, seconds REAL NOT NULL,
  result BLOB NOT NULL, PRIMARY KEY (job_id, lease_id));
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id);
CREATE TABLE IF NOT EXISTS engines (
  sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, size_bytes INTEGER NOT NULL,
  uploaded_unix REAL NOT NULL);
)sql";

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return stmt_; }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_blob(stmt_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
  }
  void BindText(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
  }
  int Step() { return sqlite3_step(stmt_); }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t Int(int c) { return sqlite3_column_int64(stmt_, c); }
  double Real(int c) { return sqlite3_column_double(stmt_, c); }
  std::string Blob(int c) {
    const void* p = sqlite3_column_blob(stmt_, c);
    return p ? std::string(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, c))
             : std::string();
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

absl::Status SqlError(sqlite3* db, std::string_view what) {
  return absl::InternalError(Cat("sqlite ", what, ": ", sqlite3_errmsg(db)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return absl::InvalidArgumentError(Cat("cannot create data dir '", dir, "': ", ec.message()));
  const std::string path = (std::filesystem::path(dir) / "arbiter.db").string();
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::InvalidArgumentError(Cat("cannot open database '", path, "': ", msg));
  }
  std::unique_ptr<Store> store(new Store(db));
  sqlite3_busy_timeout(db, 5000);
  RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=FULL"));
  RETURN_IF_ERROR(store->Exec(kSchema));
  return store;
}

Store::~Store() { sqlite3_close(db_); }

absl::Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(Cat("sqlite: ", msg, " in: ", std::string(sql).substr(0, 60)));
  }
  return absl::OkStatus();
}

absl::Status Store::CreateRun(StoredRun& run, std::vector<StoredJob>& jobs) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  auto fail = [&](std::string_view what) {
    absl::Status st = SqlError(db_, what);
    (void)Exec("ROLLBACK");
    return st;
  };
  {
    Stmt s(db_,
           "INSERT INTO runs (kind, state, created_unix, message, spec) VALUES (?, ?, ?, ?, ?)");
    if (!s.ok()) return fail("prepare run insert");
    s.Bind(1, int64_t(run.kind));
    s.Bind(2, int64_t(run.state));
    s.Bind(3, run.created_unix);
    s.BindText(4, run.message);
    s.Bind(5, run.spec);
    if (s.Step() != SQLITE_DONE) return fail("insert run");
    run.id = uint64_t(sqlite3_last_insert_rowid(db_));
  }
  uint64_t next_job = 1;
  {
    Stmt s(db_, "SELECT COALESCE(MAX(id), 0) FROM jobs");
    if (!s.ok() || s.Step() != SQLITE_ROW) return fail("max job id");
    next_job = uint64_t(s.Int(0)) + 1;
  }
  Stmt s(db_, "INSERT INTO jobs (id, run_id, spec) VALUES (?, ?, ?)");
  if (!s.ok()) return fail("prepare job insert");
  for (StoredJob& job : jobs) {
    job.id = next_job++;
    job.run_id = run.id;
    s.Bind(1, int64_t(job.id));
    s.Bind(2, int64_t(job.run_id));
    s.Bind(3, job.spec);
    if (s.Step() != SQLITE_DONE) return fail("insert job");
    s.Reset();
  }
  return Exec("COMMIT");
}

absl::Status Store::Commit(const std::vector<StoredResult>& results,
                           const std::vector<RunUpdate>& runs) {
  absl::MutexLock lock(&mu_);
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  auto fail = [&](std::string_view what) {
    absl::Status st = SqlError(db_, what);
    (void)Exec("ROLLBACK");
    return st;
  };
  if (!results.empty()) {
    Stmt s(db_,
           "INSERT OR IGNORE INTO results (job_id, run_id, worker_id, worker_name, lease_id, "
           "seconds, result) VALUES (?, ?, ?, ?, ?, ?, ?)");
    if (!s.ok()) return fail("prepare result insert");
    for (const StoredResult& r : results) {
      s.Bind(1, int64_t(r.job_id));
      s.Bind(2, int64_t(r.run_id));
      s.BindText(3, r.worker_id);
      s.BindText(4, r.worker_name);
      s.Bind(5, int64_t(r.lease_id));
      s.Bind(6, r.seconds);
      s.Bind(7, r.result);
      if (s.Step() != SQLITE_DONE) return fail("insert result");
      s.Reset();
    }
  }
  if (!runs.empty()) {
    Stmt s(db_,
           "UPDATE runs SET state = ?, started_unix = MAX(started_unix, ?), "
           "finished_unix = ?, message = ?, result = ? WHERE id = ?");
    if (!s.ok()) return fail("prepare run update");
    for (const RunUpdate& u : runs) {
      s.Bind(1, int64_t(u.state));
      s.Bind(2, u.started_unix);
      s.Bind(3, u.finished_unix);
      s.BindText(4, u.message);
      s.Bind(5, u.result);
      s.Bind(6, int64_t(u.id));
      if (s.Step() != SQLITE_DONE) return fail("update run");
      s.Reset();
    }
  }
  return Exec("COMMIT");
}

absl::StatusOr<std::vector<StoredRun>> Store::LoadRuns() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT id, kind, state, created_unix, started_unix, finished_unix, message, spec, "
         "result FROM runs ORDER BY id");
  if (!s.ok()) return SqlError(db_, "prepare load runs");
  std::vector<StoredRun> out;
  while (s.Step() == SQLITE_ROW) {
    StoredRun r;
    r.id = s.Int(0);
    r.kind = int(s.Int(1));
    r.state = int(s.Int(2));
    r.created_unix = s.Real(3);
    r.started_unix = s.Real(4);
    r.finished_unix = s.Real(5);
    r.message = s.Blob(6);
    r.spec = s.Blob(7);
    r.result = s.Blob(8);
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<std::vector<StoredJob>> Store::LoadJobs(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT id, spec FROM jobs WHERE run_id = ? ORDER BY id");
  if (!s.ok()) return SqlError(db_, "prepare load jobs");
  s.Bind(1, int64_t(run_id));
  std::vector<StoredJob> out;
  while (s.Step() == SQLITE_ROW) out.push_back({uint64_t(s.Int(0)), run_id, s.Blob(1)});
  return out;
}

absl::StatusOr<std::vector<StoredResult>> Store::LoadResults(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT job_id, worker_id, worker_name, lease_id, seconds, result FROM results "
         "WHERE run_id = ? ORDER BY rowid");
  if (!s.ok()) return SqlError(db_, "prepare load results");
  s.Bind(1, int64_t(run_id));
  std::vector<StoredResult> out;
  while (s.Step() == SQLITE_ROW) {
    StoredResult r;
    r.job_id = s.Int(0);
    r.run_id = run_id;
    r.worker_id = s.Blob(1);
    r.worker_name = s.Blob(2);
    r.lease_id = s.Int(3);
    r.seconds = s.Real(4);
    r.result = s.Blob(5);
    out.push_back(std::move(r));
  }
  return out;
}

absl::StatusOr<uint64_t> Store::MaxJobId() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT COALESCE(MAX(id), 0) FROM jobs");
  if (!s.ok() || s.Step() != SQLITE_ROW) return SqlError(db_, "max job id");
  return uint64_t(s.Int(0));
}

absl::Status Store::PutEngine(const StoredEngine& e) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "INSERT OR IGNORE INTO engines (sha256, name, size_bytes, uploaded_unix) "
         "VALUES (?, ?, ?, ?)");
  if (!s.ok()) return SqlError(db_, "prepare engine insert");
  s.BindText(1, e.sha256);
  s.BindText(2, e.name);
  s.Bind(3, int64_t(e.size_bytes));
  s.Bind(4, e.uploaded_unix);
  if (s.Step() != SQLITE_DONE) return SqlError(db_, "insert engine");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredEngine>> Store::LoadEngines() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT sha256, name, size_bytes, uploaded_unix FROM engines ORDER BY uploaded_unix");
  if (!s.ok()) return SqlError(db_, "prepare load engines");
  std::vector<StoredEngine> out;
  while (s.Step() == SQLITE_ROW)
    out.push_back({s.Blob(0), s.Blob(1), uint64_t(s.Int(2)), s.Real(3)});
  return out;
}

}  // namespace arbiter::coordinator

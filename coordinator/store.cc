#include "coordinator/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/store_upgrade.h"
#include "proto/arbiter/v1/run.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

// Version 1 had no owners and no tokens (and no user_version); version 2 adds both; version 3
// the runs' priority and throughput; version 4 stores games with enums (ReportedGame's end,
// result and side at fault) and match scores as MatchResult; version 5 may hold streamed perft
// runs, whose jobs come over time from a cursor in the run's spec: an arbiter of version 4 would
// ignore the cursor and finish such a run when its first chunks are counted, so it must refuse
// the file; version 6 stores a match's and a tournament's shared fields in GamesSettings (a
// version 5 arbiter would read such a request as empty). Versions 4 and 5 are the same tables:
// they are upgraded in place, their match and tournament records converted
// (coordinator/store_upgrade.h). Older databases are refused.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, state INTEGER NOT NULL,
  created_unix REAL NOT NULL, started_unix REAL NOT NULL DEFAULT 0,
  finished_unix REAL NOT NULL DEFAULT 0, message TEXT NOT NULL DEFAULT '',
  spec BLOB NOT NULL, result BLOB, owner TEXT NOT NULL DEFAULT '',
  priority INTEGER NOT NULL DEFAULT 0, throughput INTEGER NOT NULL DEFAULT 100);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, spec BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id);
CREATE TABLE IF NOT EXISTS results (
  job_id INTEGER NOT NULL, run_id INTEGER NOT NULL, worker_id TEXT NOT NULL,
  worker_name TEXT NOT NULL, lease_id INTEGER NOT NULL, seconds REAL NOT NULL,
  result BLOB NOT NULL, token TEXT NOT NULL DEFAULT '', PRIMARY KEY (job_id, lease_id));
CREATE INDEX IF NOT EXISTS results_by_run ON results(run_id);
CREATE TABLE IF NOT EXISTS engines (
  sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, size_bytes INTEGER NOT NULL,
  uploaded_unix REAL NOT NULL, owner TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS tokens (
  name TEXT PRIMARY KEY, role INTEGER NOT NULL, hash TEXT NOT NULL UNIQUE,
  created_unix REAL NOT NULL, last_used_unix REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS quarantined_tokens (
  name TEXT PRIMARY KEY, reason TEXT NOT NULL, since_unix REAL NOT NULL);
CREATE TABLE IF NOT EXISTS residuals (
  run_id INTEGER NOT NULL, worker_id TEXT NOT NULL, verdict BLOB NOT NULL,
  PRIMARY KEY (run_id, worker_id));
)sql";

// Text to bind as TEXT rather than as a BLOB.
struct Text {
  const std::string& value;
};

// A prepared statement that finalizes itself.
//
//   Stmt s(db, "INSERT INTO t (a, b) VALUES (?, ?)");
//   if (!s.ok() || !s.Execute(int64_t(1), Text{name})) return SqlError(db, "insert t");
//   Stmt q(db, "SELECT a, b FROM t");
//   while (q.Step() == SQLITE_ROW) q.Columns(row.a, row.b);
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }

  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, uint64_t v) { Bind(i, int64_t(v)); }
  void Bind(int i, int v) { Bind(i, int64_t(v)); }
  void Bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void Bind(int i, const std::string& v) {
    sqlite3_bind_blob(stmt_, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
  }
  void Bind(int i, Text v) {
    sqlite3_bind_text(stmt_, i, v.value.data(), int(v.value.size()), SQLITE_TRANSIENT);
  }
  // Binds `values` to parameters 1, 2, ...
  template <typename... T>
  void BindAll(const T&... values) {
    int i = 0;
    (Bind(++i, values), ...);
  }
  // Binds `values`, runs the statement to completion and resets it for the next values; false
  // when it did not complete.
  template <typename... T>
  bool Execute(const T&... values) {
    BindAll(values...);
    const bool done = Step() == SQLITE_DONE;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    return done;
  }
  int Step() { return sqlite3_step(stmt_); }

  // Reads the current row's columns 0, 1, ... into `out`.
  template <typename... T>
  void Columns(T&... out) {
    int c = 0;
    (Column(c++, out), ...);
  }

 private:
  void Column(int c, int64_t& v) { v = sqlite3_column_int64(stmt_, c); }
  void Column(int c, uint64_t& v) { v = uint64_t(sqlite3_column_int64(stmt_, c)); }
  void Column(int c, int& v) { v = int(sqlite3_column_int64(stmt_, c)); }
  void Column(int c, double& v) { v = sqlite3_column_double(stmt_, c); }
  void Column(int c, std::string& v) {
    const void* p = sqlite3_column_blob(stmt_, c);
    v = p ? std::string(static_cast<const char*>(p), sqlite3_column_bytes(stmt_, c))
          : std::string();
  }

  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

absl::Status SqlError(sqlite3* db, std::string_view what) {
  return absl::InternalError(Cat("sqlite ", what, ": ", sqlite3_errmsg(db)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
  std::error_code ec;
  // A directory made here is the coordinator's alone (runs, results, uploaded engines).
  if (std::filesystem::create_directories(dir, ec))
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  if (ec)
    return absl::InvalidArgumentError(Cat("cannot create data dir '", dir, "': ", ec.message()));
  // One coordinator per data directory: an exclusive lock held for the process's life.
  const std::string lock_path = (std::filesystem::path(dir) / "arbiter.lock").string();
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0)
    return absl::PermissionDeniedError(Cat("cannot open '", lock_path, "': ", std::strerror(errno),
                                           " (is the data directory writable?)"));
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return absl::FailedPreconditionError(Cat(
        "data directory '", dir, "' is in use by another coordinator (", lock_path, " is locked)"));
  }
  auto unlock = [lock_fd] { close(lock_fd); };
  const std::string path = (std::filesystem::path(dir) / "arbiter.db").string();
  // An empty file is not a new store (a truncated copy, a wrong path): starting afresh over it
  // would lose every run without a word. The database is 0600, and SQLite gives its journal
  // files the database's mode.
  if (struct stat st; stat(path.c_str(), &st) == 0) {
    if (st.st_size == 0) {
      unlock();
      return absl::FailedPreconditionError(
          Cat("database '", path,
              "' is an empty file, not an arbiter store: restore it from a "
              "backup, or remove it to start a new store"));
    }
    if ((st.st_mode & 077) != 0 && st.st_uid == getuid()) chmod(path.c_str(), 0600);
  } else if (const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
             fd >= 0) {
    close(fd);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    unlock();
    return absl::InvalidArgumentError(Cat("cannot open database '", path, "': ", msg));
  }
  std::unique_ptr<Store> store(new Store(db, lock_fd));
  sqlite3_busy_timeout(db, 5000);
  // A damaged file is refused, not used: runs would vanish or come back wrong.
  absl::StatusOr<std::string> check = store->QueryText("PRAGMA quick_check");
  if (!check.ok() || *check != "ok")
    return absl::DataLossError(Cat("database '", path, "' is corrupt or unreadable (",
                                   check.ok() ? *check : std::string(check.status().message()),
                                   "); restore it from a backup or move it away"));
  ASSIGN_OR_RETURN(std::string version, store->QueryText("PRAGMA user_version"));
  ASSIGN_OR_RETURN(std::string tables,
                   store->QueryText("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"));
  if (version == "0" && tables != "0" &&
      !store->QueryText("SELECT name FROM sqlite_master WHERE name = 'runs'").ok())
    return absl::FailedPreconditionError(
        Cat("database '", path,
            "' is a SQLite database of something else (its tables are not "
            "arbiter's): give the coordinator its own data directory"));
  const int found = version != "0" ? std::atoi(version.c_str()) : tables != "0" ? 1 : 0;
  const bool upgrade = found >= kOldestUpgradableSchemaVersion && found < kSchemaVersion;
  if (found != 0 && found != kSchemaVersion && !upgrade) {
    return absl::FailedPreconditionError(
        Cat("database '", path, "' has schema version ", found, "; this arbiter reads version ",
            kSchemaVersion, " (start a new data directory, or use the arbiter that wrote it)"));
  }
  RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=FULL"));
  RETURN_IF_ERROR(store->Exec(kSchema));
  // Results carry their worker's token (a quarantine voids a token's results): a column added
  // in place, which an arbiter without it ignores.
  ASSIGN_OR_RETURN(std::string has_token,
                   store->QueryText("SELECT COUNT(*) FROM pragma_table_info('results') "
                                    "WHERE name = 'token'"));
  if (has_token == "0")
    RETURN_IF_ERROR(store->Exec("ALTER TABLE results ADD COLUMN token TEXT NOT NULL DEFAULT ''"));
  if (upgrade) {
    // The records and the version change in one transaction: a crash leaves the old file.
    RETURN_IF_ERROR(store->InTransaction([&]() -> absl::Status {
      RETURN_IF_ERROR(store->UpgradeRuns());
      return store->Exec(Cat("PRAGMA user_version = ", kSchemaVersion).c_str());
    }));
    spdlog::info("database '{}' upgraded from schema version {} to {}", path, found,
                 kSchemaVersion);
  } else {
    RETURN_IF_ERROR(store->Exec(Cat("PRAGMA user_version = ", kSchemaVersion).c_str()));
  }
  return store;
}

Store::~Store() {
  sqlite3_close(db_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

absl::Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    return absl::InternalError(Cat("sqlite: ", msg, " in: ", std::string(sql).substr(0, 60)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Store::QueryText(const char* sql) {
  Stmt s(db_, sql);
  if (!s.ok()) return SqlError(db_, sql);
  if (s.Step() != SQLITE_ROW) return SqlError(db_, sql);
  std::string out;
  s.Columns(out);
  return out;
}

absl::Status Store::InTransaction(const std::function<absl::Status()>& body) {
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  absl::Status st = body();
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  return Exec("COMMIT");
}

namespace {

// Inserts `jobs` of run `run_id` with ids after the highest so far (inside a transaction).
absl::Status InsertJobs(sqlite3* db, uint64_t run_id, std::vector<StoredJob>& jobs) {
  uint64_t next_job = 1;
  {
    Stmt s(db, "SELECT COALESCE(MAX(id), 0) FROM jobs");
    if (!s.ok() || s.Step() != SQLITE_ROW) return SqlError(db, "max job id");
    s.Columns(next_job);
    ++next_job;
  }
  Stmt s(db, "INSERT INTO jobs (id, run_id, spec) VALUES (?, ?, ?)");
  if (!s.ok()) return SqlError(db, "prepare job insert");
  for (StoredJob& job : jobs) {
    job.id = next_job++;
    job.run_id = run_id;
    if (!s.Execute(job.id, job.run_id, job.spec)) return SqlError(db, "insert job");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Store::CreateRun(StoredRun& run, std::vector<StoredJob>& jobs) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&]() -> absl::Status {
    {
      Stmt s(db_,
             "INSERT INTO runs (kind, state, created_unix, message, spec, owner, priority, "
             "throughput) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      if (!s.ok()) return SqlError(db_, "prepare run insert");
      if (!s.Execute(run.kind, run.state, run.created_unix, Text{run.message}, run.spec,
                     Text{run.owner}, run.priority, run.throughput))
        return SqlError(db_, "insert run");
      run.id = uint64_t(sqlite3_last_insert_rowid(db_));
    }
    return InsertJobs(db_, run.id, jobs);
  });
}

absl::Status Store::AppendJobs(uint64_t run_id, std::vector<StoredJob>& jobs,
                               const std::string& run_spec) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&]() -> absl::Status {
    {
      Stmt s(db_, "UPDATE runs SET spec = ? WHERE id = ?");
      if (!s.ok()) return SqlError(db_, "prepare run spec update");
      if (!s.Execute(run_spec, run_id)) return SqlError(db_, "update run spec");
      if (sqlite3_changes(db_) != 1)
        return absl::NotFoundError(Cat("run ", run_id, " is not stored"));
    }
    return InsertJobs(db_, run_id, jobs);
  });
}

absl::Status Store::Commit(const std::vector<StoredResult>& results,
                           const std::vector<RunUpdate>& runs) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&]() -> absl::Status {
    if (!results.empty()) {
      Stmt s(db_,
             "INSERT OR IGNORE INTO results (job_id, run_id, worker_id, worker_name, lease_id, "
             "seconds, result, token) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      if (!s.ok()) return SqlError(db_, "prepare result insert");
      for (const StoredResult& r : results)
        if (!s.Execute(r.job_id, r.run_id, Text{r.worker_id}, Text{r.worker_name}, r.lease_id,
                       r.seconds, r.result, Text{r.token}))
          return SqlError(db_, "insert result");
    }
    if (!runs.empty()) {
      Stmt s(db_,
             "UPDATE runs SET state = ?, started_unix = MAX(started_unix, ?), "
             "finished_unix = ?, message = ?, result = ? WHERE id = ?");
      if (!s.ok()) return SqlError(db_, "prepare run update");
      for (const RunUpdate& u : runs)
        if (!s.Execute(u.state, u.started_unix, u.finished_unix, Text{u.message}, u.result, u.id))
          return SqlError(db_, "update run");
    }
    return absl::OkStatus();
  });
}

absl::Status Store::UpgradeRuns() {
  struct Row {
    uint64_t id = 0;
    int kind = 0;
    std::string spec, result;
  };
  std::vector<Row> rows;
  {
    Stmt s(db_, "SELECT id, kind, spec, result FROM runs WHERE kind IN (?, ?)");
    if (!s.ok()) return SqlError(db_, "prepare upgrade runs");
    s.BindAll(int(v1::RUN_KIND_MATCH), int(v1::RUN_KIND_TOURNAMENT));
    while (s.Step() == SQLITE_ROW) {
      Row& r = rows.emplace_back();
      s.Columns(r.id, r.kind, r.spec, r.result);
    }
  }
  Stmt update(db_, "UPDATE runs SET spec = ?, result = ? WHERE id = ?");
  Stmt update_spec(db_, "UPDATE runs SET spec = ? WHERE id = ?");
  if (!update.ok() || !update_spec.ok()) return SqlError(db_, "prepare upgrade run");
  for (const Row& r : rows) {
    absl::StatusOr<std::string> spec = UpgradeRunSpec(r.kind, r.spec);
    absl::StatusOr<std::string> result = UpgradeRunResult(r.result);
    // A record that does not parse stays as it is: loading it fails that run alone, as it
    // would have before the upgrade.
    if (!spec.ok() || !result.ok()) {
      spdlog::warn("run {}: left as it was: {}", r.id,
                   std::string((spec.ok() ? result.status() : spec.status()).message()));
      continue;
    }
    // A run without a final status keeps its NULL result.
    if (!(r.result.empty() ? update_spec.Execute(*spec, r.id)
                           : update.Execute(*spec, *result, r.id)))
      return SqlError(db_, "upgrade run");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredRun>> Store::LoadRuns() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT id, kind, state, created_unix, started_unix, finished_unix, message, spec, "
         "result, owner, priority, throughput FROM runs ORDER BY id");
  if (!s.ok()) return SqlError(db_, "prepare load runs");
  std::vector<StoredRun> out;
  while (s.Step() == SQLITE_ROW) {
    StoredRun& r = out.emplace_back();
    s.Columns(r.id, r.kind, r.state, r.created_unix, r.started_unix, r.finished_unix, r.message,
              r.spec, r.result, r.owner, r.priority, r.throughput);
  }
  return out;
}

absl::Status Store::SetScheduling(uint64_t run_id, int priority, int throughput) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "UPDATE runs SET priority = ?, throughput = ? WHERE id = ?");
  if (!s.ok() || !s.Execute(priority, throughput, run_id)) return SqlError(db_, "set scheduling");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredJob>> Store::LoadJobs(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT id, spec FROM jobs WHERE run_id = ? ORDER BY id");
  if (!s.ok()) return SqlError(db_, "prepare load jobs");
  s.BindAll(run_id);
  std::vector<StoredJob> out;
  while (s.Step() == SQLITE_ROW) {
    StoredJob& j = out.emplace_back();
    j.run_id = run_id;
    s.Columns(j.id, j.spec);
  }
  return out;
}

absl::StatusOr<std::vector<StoredResult>> Store::LoadResults(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT job_id, worker_id, worker_name, lease_id, seconds, result, token FROM results "
         "WHERE run_id = ? ORDER BY rowid");
  if (!s.ok()) return SqlError(db_, "prepare load results");
  s.BindAll(run_id);
  std::vector<StoredResult> out;
  while (s.Step() == SQLITE_ROW) {
    StoredResult& r = out.emplace_back();
    r.run_id = run_id;
    s.Columns(r.job_id, r.worker_id, r.worker_name, r.lease_id, r.seconds, r.result, r.token);
  }
  return out;
}

absl::StatusOr<std::vector<StoredResult>> Store::LoadJobResults(uint64_t job_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT run_id, worker_id, worker_name, lease_id, seconds, result, token FROM results "
         "WHERE job_id = ? ORDER BY rowid");
  if (!s.ok()) return SqlError(db_, "prepare load job results");
  s.BindAll(job_id);
  std::vector<StoredResult> out;
  while (s.Step() == SQLITE_ROW) {
    StoredResult& r = out.emplace_back();
    r.job_id = job_id;
    s.Columns(r.run_id, r.worker_id, r.worker_name, r.lease_id, r.seconds, r.result, r.token);
  }
  return out;
}

absl::StatusOr<StoredJob> Store::LoadJob(uint64_t job_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT run_id, spec FROM jobs WHERE id = ?");
  if (!s.ok()) return SqlError(db_, "prepare load job");
  s.BindAll(job_id);
  StoredJob j;
  j.id = job_id;
  if (s.Step() != SQLITE_ROW) return absl::NotFoundError(Cat("job ", job_id, " is not stored"));
  s.Columns(j.run_id, j.spec);
  return j;
}

absl::Status Store::Quarantine(const StoredQuarantine& q, const std::vector<uint64_t>& run_ids,
                               const std::vector<uint64_t>& job_ids) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&]() -> absl::Status {
    {
      Stmt s(db_,
             "INSERT OR REPLACE INTO quarantined_tokens (name, reason, since_unix) "
             "VALUES (?, ?, ?)");
      if (!s.ok() || !s.Execute(Text{q.name}, Text{q.reason}, q.since_unix))
        return SqlError(db_, "insert quarantine");
    }
    {
      Stmt s(db_, "DELETE FROM results WHERE run_id = ? AND token = ?");
      if (!s.ok()) return SqlError(db_, "prepare void results");
      for (uint64_t run_id : run_ids)
        if (!s.Execute(run_id, Text{q.name})) return SqlError(db_, "void results");
    }
    Stmt s(db_, "DELETE FROM results WHERE job_id = ?");
    if (!s.ok()) return SqlError(db_, "prepare reopen job");
    for (uint64_t job_id : job_ids)
      if (!s.Execute(job_id)) return SqlError(db_, "reopen job");
    return absl::OkStatus();
  });
}

absl::Status Store::DeleteResult(uint64_t job_id, uint64_t lease_id) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "DELETE FROM results WHERE job_id = ? AND lease_id = ?");
  if (!s.ok() || !s.Execute(job_id, lease_id)) return SqlError(db_, "delete result");
  return absl::OkStatus();
}

absl::Status Store::LiftQuarantine(const std::string& name) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "DELETE FROM quarantined_tokens WHERE name = ?");
  if (!s.ok() || !s.Execute(Text{name})) return SqlError(db_, "lift quarantine");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredQuarantine>> Store::LoadQuarantines() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT name, reason, since_unix FROM quarantined_tokens ORDER BY name");
  if (!s.ok()) return SqlError(db_, "prepare load quarantines");
  std::vector<StoredQuarantine> out;
  while (s.Step() == SQLITE_ROW) {
    StoredQuarantine& q = out.emplace_back();
    s.Columns(q.name, q.reason, q.since_unix);
  }
  return out;
}

absl::Status Store::PutResidual(const StoredResidual& r) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "INSERT OR REPLACE INTO residuals (run_id, worker_id, verdict) VALUES (?, ?, ?)");
  if (!s.ok() || !s.Execute(r.run_id, Text{r.worker_id}, r.verdict))
    return SqlError(db_, "store residual verdict");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredResidual>> Store::LoadResiduals() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT run_id, worker_id, verdict FROM residuals ORDER BY run_id, worker_id");
  if (!s.ok()) return SqlError(db_, "prepare load residual verdicts");
  std::vector<StoredResidual> out;
  while (s.Step() == SQLITE_ROW) {
    StoredResidual& r = out.emplace_back();
    s.Columns(r.run_id, r.worker_id, r.verdict);
  }
  return out;
}

absl::StatusOr<uint64_t> Store::MaxJobId() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT COALESCE(MAX(id), 0) FROM jobs");
  if (!s.ok() || s.Step() != SQLITE_ROW) return SqlError(db_, "max job id");
  uint64_t id = 0;
  s.Columns(id);
  return id;
}

absl::Status Store::PutEngine(const StoredEngine& e) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "INSERT OR IGNORE INTO engines (sha256, name, size_bytes, uploaded_unix, owner) "
         "VALUES (?, ?, ?, ?, ?)");
  if (!s.ok()) return SqlError(db_, "prepare engine insert");
  if (!s.Execute(Text{e.sha256}, Text{e.name}, e.size_bytes, e.uploaded_unix, Text{e.owner}))
    return SqlError(db_, "insert engine");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<StoredEngine>> Store::LoadEngines() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_,
         "SELECT sha256, name, size_bytes, uploaded_unix, owner FROM engines ORDER BY "
         "uploaded_unix");
  if (!s.ok()) return SqlError(db_, "prepare load engines");
  std::vector<StoredEngine> out;
  while (s.Step() == SQLITE_ROW) {
    StoredEngine& e = out.emplace_back();
    s.Columns(e.sha256, e.name, e.size_bytes, e.uploaded_unix, e.owner);
  }
  return out;
}

absl::Status Store::DeleteEngine(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "DELETE FROM engines WHERE sha256 = ?");
  if (!s.ok() || !s.Execute(Text{sha256})) return SqlError(db_, "delete engine");
  return absl::OkStatus();
}

absl::Status Store::PutToken(const StoredToken& t) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "INSERT INTO tokens (name, role, hash, created_unix) VALUES (?, ?, ?, ?)");
  if (!s.ok()) return SqlError(db_, "prepare token insert");
  if (!s.Execute(Text{t.name}, t.role, Text{t.hash}, t.created_unix))
    return SqlError(db_, "insert token");
  return absl::OkStatus();
}

absl::Status Store::DeleteToken(const std::string& name) {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "DELETE FROM tokens WHERE name = ?");
  if (!s.ok() || !s.Execute(Text{name})) return SqlError(db_, "delete token");
  return absl::OkStatus();
}

absl::Status Store::TouchTokens(const std::vector<std::pair<std::string, double>>& last_used) {
  absl::MutexLock lock(&mu_);
  return InTransaction([&]() -> absl::Status {
    Stmt s(db_, "UPDATE tokens SET last_used_unix = ? WHERE name = ?");
    if (!s.ok()) return SqlError(db_, "prepare token update");
    for (const auto& [name, when] : last_used)
      if (!s.Execute(when, Text{name})) return SqlError(db_, "update token");
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<StoredToken>> Store::LoadTokens() {
  absl::MutexLock lock(&mu_);
  Stmt s(db_, "SELECT name, role, hash, created_unix, last_used_unix FROM tokens ORDER BY name");
  if (!s.ok()) return SqlError(db_, "prepare load tokens");
  std::vector<StoredToken> out;
  while (s.Step() == SQLITE_ROW) {
    StoredToken& t = out.emplace_back();
    s.Columns(t.name, t.role, t.hash, t.created_unix, t.last_used_unix);
  }
  return out;
}

}  // namespace arbiter::coordinator

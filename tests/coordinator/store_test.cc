// Store on its own, on real SQLite files in a temporary directory: what is written is read back
// after a reopen, ids keep growing, a failed transaction leaves nothing behind, duplicates are
// ignored, a store of the previous schemas is upgraded with its data (match and tournament
// requests converted), and a locked, newer, too old or damaged database is refused.
#include "coordinator/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "proto/arbiter/store/v1/store.pb.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "arbiter-store-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Store> Open() {
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs `sql` on the database file directly, as another program would.
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((fs::path(dir_) / "arbiter.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  // The database file's PRAGMA user_version.
  int UserVersion() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open((fs::path(dir_) / "arbiter.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr), SQLITE_OK);
    const int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return version;
  }

  StoredRun Run(const std::string& spec) {
    StoredRun run;
    run.owner = "alice";
    run.kind = 1;
    run.state = 1;
    run.created_unix = 1000.5;
    run.spec = spec;
    run.priority = -1;
    run.throughput = 250;
    return run;
  }

  std::string dir_;
};

std::vector<StoredJob> Jobs(std::initializer_list<const char*> specs) {
  std::vector<StoredJob> jobs;
  for (const char* s : specs) jobs.push_back({0, 0, s});
  return jobs;
}

TEST_F(StoreTest, RunsJobsAndResultsSurviveAReopen) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(fs::exists(fs::path(dir_) / "arbiter.db"));
    StoredRun run = Run(std::string("spec\0with nul", 13));
    std::vector<StoredJob> jobs = Jobs({"j1", "j2"});
    ASSERT_TRUE(store->CreateRun(run, jobs).ok());
    EXPECT_EQ(run.id, 1u);
    EXPECT_EQ(jobs[0].id, 1u);
    EXPECT_EQ(jobs[1].id, 2u);
    EXPECT_EQ(jobs[1].run_id, 1u);
    ASSERT_TRUE(store
                    ->Commit({{2, 1, "w-1", "pod-a", 77, 1.25, "counts"}},
                             {{1, 2, 1001.0, 0, "running", ""}})
                    .ok());
  }
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  absl::StatusOr<std::vector<StoredRun>> runs = store->LoadRuns();
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 1u);
  const StoredRun& r = (*runs)[0];
  EXPECT_EQ(r.id, 1u);
  EXPECT_EQ(r.owner, "alice");
  EXPECT_EQ(r.kind, 1);
  EXPECT_EQ(r.state, 2);
  EXPECT_DOUBLE_EQ(r.created_unix, 1000.5);
  EXPECT_DOUBLE_EQ(r.started_unix, 1001.0);
  EXPECT_EQ(r.message, "running");
  EXPECT_EQ(r.spec, std::string("spec\0with nul", 13)) << "specs are blobs";
  EXPECT_EQ(r.priority, -1);
  EXPECT_EQ(r.throughput, 250);
  absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs(1);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].spec, "j1");
  EXPECT_EQ((*jobs)[1].id, 2u);
  absl::StatusOr<std::vector<StoredResult>> results = store->LoadResults(1);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 1u);
  const StoredResult& res = (*results)[0];
  EXPECT_EQ(res.job_id, 2u);
  EXPECT_EQ(res.run_id, 1u);
  EXPECT_EQ(res.worker_id, "w-1");
  EXPECT_EQ(res.worker_name, "pod-a");
  EXPECT_EQ(res.lease_id, 77u);
  EXPECT_DOUBLE_EQ(res.seconds, 1.25);
  EXPECT_EQ(res.result, "counts");
  EXPECT_EQ(*store->MaxJobId(), 2u);
}

TEST_F(StoreTest, JobIdsKeepGrowingAcrossRunsAndAppends) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  StoredRun a = Run("a"), b = Run("b");
  std::vector<StoredJob> ja = Jobs({"1", "2", "3"}), jb = Jobs({"4"});
  ASSERT_TRUE(store->CreateRun(a, ja).ok());
  ASSERT_TRUE(store->CreateRun(b, jb).ok());
  EXPECT_EQ(b.id, 2u);
  EXPECT_EQ(jb[0].id, 4u);
  std::vector<StoredJob> more = Jobs({"5", "6"});
  ASSERT_TRUE(store->AppendJobs(a.id, more, "a, advanced").ok());
  EXPECT_EQ(more[0].id, 5u);
  EXPECT_EQ(more[1].id, 6u);
  absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs(a.id);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 5u);
  EXPECT_EQ(jobs->back().spec, "6");
  EXPECT_EQ((*store->LoadRuns())[0].spec, "a, advanced");
  EXPECT_EQ(*store->MaxJobId(), 6u);
}

TEST_F(StoreTest, AppendToAMissingRunFailsAndWritesNoJob) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<StoredJob> jobs = Jobs({"x"});
  EXPECT_EQ(store->AppendJobs(42, jobs, "spec").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(*store->MaxJobId(), 0u) << "the transaction was rolled back";
  EXPECT_TRUE(store->LoadJobs(42)->empty());
}

TEST_F(StoreTest, ADuplicateResultIsIgnoredAndStartTimesNeverGoBack) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  StoredRun run = Run("r");
  std::vector<StoredJob> jobs = Jobs({"j"});
  ASSERT_TRUE(store->CreateRun(run, jobs).ok());
  ASSERT_TRUE(store->Commit({{1, 1, "w-1", "a", 5, 1, "first"}}, {{1, 2, 500, 0, "", ""}}).ok());
  ASSERT_TRUE(store
                  ->Commit({{1, 1, "w-2", "b", 5, 2, "again"}, {1, 1, "w-2", "b", 6, 2, "other"}},
                           {{1, 4, 100, 900, "done", "final"}})
                  .ok());
  absl::StatusOr<std::vector<StoredResult>> results = store->LoadResults(1);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].result, "first") << "(job 1, lease 5) is written once";
  EXPECT_EQ((*results)[1].lease_id, 6u);
  const StoredRun r = (*store->LoadRuns())[0];
  EXPECT_EQ(r.state, 4);
  EXPECT_DOUBLE_EQ(r.started_unix, 500) << "MAX(500, 100)";
  EXPECT_DOUBLE_EQ(r.finished_unix, 900);
  EXPECT_EQ(r.result, "final");
}

TEST_F(StoreTest, SchedulingIsStored) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  StoredRun run = Run("r");
  std::vector<StoredJob> none;
  ASSERT_TRUE(store->CreateRun(run, none).ok());
  ASSERT_TRUE(store->SetScheduling(run.id, 3, 50).ok());
  const StoredRun r = (*store->LoadRuns())[0];
  EXPECT_EQ(r.priority, 3);
  EXPECT_EQ(r.throughput, 50);
}

TEST_F(StoreTest, EnginesAreKeptOncePerHashAndDeleted) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutEngine({"abc", "sf", 123, 10, "alice"}).ok());
  ASSERT_TRUE(store->PutEngine({"abc", "renamed", 123, 20, "bob"}).ok());
  ASSERT_TRUE(store->PutEngine({"def", "lc0", 456, 5, "bob"}).ok());
  absl::StatusOr<std::vector<StoredEngine>> engines = store->LoadEngines();
  ASSERT_TRUE(engines.ok());
  ASSERT_EQ(engines->size(), 2u);
  EXPECT_EQ((*engines)[0].sha256, "def") << "oldest upload first";
  EXPECT_EQ((*engines)[1].name, "sf") << "the first upload of a hash stays";
  EXPECT_EQ((*engines)[1].owner, "alice");
  EXPECT_EQ((*engines)[1].size_bytes, 123u);
  ASSERT_TRUE(store->DeleteEngine("abc").ok());
  engines = store->LoadEngines();
  ASSERT_EQ(engines->size(), 1u);
  EXPECT_EQ((*engines)[0].sha256, "def");
}

TEST_F(StoreTest, TokensHaveUniqueNamesAndHashesAndRecordTheirLastUse) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutToken({"ci", 2, "h1", 100, 0}).ok());
  ASSERT_TRUE(store->PutToken({"admin", 3, "h2", 50, 0}).ok());
  EXPECT_FALSE(store->PutToken({"ci", 1, "h3", 1, 0}).ok()) << "a name is unique";
  EXPECT_FALSE(store->PutToken({"other", 1, "h1", 1, 0}).ok()) << "a hash is unique";
  ASSERT_TRUE(store->TouchTokens({{"ci", 777.5}, {"gone", 1}}).ok());
  absl::StatusOr<std::vector<StoredToken>> tokens = store->LoadTokens();
  ASSERT_TRUE(tokens.ok());
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].name, "admin") << "by name";
  EXPECT_EQ((*tokens)[0].role, 3);
  EXPECT_DOUBLE_EQ((*tokens)[0].last_used_unix, 0);
  EXPECT_EQ((*tokens)[1].hash, "h1");
  EXPECT_DOUBLE_EQ((*tokens)[1].created_unix, 100);
  EXPECT_DOUBLE_EQ((*tokens)[1].last_used_unix, 777.5);
  ASSERT_TRUE(store->DeleteToken("ci").ok());
  EXPECT_EQ(store->LoadTokens()->size(), 1u);
}

TEST_F(StoreTest, ASecondStoreOnTheSameDirectoryIsRefusedUntilTheFirstCloses) {
  std::unique_ptr<Store> first = Open();
  ASSERT_NE(first, nullptr);
  absl::StatusOr<std::unique_ptr<Store>> second = Store::Open(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("in use"), std::string::npos) << second.status();
  first.reset();
  EXPECT_TRUE(Store::Open(dir_).ok());
}

TEST_F(StoreTest, ANewerSchemaIsRefusedAndTheUpgradableOneIsUpgraded) {
  Open().reset();  // creates the tables
  Sql("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  absl::StatusOr<std::unique_ptr<Store>> newer = Store::Open(dir_);
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(newer.status().message().find(std::to_string(kSchemaVersion + 1)), std::string::npos)
      << newer.status();

  Sql("PRAGMA user_version = " + std::to_string(kOldestUpgradableSchemaVersion));
  ASSERT_NE(Open(), nullptr);
  EXPECT_EQ(UserVersion(), kSchemaVersion);
}

// The tables of schema version 4 as that arbiter wrote them, with a run, its jobs, a result, an
// engine and a token: written here, not taken from Store, so that a change of today's schema
// cannot change what this test upgrades.
constexpr const char* kSchemaVersion4 = R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind INTEGER NOT NULL, state INTEGER NOT NULL,
  created_unix REAL NOT NULL, started_unix REAL NOT NULL DEFAULT 0,
  finished_unix REAL NOT NULL DEFAULT 0, message TEXT NOT NULL DEFAULT '',
  spec BLOB NOT NULL, result BLOB, owner TEXT NOT NULL DEFAULT '',
  priority INTEGER NOT NULL DEFAULT 0, throughput INTEGER NOT NULL DEFAULT 100);
CREATE TABLE jobs (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL, spec BLOB NOT NULL);
CREATE INDEX jobs_by_run ON jobs(run_id);
CREATE TABLE results (
  job_id INTEGER NOT NULL, run_id INTEGER NOT NULL, worker_id TEXT NOT NULL,
  worker_name TEXT NOT NULL, lease_id INTEGER NOT NULL, seconds REAL NOT NULL,
  result BLOB NOT NULL, PRIMARY KEY (job_id, lease_id));
CREATE INDEX results_by_run ON results(run_id);
CREATE TABLE engines (
  sha256 TEXT PRIMARY KEY, name TEXT NOT NULL, size_bytes INTEGER NOT NULL,
  uploaded_unix REAL NOT NULL, owner TEXT NOT NULL DEFAULT '');
CREATE TABLE tokens (
  name TEXT PRIMARY KEY, role INTEGER NOT NULL, hash TEXT NOT NULL UNIQUE,
  created_unix REAL NOT NULL, last_used_unix REAL NOT NULL DEFAULT 0);
INSERT INTO runs (kind, state, created_unix, started_unix, message, spec, owner, priority,
                  throughput)
  VALUES (2, 2, 1000.5, 1001, 'running', X'0a0373706563', 'alice', -1, 250);
INSERT INTO jobs (id, run_id, spec) VALUES (1, 1, X'6a31'), (2, 1, X'6a32');
INSERT INTO results VALUES (2, 1, 'w-1', 'pod-a', 77, 1.25, X'636f756e7473');
INSERT INTO engines VALUES ('ab12', 'sf', 4096, 999.5, 'alice');
INSERT INTO tokens VALUES ('alice', 2, 'hash-a', 900, 950);
PRAGMA user_version = 4;
)sql";

// A store of the previous schema is upgraded in place and keeps every row: the coordinator that
// opens it resumes the runs, results, engines and tokens the older one left.
TEST_F(StoreTest, ThePreviousSchemaIsUpgradedWithItsDataKept) {
  static_assert(kOldestUpgradableSchemaVersion == 4 && kSchemaVersion == 6,
                "a new schema version needs its predecessor's DDL in this test");
  Sql(kSchemaVersion4);
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    absl::StatusOr<std::vector<StoredRun>> runs = store->LoadRuns();
    ASSERT_TRUE(runs.ok()) << runs.status();
    ASSERT_EQ(runs->size(), 1u);
    const StoredRun& r = (*runs)[0];
    EXPECT_EQ(r.id, 1u);
    EXPECT_EQ(r.owner, "alice");
    EXPECT_EQ(r.kind, 2);
    EXPECT_EQ(r.state, 2);
    EXPECT_DOUBLE_EQ(r.created_unix, 1000.5);
    EXPECT_DOUBLE_EQ(r.started_unix, 1001.0);
    EXPECT_EQ(r.message, "running");
    EXPECT_EQ(r.spec, "\x0a\x03spec");
    EXPECT_EQ(r.priority, -1);
    EXPECT_EQ(r.throughput, 250);
    absl::StatusOr<std::vector<StoredJob>> jobs = store->LoadJobs(1);
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    ASSERT_EQ(jobs->size(), 2u);
    EXPECT_EQ((*jobs)[1].spec, "j2");
    absl::StatusOr<std::vector<StoredResult>> results = store->LoadResults(1);
    ASSERT_TRUE(results.ok()) << results.status();
    ASSERT_EQ(results->size(), 1u);
    EXPECT_EQ((*results)[0].worker_name, "pod-a");
    EXPECT_EQ((*results)[0].lease_id, 77u);
    EXPECT_EQ((*results)[0].result, "counts");
    absl::StatusOr<std::vector<StoredEngine>> engines = store->LoadEngines();
    ASSERT_TRUE(engines.ok()) << engines.status();
    ASSERT_EQ(engines->size(), 1u);
    EXPECT_EQ((*engines)[0].name, "sf");
    EXPECT_EQ((*engines)[0].size_bytes, 4096u);
    absl::StatusOr<std::vector<StoredToken>> tokens = store->LoadTokens();
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    ASSERT_EQ(tokens->size(), 1u);
    EXPECT_EQ((*tokens)[0].hash, "hash-a");
    EXPECT_DOUBLE_EQ((*tokens)[0].last_used_unix, 950);
    // New ids continue after the old ones.
    StoredRun next = Run("next");
    std::vector<StoredJob> next_jobs = Jobs({"j3"});
    ASSERT_TRUE(store->CreateRun(next, next_jobs).ok());
    EXPECT_EQ(next.id, 2u);
    EXPECT_EQ(next_jobs[0].id, 3u);
  }
  EXPECT_EQ(UserVersion(), kSchemaVersion) << "the file now says what it holds";
  std::unique_ptr<Store> again = Open();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->LoadRuns()->size(), 2u);
}

// Protobuf wire encoding, by hand, so that the old requests below do not depend on today's
// messages.
std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += char(0x80 | (v & 0x7f));
  return out + char(v);
}
std::string VarintField(int number, uint64_t v) {
  return Varint(uint64_t(number) << 3) + Varint(v);
}
std::string BytesField(int number, const std::string& bytes) {
  return Varint(uint64_t(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}

// The fields a match and a tournament shared as schema 5 stored them, in the request itself:
// engines 1, tc 2, openings 5, pairs_per_job 6, concurrency 7, rules 8, scheduling 9,
// scale_nps 30, openings_name 31.
std::string OldSharedFields(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) {
    v1::EngineSpec e;
    e.set_name(name);
    e.set_builtin(true);
    out += BytesField(1, e.SerializeAsString());
  }
  v1::GameRules rules;
  rules.set_event("old event");
  v1::Scheduling scheduling;
  scheduling.set_priority(-3);
  return out + BytesField(2, "10+0.1") + BytesField(5, "8/8/8/8/8/8/8/K1k5 w - -\n") +
         VarintField(6, 4) + VarintField(7, 3) + BytesField(8, rules.SerializeAsString()) +
         BytesField(9, scheduling.SerializeAsString()) + VarintField(30, 250000) +
         BytesField(31, "old.epd");
}

void ExpectSettings(const v1::GamesSettings& s, const std::vector<std::string>& names) {
  ASSERT_EQ(s.engines_size(), int(names.size()));
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(s.engines(int(i)).name(), names[i]);
    EXPECT_TRUE(s.engines(int(i)).builtin());
  }
  EXPECT_EQ(s.tc(), "10+0.1");
  EXPECT_EQ(s.openings(), "8/8/8/8/8/8/8/K1k5 w - -\n");
  EXPECT_EQ(s.pairs_per_job(), 4u);
  EXPECT_EQ(s.concurrency(), 3u);
  EXPECT_EQ(s.rules().event(), "old event");
  EXPECT_EQ(s.scheduling().priority(), -3);
  ASSERT_TRUE(s.has_scale_nps());
  EXPECT_EQ(s.scale_nps(), 250000);
  EXPECT_EQ(s.openings_name(), "old.epd");
}

// A schema 5 store with a running match, a finished tournament (with its final status) and a
// perft run: the requests' shared fields move into their GamesSettings, the rest is kept.
TEST_F(StoreTest, MatchAndTournamentRequestsOfSchema5AreConverted) {
  static_assert(kSchemaVersion == 6, "a new schema version needs its predecessor's rows here");
  Open().reset();  // today's tables are schema 5's (the upgrade changes only the records)
  const std::string old_match = OldSharedFields({"new", "base"}) + VarintField(3, 20);
  const std::string old_tournament =
      OldSharedFields({"a", "b", "c"}) + VarintField(3, 10) + VarintField(4, 1);
  const std::string match_spec = BytesField(1, old_match);            // StoredMatchRun
  const std::string tournament_spec = BytesField(1, old_tournament);  // StoredTournamentRun
  // v1::Run: id 1, kind 2, tournament 22 { request 1 }.
  const std::string tournament_result =
      VarintField(1, 2) + VarintField(2, 3) + BytesField(22, BytesField(1, old_tournament));
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((fs::path(dir_) / "arbiter.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "INSERT INTO runs (id, kind, state, created_unix, spec, result) "
                                 "VALUES (?, ?, ?, 1, ?, ?)",
                                 -1, &st, nullptr),
              SQLITE_OK);
    const auto insert = [&](int id, int kind, int state, const std::string& spec,
                            const std::string* result) {
      sqlite3_bind_int(st, 1, id);
      sqlite3_bind_int(st, 2, kind);
      sqlite3_bind_int(st, 3, state);
      sqlite3_bind_blob(st, 4, spec.data(), int(spec.size()), SQLITE_TRANSIENT);
      if (result)
        sqlite3_bind_blob(st, 5, result->data(), int(result->size()), SQLITE_TRANSIENT);
      else
        sqlite3_bind_null(st, 5);
      EXPECT_EQ(sqlite3_step(st), SQLITE_DONE);
      sqlite3_reset(st);
      sqlite3_clear_bindings(st);
    };
    insert(1, v1::RUN_KIND_MATCH, v1::RUN_STATE_RUNNING, match_spec, nullptr);
    insert(2, v1::RUN_KIND_TOURNAMENT, v1::RUN_STATE_SUCCEEDED, tournament_spec,
           &tournament_result);
    insert(3, v1::RUN_KIND_PERFT, v1::RUN_STATE_QUEUED, "perft spec", nullptr);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  Sql("PRAGMA user_version = 5");
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(UserVersion(), kSchemaVersion);
  absl::StatusOr<std::vector<StoredRun>> runs = store->LoadRuns();
  ASSERT_TRUE(runs.ok()) << runs.status();
  ASSERT_EQ(runs->size(), 3u);

  store::v1::StoredMatchRun match;
  ASSERT_TRUE(match.ParseFromString((*runs)[0].spec));
  ExpectSettings(match.request().settings(), {"new", "base"});
  EXPECT_EQ(match.request().games(), 20u);
  EXPECT_TRUE(match.request().GetReflection()->GetUnknownFields(match.request()).empty());
  EXPECT_TRUE((*runs)[0].result.empty()) << "a running run keeps its empty result";

  store::v1::StoredTournamentRun tournament;
  ASSERT_TRUE(tournament.ParseFromString((*runs)[1].spec));
  ExpectSettings(tournament.request().settings(), {"a", "b", "c"});
  EXPECT_EQ(tournament.request().games_per_pairing(), 10u);
  EXPECT_TRUE(tournament.request().gauntlet());
  v1::Run final_status;
  ASSERT_TRUE(final_status.ParseFromString((*runs)[1].result));
  EXPECT_EQ(final_status.id(), 2u);
  ExpectSettings(final_status.tournament().request().settings(), {"a", "b", "c"});
  EXPECT_EQ(final_status.tournament().request().games_per_pairing(), 10u);

  EXPECT_EQ((*runs)[2].spec, "perft spec") << "other kinds are left as they are";
}

// A store written by a newer arbiter, or by one too old to upgrade, is refused untouched, with
// both versions and what to do in the message.
TEST_F(StoreTest, ANewerOrTooOldSchemaIsRefusedWithBothVersionsNamed) {
  for (const int version : {kSchemaVersion + 1, kOldestUpgradableSchemaVersion - 1}) {
    SCOPED_TRACE(version);
    fs::remove(fs::path(dir_) / "arbiter.db");
    Sql(kSchemaVersion4);
    Sql("PRAGMA user_version = " + std::to_string(version));
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string want = "has schema version " + std::to_string(version) +
                             "; this arbiter reads version " + std::to_string(kSchemaVersion) +
                             " (start a new data directory, or use the arbiter that wrote it)";
    EXPECT_NE(store.status().message().find(want), std::string::npos) << store.status();
    EXPECT_EQ(UserVersion(), version) << "a refused file is left as it was";
  }
}

TEST_F(StoreTest, ADamagedDatabaseIsRefused) {
  {
    std::ofstream out(fs::path(dir_) / "arbiter.db", std::ios::binary);
    out << std::string(8192, 'x');
  }
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
}

TEST_F(StoreTest, AMissingDirectoryIsCreatedAndAFileInTheWayRefused) {
  EXPECT_TRUE(Store::Open(dir_ + "/missing/deeper").ok());
  std::ofstream(fs::path(dir_) / "file") << "not a directory";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_ + "/file/deeper");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument) << store.status();
}

}  // namespace
}  // namespace arbiter::coordinator

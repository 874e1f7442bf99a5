// The coordinator's test fixture without gRPC: a Coordinator on a fresh data directory, workers
// registered and jobs leased, counted and completed through its calls, and the store read and
// written behind its back. Shared by the tests of tests/coordinator/.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/coordinator.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "gtest/gtest.h"
#include "proto/arbiter/store/v1/store.pb.h"

namespace arbiter::coordinator {

// The tests of the planner's choices for perft(9)-(11) make splits that take minutes under
// ThreadSanitizer (~12 minutes of CI in all). Their threads are those of the perft(6)-(8) plans
// that TSan checks in the other tests; the Release and ASan runs keep the choices checked.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif

class CoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-coord-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Open();
  }
  void TearDown() override {
    c_.reset();
    std::filesystem::remove_all(dir_);
  }
  // The options' data_dir is the test's own.
  void OpenWith(CoordinatorOptions options) {
    c_.reset();
    options.data_dir = dir_.string();
    auto c = Coordinator::Open(options, nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    c_ = std::move(*c);
  }
  // `clock`: a simulated clock (empty: real time).
  void Open(double lease_seconds = 30, std::function<SteadyClock::time_point()> clock = {}) {
    OpenWith({.lease_seconds = lease_seconds, .clock = std::move(clock)});
  }
  // A coordinator on host "box" with two workers there whose threads fill its cores (they share
  // them: PlanPerftRun's lanes of keys); their ids.
  // `lanes`: whether the second worker declares that it counts lanes of keys (the first does).
  std::vector<std::string> OpenWithTwoWorkersOnItsHost(bool lanes = true) {
    c_.reset();
    std::filesystem::remove_all(dir_);
    auto c = Coordinator::Open({.data_dir = dir_.string(), .host = "box"}, nullptr);
    EXPECT_TRUE(c.ok()) << c.status();
    if (!c.ok()) return {};
    c_ = std::move(*c);
    const uint32_t half = (std::max(1u, std::thread::hardware_concurrency()) + 1) / 2;
    std::vector<std::string> workers;
    for (const char* name : {"a", "b"}) {
      v1::RegisterRequest req;
      req.mutable_worker()->set_name(name);
      req.mutable_worker()->set_hostname("box");
      req.mutable_worker()->set_threads(half);
      req.set_perft_lanes(workers.empty() || lanes);
      workers.push_back(c_->Register(req, Caller{"", v1::ROLE_WORKER})->worker_id());
    }
    return workers;
  }
  // Start position perft(6) split at ply 2 with a 4 MB hash: jobs of 4 plies, lanes of keys
  // for workers that share the coordinator's cores.
  static v1::SubmitPerftRequest KeyLanesRequest() {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(6);
    req.mutable_perft()->set_hash_mb(4);
    req.set_split_depth(2);
    return req;
  }
  // A worker of token `token` that may hold `threads` leases at once.
  std::string Register(const std::string& name, const std::string& hash_group = "",
                       const std::string& token = "", uint32_t threads = 64) {
    v1::RegisterRequest req;
    req.mutable_worker()->set_name(name);
    req.mutable_worker()->set_hash_group(hash_group);
    req.mutable_worker()->set_threads(threads);
    req.set_perft_lanes(true);
    return c_->Register(req, Caller{token, v1::ROLE_WORKER})->worker_id();
  }
  // Start position perft(6) split at ply 3, streamed with at most 100 split positions a shard.
  static v1::SubmitPerftRequest SmallStreamedRequest() {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(6);
    req.set_split_depth(3);
    req.set_split_memory_positions(100);
    return req;
  }
  v1::Run Submit(int depth, uint32_t jobs, bool verify = false) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(depth);
    req.set_target_jobs(jobs);
    req.set_verify(verify);
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : v1::Run();
  }
  absl::StatusOr<v1::AcquireJobResponse> AcquireAs(const std::string& worker,
                                                   const std::string& token) {
    v1::AcquireJobRequest req;
    req.set_worker_id(worker);
    req.set_wait_seconds(0.2);
    std::promise<absl::StatusOr<v1::AcquireJobResponse>> p;
    c_->AcquireJob(
        req, [&](absl::StatusOr<v1::AcquireJobResponse> r) { p.set_value(r); },
        Caller{token, v1::ROLE_WORKER});
    return p.get_future().get();
  }
  std::optional<v1::Job> Acquire(const std::string& worker, const std::string& token = "") {
    absl::StatusOr<v1::AcquireJobResponse> r = AcquireAs(worker, token);
    if (!r.ok() || !r->has_job()) return std::nullopt;
    return r->job();
  }
  static std::vector<uint64_t> Count(const v1::Job& job) {
    std::vector<Position> positions;
    const std::string& packed = job.perft().packed_positions();
    const Position root = *Position::FromFen(job.perft().root_fen());
    for (size_t i = 0; i < packed.size(); i += kPackedPositionSize)
      positions.push_back(
          *UnpackPosition(std::string_view(packed).substr(i, kPackedPositionSize), root));
    return *PerftBatch(positions, {.depth = int(job.perft().depth()),
                                   .lane_begin = job.perft().lane_begin(),
                                   .lane_end = job.perft().lane_end()});
  }
  // The run, read again until `done(run)` or until it ends (succeeded, failed, cancelled): the
  // streamed split's producer fills the queue on its own thread, at whatever speed the machine
  // (or a sanitizer) gives it. The 10-minute guard only stops a hang; it times nothing.
  v1::Run WaitForRun(uint64_t id, const std::function<bool(const v1::Run&)>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
    for (;;) {
      v1::Run run = *c_->GetRun(id);
      if (done(run) || run.state() > v1::RUN_STATE_RUNNING ||
          std::chrono::steady_clock::now() > give_up)
        return run;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  absl::StatusOr<v1::CompleteJobResponse> Complete(const std::string& worker, const v1::Job& job,
                                                   std::vector<uint64_t> counts, uint64_t lease = 0,
                                                   const std::string& token = "") {
    v1::CompleteJobRequest req;
    req.set_worker_id(worker);
    req.set_job_id(job.job_id());
    req.set_lease_id(lease ? lease : job.lease_id());
    for (uint64_t c : counts) req.mutable_perft()->add_counts(c);
    std::promise<absl::StatusOr<v1::CompleteJobResponse>> p;
    c_->CompleteJob(
        req, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r); },
        Caller{token, v1::ROLE_WORKER});
    return p.get_future().get();
  }
  absl::StatusOr<v1::CompleteJobResponse> Complete(const std::string& worker, const v1::Job& job,
                                                   const std::string& token = "") {
    return Complete(worker, job, Count(job), 0, token);
  }

  // 8 queued jobs of one run in two lanes, workers `a` and `b` asking in turn: the first to ask
  // gets the first 4 in order, the second the next 4; a worker whose lane is empty takes the last
  // job of the other lane (the far end of the other worker's range). Every job is handed out once.
  // (`lane_a`, `lane_b`: the jobs each gets, counted from a's first, when the lanes are not the
  // first and the second half.)
  void ExpectTwoLanesOfFour(const std::string& a, const std::string& b,
                            std::vector<uint64_t> lane_a = {0, 1, 2, 3, 7},
                            std::vector<uint64_t> lane_b = {4, 5, 6}) {
    std::optional<v1::Job> first = Acquire(a);
    ASSERT_TRUE(first);
    const uint64_t base = first->job_id();
    std::vector<uint64_t> got_a = {0}, got_b;
    for (int i = 0; i < 3; ++i) {
      std::optional<v1::Job> jb = Acquire(b);
      ASSERT_TRUE(jb);
      got_b.push_back(jb->job_id() - base);
      std::optional<v1::Job> ja = Acquire(a);
      ASSERT_TRUE(ja);
      got_a.push_back(ja->job_id() - base);
    }
    std::optional<v1::Job> stolen = Acquire(a);  // a's lane is empty: the end of b's
    ASSERT_TRUE(stolen);
    got_a.push_back(stolen->job_id() - base);
    EXPECT_EQ(got_a, lane_a);
    EXPECT_EQ(got_b, lane_b);
    EXPECT_FALSE(Acquire(b)) << "every job handed out once";
  }

  // Start-position perft(depth) submitted and cancelled at once: the run as planned.
  std::optional<v1::Run> Planned(int depth, uint32_t hash_mb = 0) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(depth);
    req.mutable_perft()->set_hash_mb(hash_mb);
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    EXPECT_TRUE(run.ok()) << run.status();
    if (!run.ok()) return std::nullopt;
    EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());
    return *run;
  }

  // A streamed run split at `split_depth`, walked or generated from `positions` at `chunk_ply`.
  static void ExpectStreamedFrom(const v1::Run& run, uint32_t split_depth, uint32_t chunk_ply,
                                 uint64_t positions) {
    EXPECT_TRUE(run.perft().streamed());
    EXPECT_EQ(run.perft().split_depth(), split_depth);
    EXPECT_EQ(run.perft().chunk_ply(), chunk_ply);
    EXPECT_EQ(run.perft().chunk_positions(), positions);
  }

  // The run's spec as the store holds it.
  store::v1::StoredPerftRun RunSpec(uint64_t run_id) {
    store::v1::StoredPerftRun spec;
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open((dir_ / "arbiter.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* read = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT spec FROM runs WHERE id = ?", -1, &read, nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(read, 1, int64_t(run_id));
    if (sqlite3_step(read) == SQLITE_ROW)
      EXPECT_TRUE(spec.ParseFromArray(sqlite3_column_blob(read, 0), sqlite3_column_bytes(read, 0)));
    else
      ADD_FAILURE() << "no run " << run_id;
    sqlite3_finalize(read);
    sqlite3_close(db);
    return spec;
  }

  // Replaces the run's stored spec (the coordinator closed).
  void WriteRunSpec(uint64_t run_id, const store::v1::StoredPerftRun& spec) {
    const std::string blob = spec.SerializeAsString();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "arbiter.db").c_str(), &db), SQLITE_OK);
    sqlite3_stmt* write = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "UPDATE runs SET spec = ? WHERE id = ?", -1, &write, nullptr),
              SQLITE_OK);
    sqlite3_bind_blob(write, 1, blob.data(), int(blob.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(write, 2, int64_t(run_id));
    EXPECT_EQ(sqlite3_step(write), SQLITE_DONE);
    sqlite3_finalize(write);
    sqlite3_close(db);
  }

  // Runs `req` (perft(6) split at ply 3, streamed, 32 jobs) to the end, then again with a restart
  // in the middle of its expansion; checks both against the exact counts and each other.
  void ExpectStreamedRunResumesExactly(v1::SubmitPerftRequest req, bool in_memory,
                                       uint64_t min_chunks) {
    std::string w = Register("w");
    req.set_target_jobs(32);
    // Completes jobs until the run is finished (or `stop_after` jobs); returns the run.
    auto work = [&](uint64_t id, int stop_after) {
      for (int done = 0, idle = 0; done < stop_after && idle < 100;) {
        absl::StatusOr<v1::Run> r = c_->GetRun(id);
        if (!r.ok() || r->state() == v1::RUN_STATE_SUCCEEDED) break;
        std::optional<v1::Job> job = Acquire(w);
        if (!job) {
          ++idle;
          continue;
        }
        EXPECT_TRUE(Complete(w, *job).ok());
        ++done;
      }
      return *c_->GetRun(id);
    };
    absl::StatusOr<v1::Run> plain = c_->SubmitPerft(req);
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(RunSpec(plain->id()).paths_in_memory(), in_memory);
    EXPECT_TRUE(plain->perft().streamed());
    EXPECT_EQ(plain->perft().chunk_ply(), 2u);
    EXPECT_EQ(plain->perft().chunk_positions(), 400u);
    v1::Run done = work(plain->id(), 1'000'000);
    ASSERT_EQ(done.state(), v1::RUN_STATE_SUCCEEDED) << done.message();
    EXPECT_EQ(done.perft().result().nodes(), 119060324u);
    EXPECT_EQ(done.perft().split_positions(), 8902u);
    // Every transposition merged, as by the in-memory split: the 5,362 unique positions at ply 3.
    EXPECT_EQ(done.perft().unique_positions(), 5362u);
    EXPECT_GT(done.perft().chunks(), min_chunks);
    EXPECT_EQ(done.jobs().total(), done.jobs().done());

    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    ASSERT_TRUE(run.ok()) << run.status();
    // The producer fills the queue ahead of the worker.
    v1::Run before =
        WaitForRun(run->id(), [](const v1::Run& r) { return r.jobs().queued() >= 16; });
    EXPECT_GE(before.jobs().queued(), 16u);
    EXPECT_LE(before.jobs().total(), 18u);  // and stops there
    before = work(run->id(), 10);
    ASSERT_EQ(before.jobs().done(), 10u);
    ASSERT_EQ(before.state(), v1::RUN_STATE_RUNNING);
    ASSERT_LT(before.perft().chunk_positions_expanded(), before.perft().chunk_positions());
    Open();
    absl::StatusOr<v1::Run> resumed = c_->GetRun(run->id());
    ASSERT_TRUE(resumed.ok());
    EXPECT_EQ(resumed->jobs().done(), 10u);
    EXPECT_GE(resumed->perft().chunk_positions_expanded(),
              before.perft().chunk_positions_expanded());
    w = Register("w2");
    v1::Run after = work(run->id(), 1'000'000);
    ASSERT_EQ(after.state(), v1::RUN_STATE_SUCCEEDED) << after.message();
    EXPECT_EQ(after.perft().result().nodes(), 119060324u);
    EXPECT_EQ(after.perft().result().nodes_decimal(), "119060324");
    ASSERT_EQ(after.perft().result().divide_size(), done.perft().result().divide_size());
    for (int i = 0; i < after.perft().result().divide_size(); ++i)
      EXPECT_EQ(after.perft().result().divide(i).nodes(), done.perft().result().divide(i).nodes());
    EXPECT_EQ(after.jobs().total(), done.jobs().total());
    EXPECT_EQ(after.perft().chunks(), done.perft().chunks());
    EXPECT_EQ(after.perft().unique_positions(), done.perft().unique_positions());
    EXPECT_EQ(after.perft().split_positions(), 8902u);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Coordinator> c_;
};

// Simulated time for the coordinator: moves only when the test says so.
class SimulatedClock {
 public:
  std::function<SteadyClock::time_point()> Fn() {
    return [this] { return SteadyClock::time_point(std::chrono::nanoseconds(ns_.load())); };
  }
  void Advance(double seconds) { ns_ += int64_t(seconds * 1e9); }

 private:
  std::atomic<int64_t> ns_{int64_t(1e12)};
};

// A match of the built-in engines "a" and "b" at depth 3: `games` games, `pairs_per_job` pairs a
// job.
inline v1::SubmitMatchRequest BuiltinMatch(uint64_t games, uint32_t pairs_per_job) {
  v1::SubmitMatchRequest req;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = req.mutable_settings()->add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  req.mutable_settings()->set_tc("depth=3");
  req.mutable_settings()->set_pairs_per_job(pairs_per_job);
  req.set_games(games);
  return req;
}

// Game pairs for a match job: in each pair the first engine loses both games (fool's mate with
// White, a quick mate with Black).
inline v1::MatchJobResult LosingPairs(const v1::Job& job) {
  v1::MatchJobResult out;
  for (uint64_t p = job.match().first_pair(); p < job.match().first_pair() + job.match().pairs();
       ++p) {
    for (uint32_t g = 0; g < 2; ++g) {
      v1::ReportedGame* game = out.add_games();
      game->set_pair(p);
      game->set_game(g);
      game->set_start_fen(std::string(Position::kStartFen));
      for (const char* m : g == 0
                               ? std::vector<const char*>{"f2f3", "e7e5", "g2g4", "d8h4"}
                               : std::vector<const char*>{"e2e4", "f7f6", "d2d4", "g7g5", "d1h5"})
        game->add_moves(m);
      game->set_result(g == 0 ? v1::GAME_RESULT_BLACK_WINS : v1::GAME_RESULT_WHITE_WINS);
      game->set_end(v1::GAME_END_NORMAL);
      game->set_pgn("[Round \"" + std::to_string(job.match().round_offset() + 2 * p + g + 1) +
                    "\"]\n");
    }
  }
  return out;
}

}  // namespace arbiter::coordinator

// The run/job model without gRPC: leases, fencing, idempotent completion, cancellation,
// verification and restart from the SQLite store.
#include "coordinator/coordinator.h"

#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "base/cpu.h"
#include "base/strings.h"
#include "base/uint128.h"
#include "coordinator/perft_split.h"
#include "coordinator/ratings.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "proto/requirements.h"
#include "stats/ratings.h"

namespace arbiter::coordinator {
namespace {

// The tests of the planner's choices for perft(9)-(11) make splits that take minutes under
// ThreadSanitizer (~12 minutes of CI in all). Their threads are those of the perft(6)-(8) plans
// that TSan checks in the other tests; the Release and ASan runs keep the choices checked.
#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
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
  // `clock`: a simulated clock (empty: real time).
  void Open(double lease_seconds = 30, std::function<SteadyClock::time_point()> clock = {}) {
    c_.reset();
    auto c = Coordinator::Open(
        {.data_dir = dir_.string(), .lease_seconds = lease_seconds, .clock = std::move(clock)},
        nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    c_ = std::move(*c);
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
      req.set_name(name);
      req.set_hostname("box");
      req.set_threads(half);
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
    req.set_name(name);
    req.set_hash_group(hash_group);
    req.set_threads(threads);
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

// The split merges transpositions only between workers with hash tables of their own: two
// workers of one hash group (one process) get a split for the jobs alone (perft(6): ply 2 for
// 64 positions a job instead of ply 3); a --verify run, a third worker with its own hash, or
// no worker at all (which workers will come is unknown) brings the merge back.
TEST_F(CoordinatorTest, WorkersSharingAHashGetAShallowSplit) {
  EXPECT_EQ(Submit(6, 4).perft().split_depth(), 3u) << "no worker yet: merge";
  const std::string a = Register("a", "local-1");
  Register("b", "local-1");
  EXPECT_EQ(Submit(6, 4).perft().split_depth(), 2u);
  std::optional<v1::Job> job = Acquire(a);
  ASSERT_TRUE(job);
  EXPECT_FALSE(job->perft().independent());
  // A verified run merges (its workers count with hashes of their own) and says so to them.
  const v1::Run verified = Submit(6, 4, /*verify=*/true);
  EXPECT_EQ(verified.perft().split_depth(), 3u);
  for (job = Acquire(a); job && job->run_id() != verified.id();) job = Acquire(a);
  ASSERT_TRUE(job);
  EXPECT_TRUE(job->perft().independent());
  Register("c");
  EXPECT_EQ(Submit(6, 4).perft().split_depth(), 3u);
}

// Workers with hashes of their own work on contiguous ranges of the split's order (lanes), so
// that each one's hash sees one region of the tree.
TEST_F(CoordinatorTest, WorkersWithOwnHashesWorkOnContiguousLanes) {
  const std::string a = Register("a"), b = Register("b");
  const v1::Run run = Submit(6, 8);
  ASSERT_EQ(run.jobs().total(), 8u);
  ExpectTwoLanesOfFour(a, b);
}

// Lanes of keys: a worker whose lane is done takes the far end of the other lane while that lane
// has kStealMinQueued jobs or more queued, and leaves the rest to their worker, whose table holds
// what they share with the lane's earlier jobs (the thief's has the other lane's). a does its
// lane while b holds its first job; a then takes b's last jobs, one by one from the end, until 7
// are left, and b does those. Once b drains, its lane is a's whatever is left.
TEST_F(CoordinatorTest, InLanesOfKeysAWorkerTakesFromTheOtherLaneOnlyWhileItHasEnoughToGo) {
  const std::vector<std::string> workers = OpenWithTwoWorkersOnItsHost();
  const std::string &a = workers[0], &b = workers[1];
  v1::SubmitPerftRequest req = KeyLanesRequest();
  req.set_target_jobs(32);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(RunSpec(run->id()).lanes(), 2u);
  const uint64_t per_lane = run->jobs().total() / 2;
  ASSERT_GE(per_lane, kStealMinQueued + 2);
  std::optional<v1::Job> job = Acquire(a);
  ASSERT_TRUE(job);
  std::optional<v1::Job> held = Acquire(b);
  ASSERT_TRUE(held);
  ASSERT_NE(held->perft().lane_begin(), job->perft().lane_begin());
  uint64_t own = 0;
  std::vector<uint64_t> stolen;
  do {
    if (job->perft().lane_begin() == 0)
      ++own;
    else
      stolen.push_back(job->job_id());
    ASSERT_TRUE(Complete(a, *job).ok());
  } while ((job = Acquire(a)));
  EXPECT_EQ(own, per_lane);
  // b's lane had per_lane - 1 queued: a took them while 8 or more were, from the far end.
  ASSERT_EQ(stolen.size(), per_lane - kStealMinQueued);
  EXPECT_TRUE(std::is_sorted(stolen.rbegin(), stolen.rend()));
  uint64_t b_did = 0;
  for (job = held; job && b_did < 3; job = Acquire(b), ++b_did) ASSERT_TRUE(Complete(b, *job).ok());
  EXPECT_FALSE(Acquire(a)) << "b is at work and has 5 jobs to go: a waits";
  v1::DrainWorkersRequest drain;
  drain.set_worker_id(b);
  ASSERT_TRUE(c_->DrainWorkers(drain).ok());
  ASSERT_TRUE(Complete(b, *job).ok());  // b's last, leased before it drained
  ++b_did;
  for (job = Acquire(a); job; job = Acquire(a)) {
    EXPECT_NE(job->perft().lane_begin(), 0u);
    ASSERT_TRUE(Complete(a, *job).ok());
    ++b_did;  // b's lane, done by a
  }
  EXPECT_EQ(b_did, kStealMinQueued);
  const absl::StatusOr<v1::Run> done = c_->GetRun(run->id());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::RUN_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->perft().result().nodes(), 119060324u);
}

// Workers that fill the coordinator's own host (a single machine running separate worker
// processes) share its cores, so the coordinator spends as little CPU as it can on the split: the
// run is planned as for workers pooling one table (perft(8): ply 3, unmerged below it, in memory),
// with a lane per worker, and each lane's jobs go from large to small. The abuse half: the same
// workers reporting another host, or too few threads to fill this one, get the merged split of
// workers apart (ply 5, streamed), and so do workers reporting no host name to a coordinator
// that has none either (an empty name matches nothing).
TEST_F(CoordinatorTest, WorkersFillingTheCoordinatorsHostGetTheCheapestPlan) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::string coordinator_host = "box";
  auto reopen = [&](const std::vector<std::pair<std::string, uint32_t>>& workers) {
    c_.reset();
    std::filesystem::remove_all(dir_);
    auto c = Coordinator::Open({.data_dir = dir_.string(), .host = coordinator_host}, nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    c_ = std::move(*c);
    int i = 0;
    for (const auto& [host, threads] : workers) {
      v1::RegisterRequest req;
      req.set_name(Cat("w", i++));
      req.set_hostname(host);
      req.set_threads(threads);
      ASSERT_TRUE(c_->Register(req, Caller{"", v1::ROLE_WORKER}).ok());
    }
  };
  const uint32_t half = (cores + 1) / 2;
  reopen({{"box", half}, {"box", half}});
  std::optional<v1::Run> shared = Planned(8);
  ASSERT_TRUE(shared);
  EXPECT_FALSE(shared->perft().streamed());
  EXPECT_EQ(shared->perft().split_depth(), 3u);
  EXPECT_EQ(RunSpec(shared->id()).lanes(), 2u);
  // Another host's worker beside it; two of this host's that leave cores free (when it has
  // more than two).
  std::vector<std::vector<std::pair<std::string, uint32_t>>> apart = {
      {{"box", half}, {"elsewhere", half}}};
  if (cores > 2) apart.push_back({{"box", 1}, {"box", 1}});
  for (const auto& workers : apart) {
    SCOPED_TRACE(Cat(workers[1].first, " ", workers[1].second));
    reopen(workers);
    std::optional<v1::Run> merged = Planned(8);
    ASSERT_TRUE(merged);
    EXPECT_TRUE(merged->perft().streamed());
    EXPECT_EQ(merged->perft().split_depth(), 5u);
  }
  coordinator_host = "";
  reopen({{"", half}, {"", half}});
  std::optional<v1::Run> unnamed = Planned(8);
  ASSERT_TRUE(unnamed);
  EXPECT_TRUE(unnamed->perft().streamed());
  EXPECT_EQ(unnamed->perft().split_depth(), 5u);
}

// Two workers that share the coordinator's cores, each with a table of its own, count lanes of
// keys (engine/perft_lane.h): every position is in one job of each lane, the lanes' ranges cover
// the keys once, each worker takes its own lane's jobs first, and the counts of both lanes add up
// to the exact perft. (A worker that ignored its lane would count every position twice.) Without
// a hash, or with too few plies below the lane's, the usual lanes of jobs.
TEST_F(CoordinatorTest, WorkersSharingTheHostsCoresCountLanesOfKeys) {
  const std::vector<std::string> workers = OpenWithTwoWorkersOnItsHost();
  v1::SubmitPerftRequest req = KeyLanesRequest();
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(RunSpec(run->id()).lanes(), 2u);
  const size_t total = run->jobs().total();
  ASSERT_EQ(total % 2, 0u);
  // position (packed) -> the lanes' ranges it is counted in
  std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>> ranges;
  std::map<std::string, std::vector<uint64_t>> lanes_of_worker;
  for (size_t got = 0, turn = 0; got < total; ++turn) {
    const std::string& w = workers[turn % 2];
    std::optional<v1::Job> job = Acquire(w);
    if (!job) continue;
    ++got;
    const v1::PerftJob& work = job->perft();
    ASSERT_GT(work.lane_end(), work.lane_begin());
    lanes_of_worker[w].push_back(work.lane_begin());
    for (size_t i = 0; i < work.packed_positions().size(); i += kPackedPositionSize)
      ranges[work.packed_positions().substr(i, kPackedPositionSize)].push_back(
          {work.lane_begin(), work.lane_end()});
    ASSERT_TRUE(Complete(w, *job).ok());
  }
  EXPECT_EQ(ranges.size(), 400u);  // the positions at ply 2
  for (auto& [packed, r] : ranges) {
    std::sort(r.begin(), r.end());
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].first, 0u);
    EXPECT_EQ(r[0].second, r[1].first);
    EXPECT_EQ(r[1].second, kShardKeyEnd);
  }
  // Each worker's first job is of its own lane: a's the first, b's the second.
  EXPECT_EQ(lanes_of_worker[workers[0]].front(), 0u);
  EXPECT_EQ(lanes_of_worker[workers[1]].front(), kShardKeyEnd / 2);
  const v1::Run done = WaitForRun(run->id(), [](const v1::Run&) { return false; });
  ASSERT_EQ(done.state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(done.perft().result().nodes(), 119060324u);
  uint64_t divide = 0;
  for (const auto& d : done.perft().result().divide()) divide += d.nodes();
  EXPECT_EQ(divide, 119060324u);
  // No hash: the usual jobs, no key ranges.
  req.mutable_perft()->set_hash_mb(0);
  run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  std::optional<v1::Job> plain = Acquire(workers[0]);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->perft().lane_end(), 0u);
  EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());
  // Jobs of three plies (split at ply 3 for perft(6)): too few below the lane's ply.
  req.mutable_perft()->set_hash_mb(4);
  req.set_split_depth(3);
  run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  plain = Acquire(workers[0]);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->perft().lane_end(), 0u);
  EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());
  // Nine workers on the host: each lane would walk every job again; lanes of jobs instead.
  for (int i = 0; i < 7; ++i) {
    v1::RegisterRequest more;
    more.set_name(Cat("more", i));
    more.set_hostname("box");
    more.set_threads(1);
    more.set_perft_lanes(true);
    ASSERT_TRUE(c_->Register(more, Caller{"", v1::ROLE_WORKER}).ok());
  }
  run = c_->SubmitPerft(KeyLanesRequest());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(RunSpec(run->id()).lanes(), 9u);
  plain = Acquire(workers[0]);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->perft().lane_end(), 0u);
  EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());
}

// A run's end reaches its watchers as soon as it is stored, not at the coordinator's next tick
// (here an hour away): `arbiter perft --coordinator` returns when the last result is in.
TEST_F(CoordinatorTest, ARunsEndIsToldToItsWatchersAtOnce) {
  c_.reset();
  auto c = Coordinator::Open({.data_dir = dir_.string(), .tick_seconds = 3600}, nullptr);
  ASSERT_TRUE(c.ok()) << c.status();
  c_ = std::move(*c);
  const std::string w = Register("w");
  const v1::Run run = Submit(3, 2);
  absl::Mutex mu;
  std::vector<v1::Run> seen;
  uint64_t version = 0;
  auto watch = [&] {
    c_->WatchRun(run.id(), version, [&](absl::StatusOr<v1::Run> r, uint64_t v) {
      absl::MutexLock lock(&mu);
      ASSERT_TRUE(r.ok()) << r.status();
      seen.push_back(*r);
      version = v;
    });
  };
  watch();  // answered at once: the run as it is
  {
    absl::MutexLock lock(&mu);
    ASSERT_EQ(seen.size(), 1u);
  }
  watch();
  // Exactly the run's jobs: one more acquire would wait for work until the (hour-long) tick.
  for (uint64_t i = 0; i < run.jobs().total(); ++i) {
    std::optional<v1::Job> job = Acquire(w);
    ASSERT_TRUE(job.has_value()) << i;
    ASSERT_TRUE(Complete(w, *job).ok());
  }
  absl::MutexLock lock(&mu);
  auto told = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return seen.size() == 2; };
  ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&told), absl::Seconds(60)))
      << "the run's end waited for a tick";
  EXPECT_EQ(seen[1].state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(seen[1].perft().result().nodes(), 8902u);
  // The abuse: a tick of a whole hour or none is refused.
  for (double tick : {0.0, -1.0, 3601.0})
    EXPECT_EQ(Coordinator::Open({.data_dir = dir_.string() + "-t", .tick_seconds = tick}, nullptr)
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument)
        << tick;
}

// The abuse: a worker older than lanes of keys would count a lane's job whole, so that its lane
// is counted twice. With such a worker connected the run gets lanes of jobs; one that connects
// after the plan gets none of the lanes' jobs, and a run waiting for it says why.
TEST_F(CoordinatorTest, AnOlderWorkerGetsNoLanesOfKeys) {
  std::vector<std::string> workers = OpenWithTwoWorkersOnItsHost(/*lanes=*/false);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(KeyLanesRequest());
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(RunSpec(run->id()).lanes(), 2u) << "lanes of jobs";
  std::optional<v1::Job> plain = Acquire(workers[1]);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->perft().lane_end(), 0u);
  EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());

  workers = OpenWithTwoWorkersOnItsHost(/*lanes=*/true);
  run = c_->SubmitPerft(KeyLanesRequest());
  ASSERT_TRUE(run.ok()) << run.status();
  v1::RegisterRequest req;
  req.set_name("old");
  req.set_hostname("box");
  req.set_threads(1);
  const std::string old = c_->Register(req, Caller{"", v1::ROLE_WORKER})->worker_id();
  EXPECT_FALSE(Acquire(old)) << "an older worker leased a job of a lane of keys";
  v1::DrainWorkersRequest drain;
  for (const char* name : {"a", "b"}) {
    drain.set_name(name);
    ASSERT_TRUE(c_->DrainWorkers(drain).ok());
  }
  EXPECT_NE(c_->GetRun(run->id())->waiting().find("'old': no lanes of keys (an older worker)"),
            std::string::npos)
      << c_->GetRun(run->id())->waiting();
  drain.set_undo(true);
  ASSERT_TRUE(c_->DrainWorkers(drain).ok());  // b
  std::optional<v1::Job> lane = Acquire(workers[1]);
  ASSERT_TRUE(lane);
  EXPECT_GT(lane->perft().lane_end(), 0u);
  EXPECT_TRUE(c_->CancelRun(run->id(), "").ok());
}

// After a restart each job left keeps its lane of keys (not contiguous ranges of the jobs left):
// a worker that registers afresh takes the rest of lane 0 in order, then the far end of lane 1.
TEST_F(CoordinatorTest, ARestartKeepsEachJobInItsLaneOfKeys) {
  const std::vector<std::string> workers = OpenWithTwoWorkersOnItsHost();
  const absl::StatusOr<v1::Run> run = c_->SubmitPerft(KeyLanesRequest());
  ASSERT_TRUE(run.ok()) << run.status();
  const size_t per_lane = run->jobs().total() / 2;
  ASSERT_GE(per_lane, 3u);
  std::optional<v1::Job> first = Acquire(workers[0]);
  ASSERT_TRUE(first);
  ASSERT_TRUE(Complete(workers[0], *first).ok());
  Open();
  const std::string a = Register("a2");
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (lane_begin, job id - first's)
  while (std::optional<v1::Job> job = Acquire(a)) {
    order.push_back({job->perft().lane_begin(), job->job_id() - first->job_id()});
    ASSERT_TRUE(Complete(a, *job).ok());
  }
  ASSERT_EQ(order.size(), 2 * per_lane - 1);
  for (size_t k = 0; k + 1 < per_lane; ++k) EXPECT_EQ(order[k], std::make_pair(uint64_t{0}, k + 1));
  EXPECT_EQ(order[per_lane - 1], std::make_pair(kShardKeyEnd / 2, 2 * per_lane - 1));
  EXPECT_EQ(c_->GetRun(run->id())->perft().result().nodes(), 119060324u);
}

// A streamed run's batches get lanes too: perft(6) split at ply 3 with room for its 8,902 paths
// in memory comes in shards of one job each (a sixteenth of the run's jobs, rounded up), and
// the lanes rotate from batch to batch: a takes the even jobs, b the odd ones, and a, its lane
// empty, the far end of b's.
TEST_F(CoordinatorTest, StreamedBatchesAreSpreadOverLanes) {
  const std::string a = Register("a"), b = Register("b");
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(6);
  req.set_split_depth(3);
  req.set_target_jobs(8);
  req.set_split_memory_positions(100'000);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->perft().streamed());
  WaitForRun(run->id(), [](const v1::Run& r) { return r.jobs().queued() >= 8; });  // one batch
  ASSERT_EQ(c_->GetRun(run->id())->jobs().total(), 8u);
  ExpectTwoLanesOfFour(a, b, {0, 2, 4, 6, 7}, {1, 3, 5});
}

// The abuse: a worker that registered (so the run has a lane for it) and then never asks. Its
// lane's jobs go to the worker that does ask (the lanes rotate from batch to batch, so this
// run's one-job batches alternate between them), which finishes the run alone with the exact
// count, however many batches the streamed split makes.
TEST_F(CoordinatorTest, StreamedLaneOfAnAbsentWorkerIsTakenOver) {
  const std::string a = Register("a");
  Register("absent");
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(5);
  req.set_split_depth(3);
  req.set_target_jobs(16);
  req.set_split_memory_positions(100);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(run->perft().streamed());
  v1::Run now = *run;
  for (int idle = 0; now.state() != v1::RUN_STATE_SUCCEEDED && idle < 500;) {
    std::optional<v1::Job> job = Acquire(a);
    if (job) {
      ASSERT_TRUE(Complete(a, *job).ok());
    } else {
      ++idle;  // the producer's next batch is not queued yet
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    now = *c_->GetRun(run->id());
  }
  ASSERT_EQ(now.state(), v1::RUN_STATE_SUCCEEDED) << now.message();
  EXPECT_EQ(now.perft().result().nodes(), 4865609u);
  EXPECT_GT(now.perft().chunks(), 1u);
  EXPECT_EQ(now.jobs().done(), now.jobs().total());
}

// A restarted coordinator gives the jobs still to do lanes again: perft(6) in 8 jobs on two
// lanes, 2 done before the restart; the 6 left are two lanes of 3. The abuse: only one worker
// comes back. It takes its lane in order, then the other lane from its far end, and finishes
// the run exactly. Without the lanes restored it would take the 6 in queue order.
TEST_F(CoordinatorTest, RestartGivesTheJobsLeftLanesAgain) {
  std::string a = Register("a");
  Register("b");
  const v1::Run run = Submit(6, 8);
  ASSERT_EQ(run.jobs().total(), 8u);
  uint64_t base = 0;
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::Job> job = Acquire(a);
    ASSERT_TRUE(job);
    if (i == 0) base = job->job_id();
    EXPECT_EQ(job->job_id() - base, uint64_t(i));
    ASSERT_TRUE(Complete(a, *job).ok());
  }
  Open();
  a = Register("a2");
  std::vector<uint64_t> order;
  while (std::optional<v1::Job> job = Acquire(a)) {
    order.push_back(job->job_id() - base);
    ASSERT_TRUE(Complete(a, *job).ok());
  }
  EXPECT_EQ(order, std::vector<uint64_t>({2, 3, 4, 7, 6, 5}));
  const absl::StatusOr<v1::Run> done = c_->GetRun(run.id());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::RUN_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->perft().result().nodes(), 119060324u);
}

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

// After expiry the job waits in the queue, so the next Acquire returns at once: no long poll
// depends on simulated time.
TEST_F(CoordinatorTest, ExpiredLeaseIsRequeuedAndItsResultRejected) {
  SimulatedClock clock;
  Open(/*lease_seconds=*/10, clock.Fn());
  std::string w = Register("w");
  v1::Run run = Submit(3, 1);
  std::optional<v1::Job> first = Acquire(w);
  ASSERT_TRUE(first);
  clock.Advance(9.9);
  c_->Tick();
  EXPECT_EQ(c_->GetRun(run.id())->jobs().leased(), 1u) << "the lease still holds";
  clock.Advance(0.2);
  c_->Tick();
  EXPECT_EQ(c_->GetRun(run.id())->jobs().leased(), 0u) << "the lease expired";
  std::optional<v1::Job> second = Acquire(w);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->job_id(), first->job_id());
  EXPECT_NE(second->lease_id(), first->lease_id());
  EXPECT_EQ(Complete(w, *first).status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<v1::CompleteJobResponse> done = Complete(w, *second);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->duplicate());
  absl::StatusOr<v1::CompleteJobResponse> again = Complete(w, *second);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate());
  absl::StatusOr<v1::Run> r = c_->GetRun(run.id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(r->perft().result().nodes(), 8902u);
}

// A finished run's gauges stay on /metrics with their final values for the time configured (a
// run shorter than a scrape interval is still seen to end), then they go.
TEST_F(CoordinatorTest, AFinishedRunsGaugesStayAWhileThenGo) {
  SimulatedClock clock;
  prometheus::Registry registry;
  c_.reset();
  auto c = Coordinator::Open(
      {.data_dir = dir_.string(), .clock = clock.Fn(), .finished_run_gauge_seconds = 60},
      &registry);
  ASSERT_TRUE(c.ok()) << c.status();
  c_ = std::move(*c);
  auto gauges = [&] {
    const std::string text = prometheus::TextSerializer().Serialize(registry.Collect());
    std::vector<std::string> lines;
    for (absl::string_view line : absl::StrSplit(text, '\n'))
      if (absl::StartsWith(line, "arbiter_run_")) lines.emplace_back(line);
    return lines;
  };
  const std::string w = Register("w");
  const v1::Run run = Submit(3, 1);
  const std::string label = "{run=\"" + std::to_string(run.id()) + "\"}";
  std::optional<v1::Job> job = Acquire(w);
  ASSERT_TRUE(job);
  ASSERT_TRUE(Complete(w, *job).ok());
  ASSERT_EQ(c_->GetRun(run.id())->state(), v1::RUN_STATE_SUCCEEDED);
  clock.Advance(59);
  c_->Tick();
  const std::vector<std::string> shown = gauges();
  for (const std::string& line :
       {"arbiter_run_progress_ratio" + label + " 1", "arbiter_run_perft_nodes" + label + " 8902"})
    EXPECT_NE(std::find(shown.begin(), shown.end(), line), shown.end())
        << line << " not in " << absl::StrJoin(shown, "; ");
  clock.Advance(2);
  c_->Tick();
  EXPECT_EQ(gauges(), std::vector<std::string>());
  // The abuse: a negative time, or more than a day, is refused.
  for (double seconds : {-1.0, 86401.0})
    EXPECT_EQ(
        Coordinator::Open({.data_dir = dir_.string() + "-g", .finished_run_gauge_seconds = seconds},
                          nullptr)
            .status()
            .code(),
        absl::StatusCode::kInvalidArgument)
        << seconds;
}

// A heartbeat extends the lease by the lease time from when it arrives; a lease without one
// expires, and a heartbeat for it afterwards is refused.
TEST_F(CoordinatorTest, HeartbeatsKeepALeaseAliveInSimulatedTime) {
  SimulatedClock clock;
  Open(/*lease_seconds=*/10, clock.Fn());
  std::string w = Register("w");
  v1::Run run = Submit(3, 1);
  std::optional<v1::Job> job = Acquire(w);
  ASSERT_TRUE(job);
  v1::HeartbeatRequest hb;
  hb.set_worker_id(w);
  hb.set_job_id(job->job_id());
  hb.set_lease_id(job->lease_id());
  for (int i = 0; i < 5; ++i) {  // 40 s in all, four times the lease
    clock.Advance(8);
    ASSERT_TRUE(c_->Heartbeat(hb).ok()) << "beat " << i;
    c_->Tick();
    ASSERT_EQ(c_->GetRun(run.id())->jobs().leased(), 1u) << "beat " << i;
  }
  clock.Advance(10.5);
  c_->Tick();
  EXPECT_EQ(c_->GetRun(run.id())->jobs().leased(), 0u);
  absl::StatusOr<v1::HeartbeatResponse> late = c_->Heartbeat(hb);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_TRUE(late->stop()) << "a heartbeat after expiry does not revive the lease";
  EXPECT_NE(late->reason().find("expired"), std::string::npos) << late->reason();
  EXPECT_EQ(Complete(w, *job).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(CoordinatorTest, RestartKeepsCommittedResultsAndCountsThemOnce) {
  std::string w = Register("w");
  v1::Run run = Submit(4, 4);
  ASSERT_EQ(run.jobs().total(), 4u);
  for (int i = 0; i < 2; ++i) {
    std::optional<v1::Job> job = Acquire(w);
    ASSERT_TRUE(job);
    ASSERT_TRUE(Complete(w, *job).ok());
  }
  std::optional<v1::Job> in_flight = Acquire(w);  // leased, never completed before the restart
  ASSERT_TRUE(in_flight);
  Open();
  absl::StatusOr<v1::Run> r = c_->GetRun(run.id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(r->jobs().done(), 2u);
  // The old worker id and lease mean nothing to the new process.
  EXPECT_EQ(Complete(w, *in_flight).status().code(), absl::StatusCode::kNotFound);
  w = Register("w2");
  absl::Status never = Complete(w, *in_flight).status();
  EXPECT_EQ(never.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(never.message().find("was never leased"), std::string::npos) << never;
  int jobs = 0;
  while (std::optional<v1::Job> job = Acquire(w)) {
    ASSERT_TRUE(Complete(w, *job).ok());
    ++jobs;
  }
  EXPECT_EQ(jobs, 2);
  r = c_->GetRun(run.id());
  EXPECT_EQ(r->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(r->perft().result().nodes(), 197281u);
  // Finished runs survive a restart too.
  Open();
  r = c_->GetRun(run.id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(r->perft().result().nodes(), 197281u);
}

// Game pairs for a match job: in each pair the first engine loses both games (fool's mate with
// White, a quick mate with Black).
v1::MatchJobResult LosingPairs(const v1::Job& job) {
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

// A round robin's results survive a restart, every pairing is played once, and the ratings and
// PGN cover all of them.
TEST_F(CoordinatorTest, TournamentResumesAfterRestartAndRatesEveryEngine) {
  v1::SubmitTournamentRequest req;
  for (const char* name : {"a", "b", "c"}) {
    v1::EngineSpec* e = req.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  req.set_tc("depth=3");
  req.set_games_per_pairing(4);
  req.set_pairs_per_job(2);
  absl::StatusOr<v1::Run> run = c_->SubmitTournament(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->kind(), v1::RUN_KIND_TOURNAMENT);
  ASSERT_EQ(run->jobs().total(), 3u);
  auto complete = [&](const std::string& w, const v1::Job& job) {
    v1::CompleteJobRequest cr;
    cr.set_worker_id(w);
    cr.set_job_id(job.job_id());
    cr.set_lease_id(job.lease_id());
    *cr.mutable_match() = LosingPairs(job);
    std::promise<absl::StatusOr<v1::CompleteJobResponse>> p;
    c_->CompleteJob(cr, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r); });
    return p.get_future().get();
  };
  std::string w = Register("w");
  std::optional<v1::Job> first = Acquire(w);
  ASSERT_TRUE(first && first->has_match());
  ASSERT_TRUE(complete(w, *first).ok());
  Open();
  absl::StatusOr<v1::Run> r = c_->GetRun(run->id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(r->tournament().games(), 4u) << "the committed job, once";
  // Ratings across runs count a running run's games so far (its handler's tallies)...
  v1::GetRatingsRequest rate;
  rate.add_run_ids(run->id());
  absl::StatusOr<v1::GetRatingsResponse> live = c_->GetRatings(rate);
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_EQ(live->games(), 4u);
  EXPECT_EQ(live->standings_size(), 2) << "the third engine has not played yet";
  w = Register("w2");
  int jobs = 0;
  while (std::optional<v1::Job> job = Acquire(w)) {
    ASSERT_TRUE(complete(w, *job).ok());
    ++jobs;
  }
  EXPECT_EQ(jobs, 2);
  Open();  // a finished tournament keeps its table
  r = c_->GetRun(run->id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->state(), v1::RUN_STATE_SUCCEEDED);
  const v1::TournamentRunStatus& t = r->tournament();
  ASSERT_EQ(t.pairings_size(), 3);
  for (const v1::MatchResult& m : t.pairings()) {
    EXPECT_EQ(m.games(), 4u);
    EXPECT_EQ(m.stats().wdl().losses(), 4u) << "counted from the pairing's first engine";
    EXPECT_EQ(m.stats().penta().ll(), 2u);
    // The stored games' enums read back after the restart: how they ended, and who won.
    ASSERT_EQ(m.terminations().count("normal"), 1u);
    EXPECT_EQ(m.terminations().at("normal"), 4u);
    ASSERT_EQ(m.faults_size(), 2);
    EXPECT_EQ(m.faults(0).name(), m.engines(0));
  }
  ASSERT_EQ(t.standings_size(), 3);
  EXPECT_EQ(t.standings(0).name(), "c") << "c beat a and b";
  EXPECT_EQ(t.standings(2).name(), "a");
  // ... and a finished run's from its stored status: the tournament's own table.
  absl::StatusOr<v1::GetRatingsResponse> rated = c_->GetRatings(rate);
  ASSERT_TRUE(rated.ok()) << rated.status();
  EXPECT_EQ(rated->games(), 12u);
  ASSERT_EQ(rated->standings_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rated->standings(i).name(), t.standings(i).name());
    EXPECT_NEAR(rated->standings(i).elo(), t.standings(i).elo(), 1e-9);
  }
  absl::StatusOr<v1::GetPgnResponse> pgn = c_->GetPgn(run->id());
  ASSERT_TRUE(pgn.ok()) << pgn.status();
  EXPECT_EQ(pgn->games(), 12u);
  std::set<uint64_t> rounds;
  for (const v1::GameSummary& g : pgn->game_list()) {
    rounds.insert(g.round());
    EXPECT_NE(pgn->pgn().find("[Round \"" + std::to_string(g.round()) + "\"]"), std::string::npos);
    EXPECT_NE(g.white(), g.black());
    EXPECT_EQ(g.termination(), "normal");
    EXPECT_TRUE(g.result() == "1-0" || g.result() == "0-1") << g.result();
  }
  EXPECT_EQ(rounds.size(), 12u);
  EXPECT_EQ(*rounds.rbegin(), 12u);
}

TEST_F(CoordinatorTest, CancelStopsWorkersAndRefusesResults) {
  std::string w = Register("w");
  v1::Run run = Submit(4, 2);
  std::optional<v1::Job> job = Acquire(w);
  ASSERT_TRUE(job);
  absl::StatusOr<v1::Run> cancelled = c_->CancelRun(run.id(), "test");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->state(), v1::RUN_STATE_CANCELLED);
  v1::HeartbeatRequest hb;
  hb.set_worker_id(w);
  hb.set_job_id(job->job_id());
  hb.set_lease_id(job->lease_id());
  absl::StatusOr<v1::HeartbeatResponse> beat = c_->Heartbeat(hb);
  ASSERT_TRUE(beat.ok());
  EXPECT_TRUE(beat->stop());
  EXPECT_EQ(Complete(w, *job).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(Acquire(w));
  EXPECT_EQ(c_->CancelRun(run.id(), "").status().code(), absl::StatusCode::kFailedPrecondition);
}

// Perft results are checked, not believed: a worker's results count alone only after one was
// recounted by another worker and agreed, and a share of them is recounted after that.
class SpotCheckTest : public CoordinatorTest {
 protected:
  struct W {
    std::string id, token;
    bool lies = false;
  };
  W Reg(const std::string& token, bool lies = false) {
    v1::RegisterRequest r;
    r.set_name(token);
    r.set_threads(4);
    return {c_->Register(r, Caller{token, v1::ROLE_WORKER})->worker_id(), token, lies};
  }
  // The workers take and answer jobs in turn until the run ends or none is left to take; a
  // worker that lies adds 7 to every count. Returns the run and how many jobs were leased.
  std::pair<v1::Run, int> Play(uint64_t run_id, const std::vector<W>& workers) {
    int leased = 0;
    for (int round = 0; round < 2000; ++round) {
      bool any = false;
      for (const W& w : workers) {
        std::optional<v1::Job> j = Acquire(w.id, w.token);
        if (!j) continue;
        any = true;
        ++leased;
        std::vector<uint64_t> counts = Count(*j);
        if (w.lies)
          for (uint64_t& c : counts) c += 7;
        EXPECT_TRUE(Complete(w.id, *j, counts, 0, w.token).ok());
      }
      v1::Run r = *c_->GetRun(run_id);
      if (r.state() == v1::RUN_STATE_SUCCEEDED || r.state() == v1::RUN_STATE_FAILED || !any)
        return {r, leased};
    }
    return {*c_->GetRun(run_id), leased};
  }
};

TEST_F(SpotCheckTest, AForgerBesideOneHonestWorkerFailsTheRunNeverAWrongTotal) {
  const std::vector<W> workers = {Reg("honest"), Reg("forger", /*lies=*/true)};
  auto [run, leased] = Play(Submit(4, 8).id(), workers);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED) << run.message();
  EXPECT_NE(run.message().find("disagree"), std::string::npos) << run.message();
  EXPECT_NE(run.message().find("no third worker"), std::string::npos) << run.message();
}

TEST_F(SpotCheckTest, AThirdWorkerOutvotesTheForgerWhoIsFlaggedAndTheTotalIsExact) {
  const std::vector<W> workers = {Reg("honest-1"), Reg("forger", /*lies=*/true), Reg("honest-2")};
  auto [run, leased] = Play(Submit(4, 8).id(), workers);
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), 197281u);
  EXPECT_GT(run.perft().disagreements_size(), 0);
  for (const v1::Disagreement& d : run.perft().disagreements())
    EXPECT_EQ(d.worker_name(), "forger");
  bool flagged = false;
  const v1::ListWorkersResponse list = c_->ListWorkers({});
  for (const v1::WorkerStatus& w : list.workers())
    if (w.name() == "forger") flagged = w.flags_size() > 0;
  EXPECT_TRUE(flagged) << "the forger carries a flag for the admin";
}

// The only worker that could recount a result leaves: the result counts as it is (the run does
// not wait for a worker that is gone), and the run ends exact.
TEST_F(SpotCheckTest, ARecountWithNobodyLeftToDoItCountsTheResultAsItIs) {
  SimulatedClock clock;
  Open(/*lease_seconds=*/10, clock.Fn());
  const W a = Reg("a"), b = Reg("b");
  const v1::Run run = Submit(3, 1);
  std::optional<v1::Job> job = Acquire(a.id, a.token);
  ASSERT_TRUE(job);
  ASSERT_TRUE(Complete(a.id, *job, Count(*job), 0, a.token).ok());
  EXPECT_EQ(c_->GetRun(run.id())->state(), v1::RUN_STATE_RUNNING) << "waits for b's recount";
  clock.Advance(3600);  // b is long gone (and a, but a's count is in)
  c_->Tick();
  const v1::Run done = *c_->GetRun(run.id());
  EXPECT_EQ(done.state(), v1::RUN_STATE_SUCCEEDED) << done.message();
  EXPECT_EQ(done.perft().result().nodes(), 8902u);
  (void)b;
}

TEST_F(SpotCheckTest, HonestWorkersPayOnlyAFewRecounts) {
  const std::vector<W> workers = {Reg("honest-1"), Reg("honest-2")};
  const v1::Run submitted = Submit(5, 64);
  auto [run, leased] = Play(submitted.id(), workers);
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), 4865609u);
  const int jobs = int(run.jobs().total());
  // Each worker's first result, then about 3 % of the jobs.
  EXPECT_GT(leased, jobs) << "no recount at all";
  EXPECT_LE(leased, jobs + 2 + jobs / 10);
}

// --verify: two pods of one Deployment share a token but not a host, and count as two workers;
// two workers of one token on one host do not (a token's holder cannot pose as two).
TEST_F(CoordinatorTest, VerifyTellsWorkersApartByTokenOrHost) {
  auto reg = [&](const std::string& name, const std::string& peer) {
    v1::RegisterRequest req;
    req.set_name(name);
    req.set_threads(64);
    return c_->Register(req, Caller{"pods", v1::ROLE_WORKER, peer})->worker_id();
  };
  const std::string a = reg("a", "10.0.0.1"), a2 = reg("a2", "10.0.0.1");
  const std::string b = reg("b", "10.0.0.2");
  Submit(3, 1, /*verify=*/true);
  std::optional<v1::Job> ja = Acquire(a, "pods");
  ASSERT_TRUE(ja);
  EXPECT_FALSE(Acquire(a2, "pods")) << "one token on one host is one worker for verification";
  std::optional<v1::Job> jb = Acquire(b, "pods");
  ASSERT_TRUE(jb) << "one token on another host is another worker";
  EXPECT_EQ(ja->job_id(), jb->job_id());
}

TEST_F(CoordinatorTest, VerifyAsksAThirdWorkerAndFlagsTheOddOne) {
  std::string a = Register("a"), b = Register("b"), c = Register("c");
  v1::Run run = Submit(3, 1, /*verify=*/true);
  std::optional<v1::Job> ja = Acquire(a);
  ASSERT_TRUE(ja);
  EXPECT_FALSE(Acquire(a)) << "the second copy goes to another worker";
  std::optional<v1::Job> jb = Acquire(b);
  ASSERT_TRUE(jb);
  ASSERT_EQ(ja->job_id(), jb->job_id());
  std::vector<uint64_t> right = Count(*ja), wrong = right;
  wrong[0] += 1;
  ASSERT_TRUE(Complete(a, *ja, right).ok());
  ASSERT_TRUE(Complete(b, *jb, wrong).ok());
  EXPECT_EQ(c_->GetRun(run.id())->state(), v1::RUN_STATE_RUNNING);
  std::optional<v1::Job> jc = Acquire(c);
  ASSERT_TRUE(jc);
  ASSERT_TRUE(Complete(c, *jc, right).ok());
  absl::StatusOr<v1::Run> r = c_->GetRun(run.id());
  EXPECT_EQ(r->state(), v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(r->perft().result().nodes(), 8902u);
  ASSERT_EQ(r->perft().disagreements_size(), 1);
  EXPECT_EQ(r->perft().disagreements(0).worker_id(), b);
  EXPECT_EQ(r->perft().disagreements(0).worker_name(), "b");
}

// A streamed split (start position perft(6), split at ply 3, at most 100 split positions a
// chunk): the jobs are produced as the workers take them (a bounded number queued ahead), the run
// does not finish while the expansion goes on, a restart mid-expansion goes on from the stored
// cursor, and the total, the divide, the jobs and the unique positions equal those of the same
// run without a restart.
TEST_F(CoordinatorTest, StreamedSplitResumesFromItsStoredCursor) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  ExpectStreamedRunResumesExactly(req, /*in_memory=*/false, 50);
}

// The same when the split's 8,902 paths fit in memory (a bound of 5,000 positions allows 15,000
// paths): generated once and cut into buckets of the split's order, 16 shards of 2 jobs each;
// the restarted coordinator generates them again and goes on from the stored bucket. The
// shards' positions are the in-memory split's, in its order (perft_split_test checks that).
TEST_F(CoordinatorTest, StreamedSplitWithItsPathsInMemoryResumesFromItsStoredBucket) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  req.set_split_memory_positions(5000);
  ExpectStreamedRunResumesExactly(req, /*in_memory=*/true, 15);
}

// A streamed run stored by an older arbiter (chunks of contiguous positions, no shard cursor)
// and still expanding is not resumed with shards, which would count its stored chunks' positions
// again: after a restart it fails with the cause, and none of its jobs is handed out.
TEST_F(CoordinatorTest, AnOlderStreamedRunFailsRatherThanCountingTwice) {
  const std::string w = Register("w");
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_LT(run->perft().chunk_positions_expanded(), run->perft().chunk_positions());
  c_.reset();
  // The stored spec rewritten as an older arbiter kept it: a chunk cursor, no shards.
  store::v1::StoredPerftRun spec = RunSpec(run->id());
  ASSERT_TRUE(spec.sharded());
  spec.set_sharded(false);
  spec.set_chunk_cursor(10);
  WriteRunSpec(run->id(), spec);
  Open();
  const v1::Run failed = *c_->GetRun(run->id());
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("older arbiter"), std::string::npos) << failed.message();
  EXPECT_FALSE(Acquire(Register("w2")).has_value());
}

// The abuse of a split with its paths in memory: a stored cursor inside a bucket (a changed or
// damaged store) would count that bucket's positions twice. The restarted coordinator fails the
// run with the cause and hands out none of its jobs.
TEST_F(CoordinatorTest, AStoredCursorInsideABucketFailsTheRunRatherThanCountingTwice) {
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  req.set_split_memory_positions(5000);
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  c_.reset();
  store::v1::StoredPerftRun spec = RunSpec(run->id());
  ASSERT_TRUE(spec.paths_in_memory());
  spec.set_shard_cursor(spec.shard_cursor() + (uint64_t{1} << BucketedShards::kBucketShift) / 2);
  WriteRunSpec(run->id(), spec);
  Open();
  const v1::Run failed = *c_->GetRun(run->id());
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("is not the boundary of a bucket"), std::string::npos)
      << failed.message();
  EXPECT_FALSE(Acquire(Register("w")).has_value());
}

// Cancelling a run whose streamed split is expanding stops the split: no job of the run is
// handed out afterwards, and a restarted coordinator does not resume it.
TEST_F(CoordinatorTest, CancelStopsAStreamedSplit) {
  const std::string w = Register("w");
  v1::SubmitPerftRequest req = SmallStreamedRequest();
  absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
  ASSERT_TRUE(run.ok()) << run.status();
  std::optional<v1::Job> job;
  for (int i = 0; i < 50 && !job; ++i) job = Acquire(w);
  ASSERT_TRUE(job);
  ASSERT_TRUE(Complete(w, *job).ok());
  absl::StatusOr<v1::Run> cancelled = c_->CancelRun(run->id(), "enough");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_LT(cancelled->perft().chunk_positions_expanded(), cancelled->perft().chunk_positions());
  EXPECT_FALSE(Acquire(w));
  Open();
  const std::string w2 = Register("w2");
  EXPECT_FALSE(Acquire(w2));
  absl::StatusOr<v1::Run> after = c_->GetRun(run->id());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state(), v1::RUN_STATE_CANCELLED);
  EXPECT_EQ(after->jobs().done(), 1u);
}

// perft(11) from the start position: the in-memory split stops at ply 5 (ply 6 has 9.4 M
// positions), three plies short of 8, so the split is streamed on its own: one ply deeper, at
// ply 6, in shards walked from the 822,518 positions at ply 5 the in-memory split reached, at
// most 1,000,000 split positions a shard.
TEST_F(CoordinatorTest, DeepPerftIsStreamedAutomatically) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  const std::optional<v1::Run> run = Planned(11);
  ASSERT_TRUE(run);
  ExpectStreamedFrom(*run, 6, 5, 822518);
  // ~25 M paths from ply 5: 200 MB as the paths' moves, generated once.
  EXPECT_TRUE(RunSpec(run->id()).paths_in_memory());
}

// perft(8) from the start position: the last ply of the split (ply 5, 2.2 M paths from the
// 72,078 positions at ply 4; perft(9): ply 6, from ply 5) is merged shard by shard while the
// workers count the first jobs: the run is streamed from ply 4 with its paths in memory. perft(7)'s
// last ply (ply 4, ~200,000 paths) is merged at once as before, and perft(8) for workers sharing
// one hash is not merged (the hash merges it); perft(9)'s and perft(10)'s ply 6 is merged for
// them too.
TEST_F(CoordinatorTest, ALastPlyOfManyPathsIsMergedWhileTheWorkersCount) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  // Time stands still: the workers registered below stay connected however long the plans before
  // the last one take (minutes under ThreadSanitizer, past the registry's connected window).
  static SimulatedClock frozen;  // outlives the coordinator, which TearDown closes
  Open(/*lease_seconds=*/30, frozen.Fn());
  const std::optional<v1::Run> run = Planned(8);
  ASSERT_TRUE(run);
  ExpectStreamedFrom(*run, 5, 4, 72078);
  EXPECT_TRUE(RunSpec(run->id()).paths_in_memory());
  // perft(9)'s last ply too (ply 6: ~25 M paths from the 822,518 positions at ply 5).
  const std::optional<v1::Run> nine = Planned(9);
  ASSERT_TRUE(nine);
  ExpectStreamedFrom(*nine, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(nine->id()).paths_in_memory());
  // perft(10)'s split stops at ply 5 (ply 6 has more positions than the bound) short of where it
  // merges (ply 7): its ply 6 is merged the same way, not left to the workers' hashes.
  const std::optional<v1::Run> ten = Planned(10);
  ASSERT_TRUE(ten);
  ExpectStreamedFrom(*ten, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(ten->id()).paths_in_memory());
  // Unless each worker's own table has more entries than that ply has paths (2 GB: 67 M entries
  // against 25 M; 512 MB: 16.8 M, fewer): split at ply 5 then, each table merging ply 6 in its
  // worker's jobs (measured faster on perft(10)). perft(9)'s last ply stays merged for such
  // tables (measured faster too), and perft(11) stays streamed at ply 6.
  const std::optional<v1::Run> own_large = Planned(10, 2048);
  ASSERT_TRUE(own_large);
  EXPECT_FALSE(own_large->perft().streamed());
  EXPECT_EQ(own_large->perft().split_depth(), 5u);
  const std::optional<v1::Run> own_smaller = Planned(10, 512);
  ASSERT_TRUE(own_smaller);
  ExpectStreamedFrom(*own_smaller, 6, 5, 822518);
  const std::optional<v1::Run> nine_large = Planned(9, 2048);
  ASSERT_TRUE(nine_large);
  ExpectStreamedFrom(*nine_large, 6, 5, 822518);
  const std::optional<v1::Run> eleven_large = Planned(11, 2048);
  ASSERT_TRUE(eleven_large);
  ExpectStreamedFrom(*eleven_large, 6, 5, 822518);
  const v1::Run seven = Submit(7, 32);
  EXPECT_FALSE(seven.perft().streamed());
  EXPECT_EQ(seven.perft().split_depth(), 4u);
  EXPECT_EQ(seven.jobs().total(), 32u);
  Register("a", "local-1");
  Register("b", "local-1");
  const v1::Run shared = Submit(8, 32);
  EXPECT_FALSE(shared.perft().streamed());
  EXPECT_GT(shared.jobs().total(), 0u);
  // But perft(9)'s 25 M paths from ply 5 are merged for a pooled hash too (it saturates there).
  const std::optional<v1::Run> pooled = Planned(9);
  ASSERT_TRUE(pooled);
  ExpectStreamedFrom(*pooled, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(pooled->id()).paths_in_memory());
  const std::optional<v1::Run> pooled_ten = Planned(10, 128);
  ASSERT_TRUE(pooled_ten);
  ExpectStreamedFrom(*pooled_ten, 6, 5, 822518);
  EXPECT_TRUE(RunSpec(pooled_ten->id()).paths_in_memory());
  // Unless the pooled table has more entries than the deferred ply has paths (2 x 2 GB: 134 M
  // entries against 25 M paths): it merges them better than the split (measured on perft(10)).
  const std::optional<v1::Run> large_table = Planned(10, 2048);
  ASSERT_TRUE(large_table);
  EXPECT_FALSE(large_table->perft().streamed());
  EXPECT_EQ(large_table->perft().split_depth(), 3u);
}

// A run's hash past its bound is refused; at the bound the planner's count of the tables' entries
// (each worker's own, or hash x workers pooled) neither overflows nor merges.
TEST_F(CoordinatorTest, PerftHashBoundIsCheckedAndTheLargestTablePlansUnmerged) {
  if (kThreadSanitizer) GTEST_SKIP() << "deep plans: Release and ASan check them";
  static SimulatedClock frozen;  // the workers stay connected through the slow plans (above)
  Open(/*lease_seconds=*/30, frozen.Fn());
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(10);
  req.mutable_perft()->set_hash_mb(65537);
  absl::StatusOr<v1::Run> r = c_->SubmitPerft(req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("perft.hash_mb must be at most 65536, got 65537"),
            std::string::npos)
      << r.status();
  // Workers of their own at the bound: 2^31 entries each, no overflow, ply 6 left to them.
  const std::optional<v1::Run> own = Planned(10, 65536);
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->perft().streamed());
  EXPECT_EQ(own->perft().split_depth(), 5u);
  Register("a", "local-1");
  Register("b", "local-1");
  const std::optional<v1::Run> largest = Planned(10, 65536);
  ASSERT_TRUE(largest);
  EXPECT_FALSE(largest->perft().streamed());
  EXPECT_EQ(largest->perft().split_depth(), 3u);
}

// split_memory_positions out of its bounds is refused with the bounds in the message.
TEST_F(CoordinatorTest, StreamedSplitBoundIsChecked) {
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(5);
  for (uint64_t bad : {uint64_t(99), uint64_t(4'000'001), UINT64_MAX}) {
    req.set_split_memory_positions(bad);
    absl::StatusOr<v1::Run> r = c_->SubmitPerft(req);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find("split_memory_positions must be 0 (automatic) or in "
                                        "100..4000000"),
              std::string::npos)
        << r.status();
  }
  req.set_split_memory_positions(100);
  EXPECT_TRUE(c_->SubmitPerft(req).ok());
}

TEST_F(CoordinatorTest, RejectsBadSubmissions) {
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen("not a fen");
  req.mutable_perft()->set_depth(3);
  EXPECT_EQ(c_->SubmitPerft(req).status().code(), absl::StatusCode::kInvalidArgument);
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(0);
  EXPECT_EQ(c_->SubmitPerft(req).status().code(), absl::StatusCode::kInvalidArgument);
  req.mutable_perft()->set_depth(21);
  EXPECT_EQ(c_->SubmitPerft(req).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c_->GetRun(77).status().code(), absl::StatusCode::kNotFound);
  v1::AcquireJobRequest acquire;
  acquire.set_worker_id("nobody");
  absl::StatusCode code = absl::StatusCode::kOk;
  c_->AcquireJob(acquire,
                 [&](absl::StatusOr<v1::AcquireJobResponse> r) { code = r.status().code(); });
  EXPECT_EQ(code, absl::StatusCode::kNotFound);
}

TEST(Uint128, Decimal) {
  EXPECT_EQ(Uint128ToString(0), "0");
  EXPECT_EQ(Uint128ToString(uint64_t(18446744073709551615u)), "18446744073709551615");
  unsigned __int128 big = (unsigned __int128)1 << 64;
  EXPECT_EQ(Uint128ToString(big * 1000), "18446744073709551616000");
}

// A worker id belongs to the token that registered it: another token cannot acquire, heartbeat,
// complete or release with it (PERMISSION_DENIED), so a stolen id is worth nothing.
TEST_F(CoordinatorTest, WorkerIdsAreBoundToTheirToken) {
  const std::string w = Register("w", "", "worker-a");
  Submit(4, 4);
  EXPECT_EQ(AcquireAs(w, "worker-b").status().code(), absl::StatusCode::kPermissionDenied);
  std::optional<v1::Job> job = Acquire(w, "worker-a");
  ASSERT_TRUE(job);
  EXPECT_EQ(Complete(w, *job, "worker-b").status().code(), absl::StatusCode::kPermissionDenied);
  v1::HeartbeatRequest hb;
  hb.set_worker_id(w);
  hb.set_job_id(job->job_id());
  hb.set_lease_id(job->lease_id());
  EXPECT_EQ(c_->Heartbeat(hb, Caller{"worker-b", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kPermissionDenied);
  v1::ReleaseJobRequest rel;
  rel.set_worker_id(w);
  rel.set_job_id(job->job_id());
  rel.set_lease_id(job->lease_id());
  EXPECT_EQ(c_->ReleaseJob(rel, Caller{"worker-b", v1::ROLE_WORKER}).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Complete(w, *job, "worker-a").ok());
}

// A worker holds at most as many leases as it declared threads: one client cannot lease every job
// of a run and sit on them with heartbeats.
TEST_F(CoordinatorTest, LeasesAreCappedByDeclaredThreads) {
  const std::string w = Register("w", "", "t", /*threads=*/2);
  Submit(5, 8);
  std::optional<v1::Job> a = Acquire(w, "t"), b = Acquire(w, "t");
  ASSERT_TRUE(a && b);
  absl::StatusOr<v1::AcquireJobResponse> third = AcquireAs(w, "t");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("threads"), std::string::npos) << third.status();
  ASSERT_TRUE(Complete(w, *a, "t").ok());
  EXPECT_TRUE(Acquire(w, "t")) << "a finished lease frees a slot";
  // A declaration of more than 256 threads is refused (one id declaring 100,000 threads held
  // 373 leases); 256 is accepted.
  v1::RegisterRequest big;
  big.set_threads(100'000);
  absl::StatusOr<v1::RegisterResponse> refused = c_->Register(big, Caller{"t", v1::ROLE_WORKER});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("at most 256"), std::string::npos) << refused.status();
  big.set_threads(256);
  EXPECT_TRUE(c_->Register(big, Caller{"t", v1::ROLE_WORKER}).ok());
}

// One token registers at most kMaxWorkersPerToken workers at once: a flood stops there.
TEST_F(CoordinatorTest, OneTokenRegistersABoundedNumberOfWorkers) {
  v1::RegisterRequest r;
  r.set_threads(1);
  for (size_t i = 0; i < kMaxWorkersPerToken; ++i)
    ASSERT_TRUE(c_->Register(r, Caller{"flood", v1::ROLE_WORKER}).ok()) << i;
  absl::StatusOr<v1::RegisterResponse> more = c_->Register(r, Caller{"flood", v1::ROLE_WORKER});
  EXPECT_EQ(more.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(more.status().message().find("'flood'"), std::string::npos) << more.status();
  EXPECT_TRUE(c_->Register(r, Caller{"other", v1::ROLE_WORKER}).ok()) << "another token's own";
}

// A worker that reports a result while it counts its next job (results_in_flight) may hold one
// lease more than its threads, the job whose result is on its way; no more, whatever it declares.
TEST_F(CoordinatorTest, AResultInFlightHoldsOneLeaseMore) {
  v1::RegisterRequest reg;
  reg.set_name("pipelined");
  reg.set_threads(1);
  reg.set_results_in_flight(1'000);  // capped at 1
  const std::string w = c_->Register(reg, Caller{"t", v1::ROLE_WORKER})->worker_id();
  const std::string plain = Register("plain", "", "t", /*threads=*/1);
  Submit(5, 8);
  // The plain worker: one lease a thread.
  std::optional<v1::Job> p = Acquire(plain, "t");
  ASSERT_TRUE(p);
  EXPECT_EQ(AcquireAs(plain, "t").status().code(), absl::StatusCode::kResourceExhausted);
  // The pipelined one: its counted job's result not yet reported, it leases the next one.
  std::optional<v1::Job> a = Acquire(w, "t"), b = Acquire(w, "t");
  ASSERT_TRUE(a && b) << "a worker reporting while it counts holds threads + 1 leases";
  absl::StatusOr<v1::AcquireJobResponse> third = AcquireAs(w, "t");
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("while counting (1)"), std::string::npos)
      << third.status();
  ASSERT_TRUE(Complete(w, *a, "t").ok());
  EXPECT_TRUE(Acquire(w, "t")) << "the reported result frees its slot";
}

// --verify needs two different worker tokens: two ids under one token count as one worker, so a
// single client cannot confirm its own forged count.
TEST_F(CoordinatorTest, VerificationNeedsTwoTokens) {
  const std::string a1 = Register("a1", "", "same"), a2 = Register("a2", "", "same");
  const v1::Run run = Submit(4, 1, /*verify=*/true);
  std::optional<v1::Job> job = Acquire(a1, "same");
  ASSERT_TRUE(job);
  EXPECT_FALSE(Acquire(a2, "same")) << "the second copy must go to another token";
  const std::string b = Register("b", "", "other");
  std::optional<v1::Job> copy = Acquire(b, "other");
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->job_id(), job->job_id());
  ASSERT_TRUE(Complete(a1, *job, "same").ok());
  ASSERT_TRUE(Complete(b, *copy, "other").ok());
  EXPECT_EQ(c_->GetRun(run.id())->state(), v1::RUN_STATE_SUCCEEDED);
}

// A count above 218^depth for any position cannot be right: refused, never summed.
TEST_F(CoordinatorTest, ForgedCountsAreRefused) {
  const std::string w = Register("w");
  const v1::Run run = Submit(4, 1);
  std::optional<v1::Job> job = Acquire(w);
  ASSERT_TRUE(job);
  std::vector<uint64_t> counts = Count(*job);
  counts[0] = 400'000'000;
  absl::StatusOr<v1::CompleteJobResponse> r = Complete(w, *job, counts);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("218^"), std::string::npos) << r.status();
  counts[0] = UINT64_MAX;
  EXPECT_EQ(Complete(w, *job, counts).status().code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(Complete(w, *job).ok());
  EXPECT_EQ(c_->GetRun(run.id())->perft().result().nodes(), 197281u);
}

// Runs record their owner; only the owner or an admin may cancel; lists filter and page.
TEST_F(CoordinatorTest, OwnersCancelAndListPages) {
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(5);
  std::vector<uint64_t> ids;
  for (const char* owner : {"alice", "bob", "alice", "alice"}) {
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req, Caller{owner, v1::ROLE_SUBMITTER});
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->owner(), owner);
    ids.push_back(run->id());
  }
  absl::StatusOr<v1::Run> denied = c_->CancelRun(ids[0], "", Caller{"bob", v1::ROLE_SUBMITTER});
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(denied.status().message().find("alice"), std::string::npos);
  EXPECT_TRUE(c_->CancelRun(ids[0], "", Caller{"alice", v1::ROLE_SUBMITTER}).ok());
  EXPECT_TRUE(c_->CancelRun(ids[1], "", Caller{"root", v1::ROLE_ADMIN}).ok());
  // alice's runs, two a page: 4 and 3, then 1.
  v1::ListRunsRequest list;
  list.set_owner("alice");
  list.set_page_size(2);
  absl::StatusOr<v1::ListRunsResponse> page = c_->ListRuns(list);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->runs_size(), 2);
  EXPECT_EQ(page->runs(0).id(), ids[3]);
  EXPECT_EQ(page->runs(1).id(), ids[2]);
  ASSERT_FALSE(page->next_page_token().empty());
  list.set_page_token(page->next_page_token());
  page = c_->ListRuns(list);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->runs_size(), 1);
  EXPECT_EQ(page->runs(0).id(), ids[0]);
  EXPECT_TRUE(page->next_page_token().empty());
  list.set_page_token("x9");
  EXPECT_EQ(c_->ListRuns(list).status().code(), absl::StatusCode::kInvalidArgument);
  list.set_page_token("");
  list.set_page_size(5000);
  EXPECT_EQ(c_->ListRuns(list).status().code(), absl::StatusCode::kInvalidArgument);
  // Owners survive a restart.
  Open();
  EXPECT_EQ(c_->GetRun(ids[3])->owner(), "alice");
}

// Per-token limits: unfinished runs and submissions a minute, each refused with the limit named.
TEST_F(CoordinatorTest, PerTokenLimits) {
  c_.reset();
  auto c = Coordinator::Open({.data_dir = dir_.string(), .max_active_runs = 2}, nullptr);
  ASSERT_TRUE(c.ok());
  c_ = std::move(*c);
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(5);
  const Caller carol{"carol", v1::ROLE_SUBMITTER};
  ASSERT_TRUE(c_->SubmitPerft(req, carol).ok());
  absl::StatusOr<v1::Run> second = c_->SubmitPerft(req, carol);
  ASSERT_TRUE(second.ok());
  absl::StatusOr<v1::Run> third = c_->SubmitPerft(req, carol);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("limit"), std::string::npos) << third.status();
  EXPECT_TRUE(c_->SubmitPerft(req, Caller{"dave", v1::ROLE_SUBMITTER}).ok()) << "others still may";
  ASSERT_TRUE(c_->CancelRun(second->id(), "", carol).ok());
  EXPECT_TRUE(c_->SubmitPerft(req, carol).ok()) << "a finished run frees its slot";
}

// Requests that would exhaust the coordinator are refused at submit with the bound named.
TEST_F(CoordinatorTest, OversizedRequestsAreRefused) {
  auto refused = [](const absl::StatusOr<v1::Run>& r, const std::string& words) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status();
  };
  v1::SubmitPerftRequest perft;
  perft.mutable_perft()->set_fen(std::string(Position::kStartFen) + std::string(1 << 20, ' '));
  perft.mutable_perft()->set_depth(4);
  refused(c_->SubmitPerft(perft), "at most 256 bytes");
  // Trailing spaces within the bound are trimmed, not stored.
  perft.mutable_perft()->set_fen(std::string(Position::kStartFen) + "    ");
  absl::StatusOr<v1::Run> ok = c_->SubmitPerft(perft);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->perft().request().perft().fen(), Position::kStartFen);
  perft.mutable_perft()->set_depth(7);
  perft.set_split_depth(7);
  refused(c_->SubmitPerft(perft), "split_depth 7 expands more than");
  v1::SubmitMatchRequest match;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = match.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  match.set_tc("10+0.1");
  match.set_games(4'294'967'294ull);
  refused(c_->SubmitMatch(match), "games must be at most");
  match.set_games(uint64_t(1) << 33);
  refused(c_->SubmitMatch(match), "games must be at most");
  match.set_games(10);
  match.set_tc("abc");
  refused(c_->SubmitMatch(match), "tc 'abc'");
  match.set_tc("0+0");
  refused(c_->SubmitMatch(match), "no time at all");
  match.set_tc("10+0.1");
  match.mutable_sprt()->set_elo0(0);
  match.mutable_sprt()->set_elo1(std::numeric_limits<double>::infinity());
  match.mutable_sprt()->set_alpha(0.05);
  match.mutable_sprt()->set_beta(0.05);
  refused(c_->SubmitMatch(match), "finite");
  match.clear_sprt();
  match.mutable_engines(0)->mutable_options()->insert({"X", std::string(5000, 'x')});
  refused(c_->SubmitMatch(match), "at most 1024 bytes");
  match.mutable_engines(0)->clear_options();
  // Newlines would forge log lines and PGN tags, or inject commands into the engine's input.
  match.mutable_engines(0)->set_name("a\n[info] run 1: succeeded");
  refused(c_->SubmitMatch(match), "control characters");
  match.mutable_engines(0)->set_name("a");
  match.mutable_rules()->set_event("x\"]\n[Result \"1-0");
  refused(c_->SubmitMatch(match), "rules.event");
  match.mutable_rules()->set_event(std::string(5000, 'e'));
  refused(c_->SubmitMatch(match), "rules.event");
  match.mutable_rules()->clear_event();
  v1::RegisterRequest worker;
  worker.set_name("w\r\nforged");
  EXPECT_EQ(c_->Register(worker, Caller{"", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  // And the coordinator still serves.
  EXPECT_TRUE(c_->SubmitMatch(match).ok());
}

// Registrations are cheap, so the split does not trust their number: 2,000 registered workers
// plan a perft as 1,024 would (16 jobs each at most), not 32,000 jobs.
TEST_F(CoordinatorTest, ManyRegistrationsDoNotBlowUpTheSplit) {
  // (Four tokens: one token registers at most kMaxWorkersPerToken workers.)
  for (int i = 0; i < 2000; ++i) Register(std::to_string(i), "", Cat("t", i % 4));
  v1::Run run = Submit(6, 0);
  // Its last ply (2.2 M paths) is merged shard by shard while the first jobs go out.
  run = WaitForRun(run.id(), [](const v1::Run& r) { return r.jobs().total() > 0; });
  EXPECT_LE(run.jobs().total(), 16u * 1024u);
  EXPECT_GT(run.jobs().total(), 0u);
}

// Someone else's uploaded engine goes only to workers that confine engines (namespaces or
// Landlock); an admin's
// run may use any worker.
TEST_F(CoordinatorTest, UploadedEnginesOnlyOnIsolatedWorkers) {
  const auto file = dir_ / "engine.bin";
  std::ofstream(file) << "#!/bin/sh\necho uploaded\n";
  absl::StatusOr<v1::Engine> engine =
      c_->AddEngine("up", file.string(), Caller{"sam", v1::ROLE_SUBMITTER});
  ASSERT_TRUE(engine.ok()) << engine.status();
  v1::SubmitMatchRequest req;
  v1::EngineSpec* a = req.add_engines();
  a->set_name("up");
  a->set_sha256(engine->sha256());
  v1::EngineSpec* b = req.add_engines();
  b->set_name("builtin");
  b->set_builtin(true);
  req.set_tc("10+0.1");
  req.set_games(2);
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  auto worker = [&](const std::string& name, const std::string& isolation) {
    v1::RegisterRequest r;
    r.set_name(name);
    r.set_threads(4);
    r.set_isolation(isolation);
    return c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  };
  const std::string plain = worker("plain", "limits");
  EXPECT_FALSE(Acquire(plain, "w")) << "an unisolated worker must not get an uploaded engine";
  const std::string boxed = worker("boxed", "namespaces");
  std::optional<v1::Job> job = Acquire(boxed, "w");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->match().engines(0).sha256(), engine->sha256());
  // Landlock confines an engine as well (an unprivileged pod's box).
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  const std::string landlocked = worker("landlocked", "landlock");
  job = Acquire(landlocked, "w");
  ASSERT_TRUE(job) << "a landlock worker gets an uploaded engine";
  EXPECT_EQ(job->match().engines(0).sha256(), engine->sha256());
  // An admin vouches for its own runs.
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"root", v1::ROLE_ADMIN}).ok());
  EXPECT_TRUE(Acquire(plain, "w"));
}

// A worker token does not open every upload: a worker fetches an engine only while it holds a
// lease of a job that runs it, and only under its own token.
TEST_F(CoordinatorTest, AWorkerFetchesAnEngineOnlyForAJobItHolds) {
  const auto file = dir_ / "engine.bin";
  std::ofstream(file) << "#!/bin/sh\necho uploaded\n";
  absl::StatusOr<v1::Engine> engine =
      c_->AddEngine("up", file.string(), Caller{"sam", v1::ROLE_SUBMITTER});
  ASSERT_TRUE(engine.ok()) << engine.status();
  v1::RegisterRequest r;
  r.set_threads(1);
  r.set_isolation("landlock");
  const std::string w = c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  const Caller as_w{"w", v1::ROLE_WORKER};
  EXPECT_EQ(c_->CheckEngineFetch(w, engine->sha256(), as_w).code(),
            absl::StatusCode::kPermissionDenied)
      << "no lease yet";
  v1::SubmitMatchRequest req;
  v1::EngineSpec* a = req.add_engines();
  a->set_name("up");
  a->set_sha256(engine->sha256());
  v1::EngineSpec* b = req.add_engines();
  b->set_name("builtin");
  b->set_builtin(true);
  req.set_tc("10+0.1");
  req.set_games(2);
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  ASSERT_TRUE(Acquire(w, "w"));
  EXPECT_TRUE(c_->CheckEngineFetch(w, engine->sha256(), as_w).ok());
  EXPECT_FALSE(c_->CheckEngineFetch(w, std::string(64, 'a'), as_w).ok()) << "not its job's engine";
  EXPECT_FALSE(c_->CheckEngineFetch(w, engine->sha256(), Caller{"other", v1::ROLE_WORKER}).ok())
      << "another token's worker id";
}

// A `path` engine goes only to a worker whose --engine-dir holds it; a run no connected worker
// allows is refused at submit (with none connected, the workers decide).
TEST_F(CoordinatorTest, PathEnginesOnlyWhereAWorkersEngineDirAllows) {
  v1::SubmitMatchRequest req;
  v1::EngineSpec* a = req.add_engines();
  a->set_name("sf");
  a->set_path("/opt/engines/stockfish");
  v1::EngineSpec* b = req.add_engines();
  b->set_name("builtin");
  b->set_builtin(true);
  req.set_tc("10+0.1");
  req.set_games(2);
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  ASSERT_TRUE(c_->SubmitMatch(req, sam).ok()) << "no worker connected: accepted";
  auto worker = [&](const std::string& name, std::vector<std::string> dirs) {
    v1::RegisterRequest r;
    r.set_name(name);
    r.set_threads(4);
    for (const std::string& d : dirs) r.add_engine_dirs(d);
    return c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  };
  const std::string games_only = worker("games-only", {"/usr/games"});
  EXPECT_FALSE(Acquire(games_only, "w")) << "/opt/engines is not in its --engine-dir";
  absl::Status refused = c_->SubmitMatch(req, sam).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("/opt/engines/stockfish"), std::string::npos) << refused;
  EXPECT_NE(refused.message().find("/usr/games"), std::string::npos) << refused;
  // A prefix of a directory name is not the directory.
  a->set_path("/usr/gamesX/stockfish");
  EXPECT_EQ(c_->SubmitMatch(req, sam).status().code(), absl::StatusCode::kFailedPrecondition);
  a->set_path("/usr/games/../bin/sh");
  EXPECT_EQ(c_->SubmitMatch(req, sam).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string opt = worker("opt", {"/opt/engines/"});
  std::optional<v1::Job> job = Acquire(opt, "w");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->match().engines(0).path(), "/opt/engines/stockfish");
  a->set_path("/opt/engines/stockfish");
  EXPECT_TRUE(c_->SubmitMatch(req, sam).ok()) << "one connected worker allows it";
}

// Registration: engine directories and limits are bounded; ListWorkers shows what each worker
// said about itself.
TEST_F(CoordinatorTest, WorkersListTheirIsolationDirectoriesAndLimits) {
  v1::RegisterRequest r;
  r.set_name("box");
  r.set_threads(2);
  r.set_isolation("namespaces");
  r.add_engine_dirs("/usr/games");
  r.mutable_engine_limits()->set_memory_mb(2048);
  r.set_perft_path("v3");
  ASSERT_TRUE(c_->Register(r, Caller{"w", v1::ROLE_WORKER}).ok());
  v1::ListWorkersResponse list = c_->ListWorkers({});
  ASSERT_EQ(list.workers_size(), 1);
  const v1::WorkerStatus& w = list.workers(0);
  EXPECT_EQ(w.name(), "box");
  EXPECT_EQ(w.perft_path(), "v3");
  EXPECT_EQ(w.token(), "w");
  EXPECT_EQ(w.isolation(), "namespaces");
  ASSERT_EQ(w.engine_dirs_size(), 1);
  EXPECT_EQ(w.engine_dirs(0), "/usr/games");
  EXPECT_EQ(w.engine_limits().memory_mb(), 2048u);
  EXPECT_TRUE(w.connected());

  v1::RegisterRequest bad = r;
  bad.add_engine_dirs("relative/dir");
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  for (int i = 0; i < 65; ++i) bad.add_engine_dirs("/d" + std::to_string(i));
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.mutable_engine_limits()->set_memory_mb(uint64_t(1) << 40);
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.set_perft_path(std::string(17, 'v'));
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.set_hostname(std::string(257, 'h'));  // compared with the coordinator's host when planning
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c_->ListWorkers({}).workers_size(), 1) << "nothing refused was registered";
}

// A drained worker gets no new job (the one it holds stays leased); undone, it gets work again.
// ListWorkers shows the runs of its leases.
TEST_F(CoordinatorTest, DrainedWorkersGetNoNewJobs) {
  const std::string w = Register("host-a");
  const v1::Run run = Submit(4, 4);
  ASSERT_TRUE(Acquire(w));
  v1::DrainWorkersRequest drain;
  drain.set_name("host-a");
  absl::StatusOr<v1::ListWorkersResponse> drained = c_->DrainWorkers(drain);
  ASSERT_TRUE(drained.ok()) << drained.status();
  ASSERT_EQ(drained->workers_size(), 1);
  EXPECT_TRUE(drained->workers(0).draining());
  ASSERT_EQ(drained->workers(0).leased_runs_size(), 1);
  EXPECT_EQ(drained->workers(0).leased_runs(0), run.id());
  EXPECT_FALSE(Acquire(w)) << "draining: no new lease";
  EXPECT_EQ(c_->GetRun(run.id())->jobs().leased(), 1u) << "its job stays leased";
  drain.set_undo(true);
  ASSERT_TRUE(c_->DrainWorkers(drain).ok());
  EXPECT_TRUE(Acquire(w));
  drain.set_name("nobody");
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kNotFound);
  drain.set_worker_id(w);
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kInvalidArgument)
      << "a name or an id, not both";
  drain.clear_worker_id();
  drain.set_name(std::string(257, 'x'));
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kInvalidArgument);
}

// Scheduling: which run a worker's next lease goes to, with leases held (never completed), so
// that the counts are exactly the scheduler's choices.
class SchedulingTest : public CoordinatorTest {
 protected:
  // A perft(5) run of `jobs` jobs by `owner`.
  uint64_t SubmitAs(const std::string& owner, int priority = 0, uint32_t throughput = 0,
                    uint32_t jobs = 200, v1::Role role = v1::ROLE_SUBMITTER) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(5);
    req.set_target_jobs(jobs);
    req.mutable_scheduling()->set_priority(priority);
    req.mutable_scheduling()->set_throughput(throughput);
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req, Caller{owner, role});
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->id() : 0;
  }
  // Leases `n` jobs to one worker (holding them all) and counts them by run.
  std::map<uint64_t, int> Lease(int n) {
    const std::string w = Register("big", "", "w", 256);
    std::map<uint64_t, int> by_run;
    for (int i = 0; i < n; ++i) {
      std::optional<v1::Job> job = Acquire(w, "w");
      if (!job) break;
      ++by_run[job->run_id()];
    }
    return by_run;
  }
};

// Two runs of equal priority and throughput, submitted one after the other by two people: the
// second does not wait behind the first; the leases alternate.
TEST_F(SchedulingTest, EqualRunsShareTheWorkersFromTheStart) {
  const uint64_t a = SubmitAs("alice"), b = SubmitAs("bob");
  std::map<uint64_t, int> got = Lease(100);
  EXPECT_EQ(got[a], 50);
  EXPECT_EQ(got[b], 50);
}

// The same for two match runs (jobs of game pairs): submitted one after the other by two
// people, their jobs alternate from the first lease on.
TEST_F(SchedulingTest, EqualMatchRunsAlternate) {
  auto submit = [&](const std::string& owner) {
    v1::SubmitMatchRequest req;
    for (const char* name : {"a", "b"}) {
      v1::EngineSpec* e = req.add_engines();
      e->set_name(name);
      e->set_builtin(true);
    }
    req.set_tc("depth=1");
    req.set_games(200);
    req.set_pairs_per_job(1);
    absl::StatusOr<v1::Run> run = c_->SubmitMatch(req, Caller{owner, v1::ROLE_SUBMITTER});
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->id() : 0;
  };
  const uint64_t a = submit("alice"), b = submit("bob");
  const std::string w = Register("big", "", "w", 256);
  int got_a = 0, got_b = 0;
  for (int i = 0; i < 100; ++i) {
    std::optional<v1::Job> job = Acquire(w, "w");
    ASSERT_TRUE(job);
    (job->run_id() == a ? got_a : got_b)++;
    EXPECT_LE(std::abs(got_a - got_b), 1) << "after " << i + 1 << " leases";
  }
  EXPECT_EQ(got_a, 50);
  EXPECT_EQ(got_b, 50);
  EXPECT_NE(a, b);
}

// A run of priority 1 (an admin's) takes every lease while it has jobs ready.
TEST_F(SchedulingTest, HigherPriorityTakesAllWorkers) {
  const uint64_t low = SubmitAs("alice");
  const uint64_t high = SubmitAs("root", 1, 0, 40, v1::ROLE_ADMIN);
  const int total = int(c_->GetRun(high)->jobs().total());
  ASSERT_GT(total, 10);
  std::map<uint64_t, int> got = Lease(total + 20);
  EXPECT_EQ(got[high], total) << "all of its jobs first";
  EXPECT_EQ(got[low], 20) << "then the lower priority";
}

// Throughput 200 against 100 gives 2:1, within one owner's runs and between two owners.
TEST_F(SchedulingTest, ThroughputSetsTheShare) {
  const uint64_t fast = SubmitAs("alice", 0, 200, 200, v1::ROLE_ADMIN),
                 slow = SubmitAs("alice", 0, 100);
  std::map<uint64_t, int> got = Lease(90);
  EXPECT_EQ(got[fast], 60);
  EXPECT_EQ(got[slow], 30);
}

TEST_F(SchedulingTest, ThroughputBetweenOwners) {
  const uint64_t fast = SubmitAs("alice", 0, 200, 200, v1::ROLE_ADMIN),
                 slow = SubmitAs("bob", 0, 100);
  std::map<uint64_t, int> got = Lease(90);
  EXPECT_NEAR(got[fast], 60, 1);
  EXPECT_NEAR(got[slow], 30, 1);
}

// One person's fifty runs weigh like one run: another person's single run still gets half.
TEST_F(SchedulingTest, ManyRunsOfOneOwnerShareOneSlot) {
  std::vector<uint64_t> many;
  for (int i = 0; i < 10; ++i) many.push_back(SubmitAs("mallory", 0, 0, 20));
  const uint64_t single = SubmitAs("alice");
  std::map<uint64_t, int> got = Lease(100);
  EXPECT_EQ(got[single], 50);
  int theirs = 0;
  for (uint64_t id : many) {
    theirs += got[id];
    EXPECT_EQ(got[id], 5) << "mallory's runs share her half evenly";
  }
  EXPECT_EQ(theirs, 50);
}

// Priority above the default needs an admin; bounds are checked; the owner (or an admin) may
// change a run's scheduling, which is stored and outlives a restart.
TEST_F(SchedulingTest, ChangesAreCheckedAndDurable) {
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(3);
  req.mutable_scheduling()->set_priority(1);
  EXPECT_EQ(c_->SubmitPerft(req, Caller{"alice", v1::ROLE_SUBMITTER}).status().code(),
            absl::StatusCode::kPermissionDenied);
  req.mutable_scheduling()->set_priority(-101);
  EXPECT_EQ(c_->SubmitPerft(req, Caller{"alice", v1::ROLE_SUBMITTER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  req.mutable_scheduling()->set_priority(0);
  req.mutable_scheduling()->set_throughput(1001);
  EXPECT_EQ(c_->SubmitPerft(req, Caller{"alice", v1::ROLE_SUBMITTER}).status().code(),
            absl::StatusCode::kInvalidArgument);

  const uint64_t id = SubmitAs("alice", -5, 50);
  v1::SetSchedulingRequest set;
  set.set_run_id(id);
  set.set_throughput(80);
  EXPECT_EQ(c_->SetScheduling(set, Caller{"bob", v1::ROLE_SUBMITTER}).status().code(),
            absl::StatusCode::kPermissionDenied)
      << "not bob's run";
  absl::StatusOr<v1::Run> changed = c_->SetScheduling(set, Caller{"alice", v1::ROLE_SUBMITTER});
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed->scheduling().priority(), -5) << "unset fields keep their value";
  EXPECT_EQ(changed->scheduling().throughput(), 80u);
  // A share above the default takes leases from others' runs: an admin's decision.
  set.set_throughput(300);
  absl::Status above = c_->SetScheduling(set, Caller{"alice", v1::ROLE_SUBMITTER}).status();
  EXPECT_EQ(above.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(above.message().find("only an admin"), std::string::npos) << above;
  set.set_priority(10);
  EXPECT_EQ(c_->SetScheduling(set, Caller{"alice", v1::ROLE_SUBMITTER}).status().code(),
            absl::StatusCode::kPermissionDenied);
  ASSERT_TRUE(c_->SetScheduling(set, Caller{"root", v1::ROLE_ADMIN}).ok());
  v1::SetSchedulingRequest unknown;
  unknown.set_run_id(987654);
  unknown.set_throughput(50);
  EXPECT_EQ(c_->SetScheduling(unknown, Caller{"root", v1::ROLE_ADMIN}).status().code(),
            absl::StatusCode::kNotFound);
  Open();
  absl::StatusOr<v1::Run> reloaded = c_->GetRun(id);
  ASSERT_TRUE(reloaded.ok());
  EXPECT_EQ(reloaded->scheduling().priority(), 10);
  EXPECT_EQ(reloaded->scheduling().throughput(), 300u);
}

// Requirements: a run that needs cpu=v4 and zone=a waits on a v2 worker and on a worker of
// another zone, says why for each, and runs as soon as a worker that has both registers.
// Meanwhile the v2 worker takes the jobs of a run without requirements (it skips the run it
// cannot serve instead of stalling behind it).
class RequirementsTest : public CoordinatorTest {
 protected:
  std::string RegisterWith(const std::string& name, uint32_t cpu_level,
                           std::map<std::string, std::string> labels = {}) {
    v1::RegisterRequest req;
    req.set_name(name);
    req.set_threads(64);
    req.set_cpu_level(cpu_level);
    req.set_memory_bytes(uint64_t(8) << 30);
    req.mutable_labels()->insert(labels.begin(), labels.end());
    absl::StatusOr<v1::RegisterResponse> r = c_->Register(req, Caller{"", v1::ROLE_WORKER});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->worker_id() : "";
  }
  uint64_t SubmitRequiring(const v1::WorkerRequirements& requirements, uint32_t jobs = 8) {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(4);
    req.set_target_jobs(jobs);
    *req.mutable_scheduling()->mutable_requirements() = requirements;
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->id() : 0;
  }
};

TEST_F(RequirementsTest, RunWaitsWithItsReasonUntilAMatchingWorkerRegisters) {
  const std::string old = RegisterWith("old", 2, {{"zone", "a"}});
  const std::string far = RegisterWith("far", 4, {{"zone", "b"}});
  v1::WorkerRequirements needs;
  needs.set_cpu_level(4);
  (*needs.mutable_labels())["zone"] = "a";
  const uint64_t run = SubmitRequiring(needs);
  EXPECT_FALSE(Acquire(old)) << "v2 < v4";
  EXPECT_FALSE(Acquire(far)) << "zone b";
  absl::StatusOr<v1::Run> waiting = c_->GetRun(run);
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->waiting(),
            "no connected worker can take its jobs (2): 'far': label zone=b, the run needs "
            "zone=a; 'old': cpu level v2, the run needs v4");
  EXPECT_EQ(waiting->scheduling().requirements().cpu_level(), 4u);

  // A run without requirements is served by the same workers at once.
  const uint64_t plain = SubmitRequiring({}, 2);
  std::optional<v1::Job> job = Acquire(old);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->run_id(), plain);

  const std::string fit = RegisterWith("fit", 4, {{"zone", "a"}, {"gpu", "none"}});
  job = Acquire(fit);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->run_id(), run);
  EXPECT_EQ(c_->GetRun(run)->waiting(), "") << "it has a lease";

  v1::ListWorkersResponse list = c_->ListWorkers({});
  std::map<std::string, v1::WorkerStatus> by_name;
  for (const v1::WorkerStatus& w : list.workers()) by_name[w.name()] = w;
  EXPECT_EQ(by_name["old"].cpu_level(), 2u);
  EXPECT_EQ(by_name["fit"].labels().at("gpu"), "none");
  EXPECT_EQ(by_name["fit"].memory_bytes(), uint64_t(8) << 30);
}

// The engines' cpu levels raise a match's requirement; with every matching worker busy the run
// says so; with none connected, that.
TEST_F(RequirementsTest, EngineLevelsAndBusyWorkers) {
  v1::SubmitMatchRequest match;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = match.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  match.mutable_engines(1)->set_cpu_level(3);
  match.set_tc("depth=1");
  match.set_games(2);
  match.set_pairs_per_job(1);
  absl::StatusOr<v1::Run> run = c_->SubmitMatch(match);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->scheduling().requirements().cpu_level(), 3u);
  EXPECT_EQ(run->waiting(), "no worker is connected");
  match.mutable_engines(0)->set_cpu_level(5);
  EXPECT_EQ(c_->SubmitMatch(match).status().code(), absl::StatusCode::kInvalidArgument);
  match.mutable_engines(0)->set_cpu_level(0);
  ASSERT_TRUE(c_->CancelRun(run->id(), "test").ok());

  // A single v3 worker of one thread, leased to an older run: the match waits for it.
  v1::RegisterRequest req;
  req.set_name("one");
  req.set_threads(1);
  req.set_cpu_level(3);
  const std::string one = c_->Register(req, Caller{})->worker_id();
  const v1::Run older = Submit(3, 1);
  absl::StatusOr<v1::Run> waits = c_->SubmitMatch(match);
  ASSERT_TRUE(waits.ok()) << waits.status();
  std::optional<v1::Job> job = Acquire(one);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->run_id(), older.id());
  EXPECT_EQ(c_->GetRun(waits->id())->waiting(), "the 1 worker that can take its jobs is busy");
  ASSERT_TRUE(Complete(one, *job).ok());
  job = Acquire(one);
  ASSERT_TRUE(job);
  EXPECT_EQ(job->run_id(), waits->id());
  EXPECT_EQ(c_->GetRun(waits->id())->waiting(), "");
}

// Abuse: requirements and worker declarations out of bounds are refused with the bound named.
TEST_F(RequirementsTest, OutOfBoundsAreRefused) {
  v1::WorkerRequirements needs;
  needs.set_cpu_level(9);
  v1::SubmitPerftRequest req;
  req.mutable_perft()->set_fen(std::string(Position::kStartFen));
  req.mutable_perft()->set_depth(3);
  *req.mutable_scheduling()->mutable_requirements() = needs;
  absl::Status st = c_->SubmitPerft(req).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("cpu level must be 1..4"), absl::string_view::npos) << st;
  needs.set_cpu_level(0);
  (*needs.mutable_labels())["Zone!"] = "a";
  *req.mutable_scheduling()->mutable_requirements() = needs;
  EXPECT_EQ(c_->SubmitPerft(req).status().code(), absl::StatusCode::kInvalidArgument);

  v1::RegisterRequest w;
  w.set_name("w");
  w.set_cpu_level(5);
  EXPECT_EQ(c_->Register(w, Caller{}).status().code(), absl::StatusCode::kInvalidArgument);
  w.set_cpu_level(2);
  for (int i = 0; i < 17; ++i) (*w.mutable_labels())[Cat("k", i)] = "v";
  st = c_->Register(w, Caller{}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("at most 16 labels"), absl::string_view::npos) << st;
  w.clear_labels();
  (*w.mutable_labels())["zone"] = std::string(65, 'x');
  EXPECT_EQ(c_->Register(w, Caller{}).status().code(), absl::StatusCode::kInvalidArgument);
  w.clear_labels();
  (*w.mutable_labels())["zone"] = "a,b=c";
  EXPECT_EQ(c_->Register(w, Caller{}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c_->ListWorkers({}).workers_size(), 0) << "nothing refused was registered";
}

// The CLI's --require text, both ways.
TEST(RequirementsText, ParsesAndPrints) {
  v1::WorkerRequirements r;
  ASSERT_TRUE(ParseRequirements("cpu=v3,memory=8G,threads=4,zone=a,gpu=none", r).ok());
  EXPECT_EQ(r.cpu_level(), 3u);
  EXPECT_EQ(r.memory_bytes(), uint64_t(8) << 30);
  EXPECT_EQ(r.threads(), 4u);
  EXPECT_EQ(RequirementsText(r), "cpu=v3,memory=8589934592,threads=4,gpu=none,zone=a");
  v1::WorkerRequirements bad;
  EXPECT_FALSE(ParseRequirements("cpu=v5", bad).ok());
  EXPECT_FALSE(ParseRequirements("cpu=avx2", bad).ok());
  EXPECT_FALSE(ParseRequirements("memory=lots", bad).ok());
  EXPECT_FALSE(ParseRequirements("memory=99999999T", bad).ok()) << "overflow";
  EXPECT_FALSE(ParseRequirements("=a", bad).ok());
  EXPECT_FALSE(ParseRequirements("zone", bad).ok());
  int level = 0;
  EXPECT_TRUE(ParseCpuLevel("x86-64-v2", level) && level == 2);
  EXPECT_TRUE(ParseCpuLevel("x86-64", level) && level == 1);
  EXPECT_FALSE(ParseCpuLevel("v0", level));
}

// Ratings across runs: the pairings of a match and a tournament combined by engine name give
// the same list as stats::ComputeRatings on the combined games (anchor first, one prior draw
// per pairing); engines chosen by name filter the pairings; an anchor elsewhere moves the zero.
TEST(RateRuns, CombinedPairingsMatchComputeRatings) {
  const stats::Trinomial ab1{.losses = 3, .draws = 5, .wins = 8};
  const stats::Trinomial ab2{.losses = 2, .draws = 2, .wins = 4};
  const stats::Trinomial ac{.losses = 1, .draws = 3, .wins = 6};
  const stats::Trinomial bc{.losses = 4, .draws = 4, .wins = 2};
  const stats::Trinomial ad{.losses = 0, .draws = 1, .wins = 9};
  std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs = {
      {1, {{"v1", "v2", ab1}}},
      {2, {{"v2", "v1", ab2.Reversed()}, {"v1", "v3", ac}, {"v2", "v3", bc}}},
      {3, {{"v1", "other", ad}}},
  };
  v1::GetRatingsRequest req;
  for (const char* e : {"v1", "v2", "v3"}) req.add_engines(e);
  absl::StatusOr<v1::GetRatingsResponse> got = RateRuns(req, runs);
  ASSERT_TRUE(got.ok()) << got.status();
  const stats::Trinomial ab{.losses = ab1.losses + ab2.losses,
                            .draws = ab1.draws + ab2.draws,
                            .wins = ab1.wins + ab2.wins};
  absl::StatusOr<stats::RatingTable> want = stats::ComputeRatings(
      {"v1", "v2", "v3"}, {{0, 1, ab}, {0, 2, ac}, {1, 2, bc}}, {.anchor = 0, .prior_draws = 1});
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->games(), ab.Games() + ac.Games() + bc.Games()) << "run 3's 'other' is not chosen";
  EXPECT_EQ(std::vector<uint64_t>(got->run_ids().begin(), got->run_ids().end()),
            std::vector<uint64_t>({1, 2}));
  ASSERT_EQ(got->standings_size(), 3);
  for (const v1::TournamentStanding& st : got->standings()) {
    const auto it = std::find_if(want->ratings.begin(), want->ratings.end(),
                                 [&](const stats::EngineRating& r) { return r.name == st.name(); });
    ASSERT_NE(it, want->ratings.end()) << st.name();
    EXPECT_NEAR(st.elo(), it->elo, 1e-9) << st.name();
    EXPECT_NEAR(st.elo_error95(), it->error95, 1e-9) << st.name();
    EXPECT_EQ(st.games(), it->games) << st.name();
  }
  EXPECT_EQ(got->anchor(), "v1");

  req.set_anchor("v3");
  absl::StatusOr<v1::GetRatingsResponse> moved = RateRuns(req, runs);
  ASSERT_TRUE(moved.ok()) << moved.status();
  std::map<std::string, double> at_v1, at_v3;
  for (const auto& st : got->standings()) at_v1[st.name()] = st.elo();
  for (const auto& st : moved->standings()) at_v3[st.name()] = st.elo();
  EXPECT_EQ(at_v3["v3"], 0);
  EXPECT_NEAR(at_v3["v1"] - at_v3["v2"], at_v1["v1"] - at_v1["v2"], 1e-6) << "same differences";

  // All engines of all runs when none is named.
  v1::GetRatingsRequest all;
  all.add_run_ids(1);
  absl::StatusOr<v1::GetRatingsResponse> every = RateRuns(all, runs);
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->standings_size(), 4);

  // Abuse: an anchor not rated, an engine that played none of the others, nothing asked.
  req.set_anchor("nobody");
  EXPECT_EQ(RateRuns(req, runs).status().code(), absl::StatusCode::kInvalidArgument);
  req.clear_anchor();
  req.add_engines("v9");
  EXPECT_EQ(RateRuns(req, runs).status().code(), absl::StatusCode::kFailedPrecondition);
  // A name with no game anywhere is named alone, not the engines it could not be rated against.
  v1::GetRatingsRequest typo;
  for (const char* e : {"v1", "nosuch"}) typo.add_engines(e);
  const absl::Status unknown = RateRuns(typo, runs).status();
  EXPECT_NE(unknown.message().find("no finished games of 'nosuch' in these runs"),
            std::string::npos)
      << unknown;
  EXPECT_EQ(unknown.message().find("'v1'"), std::string::npos) << unknown;
  EXPECT_EQ(ValidateRatingsRequest({}).code(), absl::StatusCode::kInvalidArgument);
  v1::GetRatingsRequest huge;
  for (int i = 0; i < 101; ++i) huge.add_engines(Cat("e", i));
  EXPECT_EQ(ValidateRatingsRequest(huge).code(), absl::StatusCode::kInvalidArgument);
}

// GetRatings of runs the coordinator does not have is NOT_FOUND.
TEST_F(CoordinatorTest, RatingsOfAnUnknownRunIsNotFound) {
  v1::GetRatingsRequest req;
  req.add_run_ids(424242);
  EXPECT_EQ(c_->GetRatings(req).status().code(), absl::StatusCode::kNotFound);
  Submit(3, 1);
  v1::GetRatingsRequest perft_only;
  perft_only.add_run_ids(c_->ListRuns({})->runs(0).id());
  EXPECT_EQ(c_->GetRatings(perft_only).status().code(), absl::StatusCode::kFailedPrecondition)
      << "a perft run has no games";
}

// Tokens: bad names, roles, duplicates and malformed headers are refused with their reason;
// a revoked secret no longer authenticates, even after it was cached.
TEST_F(CoordinatorTest, TokenRegistryRefusesWhatItCannotTrust) {
  TokenRegistry& tokens = c_->tokens();
  EXPECT_EQ(tokens.Create("", v1::ROLE_VIEWER).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Create("a b", v1::ROLE_VIEWER).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Create(std::string(65, 'x'), v1::ROLE_VIEWER).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tokens.Create("ok", v1::ROLE_UNSPECIFIED).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> secret = tokens.Create("ok", v1::ROLE_SUBMITTER);
  ASSERT_TRUE(secret.ok());
  EXPECT_EQ(tokens.Create("ok", v1::ROLE_ADMIN).status().code(), absl::StatusCode::kAlreadyExists);
  for (const std::string& bad : {std::string(), *secret, "Basic " + *secret,
                                 "Bearer " + std::string(300, 'a'), std::string("Bearer nope")})
    EXPECT_EQ(tokens.Authenticate(bad).status().code(), absl::StatusCode::kUnauthenticated) << bad;
  absl::StatusOr<Caller> who = tokens.Authenticate("Bearer " + *secret);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->name, "ok");
  EXPECT_EQ(Permit(*who, v1::ROLE_ADMIN).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Permit(*who, v1::ROLE_WORKER).code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Permit(*who, v1::ROLE_VIEWER).ok());
  ASSERT_TRUE(tokens.Revoke("ok").ok());
  EXPECT_EQ(tokens.Authenticate("Bearer " + *secret).status().code(),
            absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(tokens.Revoke("ok").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace arbiter::coordinator

namespace arbiter::coordinator {
namespace {

// A match of two builtin engines with `options` on the first.
v1::SubmitMatchRequest BuiltinMatch(std::map<std::string, std::string> options = {}) {
  v1::SubmitMatchRequest req;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = req.add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  for (const auto& [k, v] : options) (*req.mutable_engines(0)->mutable_options())[k] = v;
  req.set_tc("10+0.1");
  req.set_games(4);
  req.set_pairs_per_job(1);
  return req;
}

// A worker that refuses a job for its engine's bench is flagged (ListWorkers), gets no more of
// the run's jobs while another worker does, and the run shows the refusal; when every connected
// worker refused, the run fails with the reason. A refusal out of bounds is INVALID_ARGUMENT.
TEST_F(CoordinatorTest, BenchRefusalFlagsTheWorkerAndExcludesItFromTheRun) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  v1::SubmitMatchRequest req = BuiltinMatch();
  req.mutable_engines(0)->set_bench(999);
  ASSERT_TRUE(c_->SubmitMatch(req, sam).ok());
  auto worker = [&](const std::string& name) {
    v1::RegisterRequest r;
    r.set_name(name);
    r.set_threads(2);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string bad = worker("bad"), good = worker("good");
  std::optional<v1::Job> job = Acquire(bad, "w-bad");
  ASSERT_TRUE(job);
  v1::ReleaseJobRequest rel;
  rel.set_worker_id(bad);
  rel.set_job_id(job->job_id());
  rel.set_lease_id(job->lease_id());
  v1::EngineRefusal& refusal = *rel.mutable_refusal();
  refusal.set_engine(std::string(65, 'x'));
  EXPECT_EQ(c_->ReleaseJob(rel, Caller{"w-bad", v1::ROLE_WORKER}).code(),
            absl::StatusCode::kInvalidArgument);
  refusal.set_engine("a");
  refusal.set_declared_bench(999);
  refusal.set_measured_bench(555);
  refusal.set_reason("bench signature 555 differs from the declared 999");
  ASSERT_TRUE(c_->ReleaseJob(rel, Caller{"w-bad", v1::ROLE_WORKER}).ok());
  EXPECT_FALSE(Acquire(bad, "w-bad")) << "a worker that refused the run gets none of its jobs";
  ASSERT_TRUE(Acquire(good, "w-good"));
  const v1::ListWorkersResponse listed = c_->ListWorkers({});
  for (const v1::WorkerStatus& w : listed.workers())
    EXPECT_EQ(w.flags_size(), w.name() == "bad" ? 1 : 0) << w.DebugString();
  v1::ListRunsResponse runs = *c_->ListRuns({});
  ASSERT_EQ(runs.runs_size(), 1);
  EXPECT_EQ(runs.runs(0).engines_size(), 0) << "a list carries summaries, not engine reports";
  const v1::Run run = *c_->GetRun(runs.runs(0).id());
  EXPECT_EQ(run.state(), v1::RUN_STATE_RUNNING);
  ASSERT_EQ(run.refusals_size(), 1);
  EXPECT_EQ(run.refusals(0).worker_name(), "bad");
  EXPECT_EQ(run.engines(0).declared_bench(), 999u);
  // The good worker refuses too: nobody is left, the run fails naming the cause.
  std::optional<v1::Job> held = Acquire(good, "w-good");
  ASSERT_TRUE(held);
  rel.set_worker_id(good);
  rel.set_job_id(held->job_id());
  rel.set_lease_id(held->lease_id());
  ASSERT_TRUE(c_->ReleaseJob(rel, Caller{"w-good", v1::ROLE_WORKER}).ok());
  const v1::Run failed = c_->ListRuns({})->runs(0);
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("bench signature 555 differs from the declared 999"),
            std::string::npos)
      << failed.message();
}

// An engine that cannot start or take its options on a worker is a fault, not games: in the
// run's first job it fails the run at once, naming the engine, the worker and its message; after
// a job is done, the first worker's fault only excludes that worker, and the same engine's fault
// on a second worker fails the run.
TEST_F(CoordinatorTest, EngineFaultFailsTheRunAtTheFirstJobOrOnASecondWorker) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  auto worker = [&](const std::string& name) {
    v1::RegisterRequest r;
    r.set_name(name);
    r.set_threads(1);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string a = worker("a"), b = worker("b"), c = worker("c");
  auto fault = [&](const std::string& id, const std::string& name, const v1::Job& job) {
    v1::ReleaseJobRequest rel;
    rel.set_worker_id(id);
    rel.set_job_id(job.job_id());
    rel.set_lease_id(job.lease_id());
    v1::EngineRefusal& refusal = *rel.mutable_refusal();
    refusal.set_engine("a");
    refusal.set_fault(true);
    refusal.set_reason("a: cannot start engine: exec '/usr/games/stokfish': No such file");
    return c_->ReleaseJob(rel, Caller{"w-" + name, v1::ROLE_WORKER});
  };

  const uint64_t first = c_->SubmitMatch(BuiltinMatch(), sam)->id();
  std::optional<v1::Job> job = Acquire(a, "w-a");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(a, "a", *job).ok());
  v1::Run run = *c_->GetRun(first);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'a' failed on worker a in the run's first job: a: cannot "
                               "start engine: exec '/usr/games/stokfish'"),
            std::string::npos)
      << run.message();
  EXPECT_EQ(run.match().result().games(), 0u);

  const uint64_t second = c_->SubmitMatch(BuiltinMatch(), sam)->id();
  job = Acquire(a, "w-a");
  ASSERT_TRUE(job);
  ASSERT_EQ(job->run_id(), second);
  v1::CompleteJobRequest done;
  done.set_worker_id(a);
  done.set_job_id(job->job_id());
  done.set_lease_id(job->lease_id());
  *done.mutable_match() = LosingPairs(*job);
  std::promise<absl::StatusOr<v1::CompleteJobResponse>> p;
  c_->CompleteJob(
      done, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r); },
      Caller{"w-a", v1::ROLE_WORKER});
  ASSERT_TRUE(p.get_future().get().ok());
  job = Acquire(b, "w-b");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(b, "b", *job).ok());
  EXPECT_EQ(c_->GetRun(second)->state(), v1::RUN_STATE_RUNNING) << "one worker's fault";
  EXPECT_FALSE(Acquire(b, "w-b")) << "the faulty worker gets none of the run's jobs";
  job = Acquire(c, "w-c");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(c, "c", *job).ok());
  run = *c_->GetRun(second);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'a' failed on worker c as on worker b"), std::string::npos)
      << run.message();
  EXPECT_EQ(run.match().result().games(), 2u) << "only the played job's games";
}

// Engines' Threads x concurrency never exceed a worker's threads: refused at submit with the
// numbers when no connected worker has enough, and a job whose game needs more threads than a
// worker declared never goes to it.
TEST_F(CoordinatorTest, EngineThreadsNeverOversubscribeAWorker) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  auto worker = [&](const std::string& name, uint32_t threads) {
    v1::RegisterRequest r;
    r.set_name(name);
    r.set_threads(threads);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string small = worker("small", 2);
  absl::StatusOr<v1::Run> refused = c_->SubmitMatch(BuiltinMatch({{"Threads", "4"}}), sam);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("Threads=4 but no connected worker has more than 2"),
            std::string::npos)
      << refused.status();
  v1::SubmitMatchRequest two = BuiltinMatch({{"Threads", "2"}});
  two.set_concurrency(2);
  refused = c_->SubmitMatch(two, sam);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("concurrency 2 x Threads 2 = 4 threads"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(c_->SubmitMatch(BuiltinMatch({{"Threads", "0"}}), sam).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string big = worker("big", 8);
  ASSERT_TRUE(c_->SubmitMatch(BuiltinMatch({{"Threads", "4"}}), sam).ok());
  EXPECT_FALSE(Acquire(small, "w-small")) << "a 4-thread game on a 2-thread worker";
  EXPECT_TRUE(Acquire(big, "w-big"));
}

}  // namespace
}  // namespace arbiter::coordinator

// How a perft run is planned for the workers there are and shared between them: the split's
// depth for workers that share a hash, lanes of jobs for workers with hashes of their own, lanes
// of keys for workers that share the coordinator's cores, and the lanes kept over a restart.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "coordinator/run_handler.h"
#include "engine/perft_lane.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

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
      req.mutable_worker()->set_name(Cat("w", i++));
      req.mutable_worker()->set_hostname(host);
      req.mutable_worker()->set_threads(threads);
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
    more.mutable_worker()->set_name(Cat("more", i));
    more.mutable_worker()->set_hostname("box");
    more.mutable_worker()->set_threads(1);
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
  req.mutable_worker()->set_name("old");
  req.mutable_worker()->set_hostname("box");
  req.mutable_worker()->set_threads(1);
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

}  // namespace
}  // namespace arbiter::coordinator

// The worker reports a job's result on a thread of its own, so that it counts its next job while
// the coordinator makes the last result durable; and never has more than one result on its way.
// Against a scripted WorkService on loopback whose CompleteJob answers only when the test lets it.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "worker/worker.h"

namespace arbiter::worker {
namespace {

// Hands out `jobs` perft(2) jobs of the start position, one at a time; answers the first job's
// CompleteJob only once the second job was leased and `hold` later, recording what the worker
// asked for before that answer.
class ScriptedWork final : public v1::WorkService::Service {
 public:
  ScriptedWork(int jobs, absl::Duration hold) : jobs_(jobs), hold_(hold) {}
  // Jobs of these packed positions instead (the start position's children), one of them bad.
  std::string packed_;
  // And this lane of keys (PerftJob.lane_begin/lane_end).
  uint64_t lane_begin_ = 0, lane_end_ = 0;

  grpc::Status Register(grpc::ServerContext*, const v1::RegisterRequest* req,
                        v1::RegisterResponse* resp) override {
    absl::MutexLock lock(&mu_);
    results_in_flight_ = req->results_in_flight();
    perft_lanes_ = req->perft_lanes();
    resp->set_worker_id("w-1");
    resp->set_heartbeat_seconds(60);
    return grpc::Status::OK;
  }

  grpc::Status AcquireJob(grpc::ServerContext*, const v1::AcquireJobRequest*,
                          v1::AcquireJobResponse* resp) override {
    absl::MutexLock lock(&mu_);
    if (leased_ == jobs_) {
      // Nothing left: a short long-poll, so that Drain() ends the worker soon.
      mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(50));
      return grpc::Status::OK;
    }
    const int id = ++leased_;
    if (id > 1 && !first_answered_) leased_before_answer_.push_back(id);
    v1::Job& job = *resp->mutable_job();
    job.set_job_id(uint64_t(id));
    job.set_run_id(1);
    job.set_lease_id(100 + uint64_t(id));
    job.set_lease_seconds(60);
    v1::PerftJob& perft = *job.mutable_perft();
    perft.set_depth(2);
    perft.set_root_fen(std::string(Position::kStartFen));
    const PackedPosition packed = PackPosition(Position::StartPosition());
    perft.set_packed_positions(packed_.empty() ? std::string(AsBytes(packed)) : packed_);
    perft.set_lane_begin(lane_begin_);
    perft.set_lane_end(lane_end_);
    return grpc::Status::OK;
  }

  grpc::Status ReleaseJob(grpc::ServerContext*, const v1::ReleaseJobRequest* req,
                          v1::ReleaseJobResponse*) override {
    absl::MutexLock lock(&mu_);
    released_.push_back(req->reason());
    return grpc::Status::OK;
  }

  grpc::Status CompleteJob(grpc::ServerContext*, const v1::CompleteJobRequest* req,
                           v1::CompleteJobResponse*) override {
    absl::MutexLock lock(&mu_);
    if (req->job_id() != 1 && !first_answered_)
      completed_before_answer_.push_back(int(req->job_id()));
    completed_.push_back(int(req->job_id()));
    counts_.push_back(req->perft().counts_size() == 1 ? req->perft().counts(0) : 0);
    if (req->job_id() != 1 || jobs_ == 1) return grpc::Status::OK;
    // The first result of several: answered once the next job was leased (a worker that waits for
    // this answer before it leases never gets there: the bound ends the wait), then `hold` longer.
    auto second_leased = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return leased_ >= 2; };
    second_leased_in_time_ =
        mu_.AwaitWithTimeout(absl::Condition(&second_leased), absl::Seconds(20));
    mu_.AwaitWithTimeout(absl::Condition(&stop_), hold_);
    first_answered_ = true;
    return grpc::Status::OK;
  }

  void Stop() {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }

  absl::Mutex mu_;
  const int jobs_;
  const absl::Duration hold_;
  int leased_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool first_answered_ ABSL_GUARDED_BY(mu_) = false;
  bool second_leased_in_time_ ABSL_GUARDED_BY(mu_) = false;
  uint32_t results_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  bool perft_lanes_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int> leased_before_answer_ ABSL_GUARDED_BY(mu_);
  std::vector<int> completed_before_answer_ ABSL_GUARDED_BY(mu_);
  std::vector<int> completed_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> counts_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> released_ ABSL_GUARDED_BY(mu_);
};

// Runs a worker against `work` until it has reported `results` results (or released as many
// jobs), then drains it.
void RunWorker(ScriptedWork& work, size_t results) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&work);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_TRUE(server && port > 0);
  WorkerOptions options;
  options.coordinator = "127.0.0.1:" + std::to_string(port);
  options.sandbox.isolation = match::Isolation::kNone;
  options.wait_seconds = 1;
  Worker worker(options, nullptr);
  std::thread runner([&] { EXPECT_TRUE(worker.Run().ok()); });
  {
    absl::MutexLock lock(&work.mu_);
    auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(work.mu_) {
      return work.completed_.size() + work.released_.size() >= results;
    };
    EXPECT_TRUE(work.mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(60)));
  }
  work.Stop();
  worker.Drain();
  runner.join();
  {
    absl::MutexLock lock(&work.mu_);
    EXPECT_EQ(worker.jobs_completed(), work.completed_.size());
  }
  // Not under the lock: Shutdown waits for handlers still running, which take it.
  server->Shutdown();
}

TEST(WorkerReports, TheNextJobCountsWhileTheLastResultIsOnItsWay) {
  ScriptedWork work(/*jobs=*/2, /*hold=*/absl::ZeroDuration());
  RunWorker(work, 2);
  absl::MutexLock lock(&work.mu_);
  EXPECT_EQ(work.results_in_flight_, 1u) << "the worker declares the result it reports ahead";
  EXPECT_TRUE(work.perft_lanes_) << "the worker declares that it counts lanes of keys";
  EXPECT_TRUE(work.second_leased_in_time_)
      << "the worker leased job 2 only after job 1's result was answered";
  EXPECT_EQ(work.leased_before_answer_, std::vector<int>({2}));
  EXPECT_EQ(work.completed_, std::vector<int>({1, 2}));
  EXPECT_EQ(work.counts_, std::vector<uint64_t>({400, 400}));
}

// The abuse: with job 1's answer held for a while after job 2 was leased, the worker counts job 2
// but neither reports it nor leases job 3 until job 1's result is answered: one result on its
// way, so at most a lease a thread and one more.
TEST(WorkerReports, NoMoreThanOneResultOnItsWay) {
  ScriptedWork work(/*jobs=*/3, /*hold=*/absl::Milliseconds(500));
  RunWorker(work, 3);
  absl::MutexLock lock(&work.mu_);
  EXPECT_TRUE(work.second_leased_in_time_);
  EXPECT_EQ(work.leased_before_answer_, std::vector<int>({2}))
      << "job 3 was leased while job 1's result was still unanswered";
  EXPECT_TRUE(work.completed_before_answer_.empty())
      << "job 2's result was sent while job 1's was still unanswered";
  EXPECT_EQ(work.completed_, std::vector<int>({1, 2, 3}));
}

// The abuse: a job with a bad position among good ones is given back, naming the position, and
// no result is sent for it (its positions are checked as they are counted, not before).
TEST(WorkerReports, AJobWithABadPositionIsReleased) {
  ScriptedWork work(/*jobs=*/1, absl::ZeroDuration());
  Position start = Position::StartPosition();
  MoveList list;
  GenerateLegal(start, list);
  for (Move m : list) {
    UndoInfo undo;
    start.DoMove(m, undo);
    work.packed_ += AsBytes(PackPosition(start));
    start.UndoMove(m, undo);
  }
  work.packed_[7 * kPackedPositionSize + 20] = char(0xee);  // piece code 14 twice
  RunWorker(work, 1);
  absl::MutexLock lock(&work.mu_);
  EXPECT_TRUE(work.completed_.empty());
  ASSERT_EQ(work.released_.size(), 1u);
  EXPECT_EQ(work.released_[0].find("bad position in job: position 7: packed position: bad piece "
                                   "code 14"),
            0u)
      << work.released_[0];
}

// The abuse: a job whose packed positions are torn (not a whole number of positions) is given back
// with the reason, and no result is sent for it.
TEST(WorkerReports, AJobWithTornPositionsIsReleased) {
  ScriptedWork work(/*jobs=*/1, absl::ZeroDuration());
  work.packed_ = std::string(AsBytes(PackPosition(Position::StartPosition()))).substr(1);
  RunWorker(work, 1);
  absl::MutexLock lock(&work.mu_);
  EXPECT_TRUE(work.completed_.empty());
  ASSERT_EQ(work.released_.size(), 1u);
  EXPECT_EQ(work.released_[0],
            "bad position in job: packed positions are 33 bytes, not a multiple of 34");
}

// A job of a lane of keys is counted in its lane: the two halves of the keys add up to the whole.
// The abuse: a lane that is no range of keys is given back naming the lane, with no result.
TEST(WorkerReports, AJobOfALaneCountsItsLaneAndABadLaneIsReleased) {
  uint64_t halves = 0;
  for (const auto& [begin, end] :
       {std::pair{uint64_t{0}, kShardKeyEnd / 2}, std::pair{kShardKeyEnd / 2, kShardKeyEnd}}) {
    ScriptedWork work(/*jobs=*/1, absl::ZeroDuration());
    work.lane_begin_ = begin;
    work.lane_end_ = end;
    RunWorker(work, 1);
    absl::MutexLock lock(&work.mu_);
    ASSERT_EQ(work.counts_.size(), 1u);
    EXPECT_LT(work.counts_[0], 400u) << "lane [" << begin << ", " << end << ") counted whole";
    halves += work.counts_[0];
  }
  EXPECT_EQ(halves, 400u);
  ScriptedWork work(/*jobs=*/1, absl::ZeroDuration());
  work.lane_begin_ = 5;
  work.lane_end_ = 5;
  RunWorker(work, 1);
  absl::MutexLock lock(&work.mu_);
  EXPECT_TRUE(work.completed_.empty());
  ASSERT_EQ(work.released_.size(), 1u);
  EXPECT_EQ(work.released_[0],
            "bad lane in job: lane [5, 5) is not a non-empty range of keys below 2^63");
}

}  // namespace
}  // namespace arbiter::worker

// Heartbeats alone do not hold a job: a perft lease whose heartbeats report no nodes counted for
// CoordinatorOptions::lease_progress_seconds is taken back and its job queued again, and the
// worker is told why; a slow worker whose heartbeats report progress keeps its lease for as long
// as it needs. Match leases likewise, by moves played, for workers that declare they report
// them (RegisterRequest.job_progress). On a simulated clock.
#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "coordinator/coordinator.h"
#include "engine/packed_position.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

constexpr double kLeaseSeconds = 10, kProgressSeconds = 60, kBeatSeconds = 5;

class LeaseProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-progress-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto c = Coordinator::Open(
        {.data_dir = dir_.string(),
         .lease_seconds = kLeaseSeconds,
         .clock = [this] { return SteadyClock::time_point(std::chrono::nanoseconds(ns_.load())); },
         .lease_progress_seconds = kProgressSeconds},
        nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    c_ = std::move(*c);
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(3);
    req.set_target_jobs(1);
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    ASSERT_TRUE(run.ok()) << run.status();
    run_id_ = run->id();
  }
  void TearDown() override {
    c_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Advance(double seconds) {
    ns_ += int64_t(seconds * 1e9);
    c_->Tick();
  }
  std::string Reg(const std::string& token, bool job_progress = true) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(token);
    r.mutable_worker()->set_threads(1);
    r.set_job_progress(job_progress);
    return c_->Register(r, Caller{token, v1::ROLE_WORKER})->worker_id();
  }
  // The run's one job is queued: the answer comes at once.
  std::optional<v1::Job> Acquire(const std::string& worker, const std::string& token) {
    v1::AcquireJobRequest req;
    req.set_worker_id(worker);
    req.set_wait_seconds(1);
    std::promise<std::optional<v1::Job>> p;
    const uint64_t waiting = c_->AcquireJob(
        req,
        [&](absl::StatusOr<v1::AcquireJobResponse> r) {
          p.set_value(r.ok() && r->has_job() ? std::optional<v1::Job>(r->job()) : std::nullopt);
        },
        Caller{token, v1::ROLE_WORKER});
    if (waiting != 0) {
      EXPECT_TRUE(c_->CancelAcquire(waiting));
      return std::nullopt;
    }
    return p.get_future().get();
  }
  v1::HeartbeatResponse Beat(const std::string& worker, const std::string& token,
                             const v1::Job& job, uint64_t progress) {
    v1::HeartbeatRequest hb;
    hb.set_worker_id(worker);
    hb.set_job_id(job.job_id());
    hb.set_lease_id(job.lease_id());
    hb.set_progress(progress);
    absl::StatusOr<v1::HeartbeatResponse> r = c_->Heartbeat(hb, Caller{token, v1::ROLE_WORKER});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : v1::HeartbeatResponse();
  }
  absl::Status Complete(const std::string& worker, const std::string& token, const v1::Job& job) {
    v1::CompleteJobRequest req;
    req.set_worker_id(worker);
    req.set_job_id(job.job_id());
    req.set_lease_id(job.lease_id());
    for (size_t i = 0; i < job.perft().packed_positions().size() / kPackedPositionSize; ++i)
      req.mutable_perft()->add_counts(1);
    std::promise<absl::Status> p;
    c_->CompleteJob(
        req, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r.status()); },
        Caller{token, v1::ROLE_WORKER});
    return p.get_future().get();
  }
  uint64_t Leased() { return c_->GetRun(run_id_)->jobs().leased(); }
  // The perft run cancelled, a match of one job (two pairs of built-in engines) in its place.
  void SwitchToMatch() {
    ASSERT_TRUE(c_->CancelRun(run_id_, "").ok());
    absl::StatusOr<v1::Run> run = c_->SubmitMatch(BuiltinMatch(4, 2));
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_EQ(run->jobs().total(), 1u);
    run_id_ = run->id();
  }
  // Heartbeats every kBeatSeconds for `seconds`, `progress(beat)` reported at each; false when
  // one of them was told to stop.
  bool BeatFor(const std::string& worker, const std::string& token, const v1::Job& job,
               double seconds, const std::function<uint64_t(uint64_t)>& progress) {
    for (uint64_t beat = 1; beat * kBeatSeconds <= seconds; ++beat) {
      Advance(kBeatSeconds);
      if (Beat(worker, token, job, progress(beat)).stop()) return false;
    }
    return true;
  }

  std::filesystem::path dir_;
  std::atomic<int64_t> ns_{int64_t(1e12)};
  std::unique_ptr<Coordinator> c_;
  uint64_t run_id_ = 0;
};

TEST_F(LeaseProgressTest, ALeaseHeldByHeartbeatsAloneIsTakenBack) {
  const std::string idle = Reg("idle"), other = Reg("other");
  const std::optional<v1::Job> job = Acquire(idle, "idle");
  ASSERT_TRUE(job);
  // Heartbeats keep the lease from expiring, but they report no node counted.
  double beaten = 0;
  while (beaten + kBeatSeconds < kProgressSeconds) {
    Advance(kBeatSeconds);
    beaten += kBeatSeconds;
    ASSERT_FALSE(Beat(idle, "idle", *job, 0).stop()) << "taken back early, at " << beaten << " s";
  }
  EXPECT_EQ(Leased(), 1u);
  Advance(2 * kBeatSeconds);  // past the bound, within the lease the last heartbeat extended
  EXPECT_EQ(Leased(), 0u) << "the lease showed no progress and was not taken back";
  const v1::HeartbeatResponse told = Beat(idle, "idle", *job, 0);
  EXPECT_TRUE(told.stop());
  EXPECT_NE(told.reason().find("no progress"), std::string::npos) << told.reason();
  EXPECT_EQ(Complete(idle, "idle", *job).code(), absl::StatusCode::kFailedPrecondition)
      << "a result of the lease taken back counts";
  const std::optional<v1::Job> again = Acquire(other, "other");
  ASSERT_TRUE(again) << "the job was not queued again";
  EXPECT_EQ(again->job_id(), job->job_id());
}

TEST_F(LeaseProgressTest, ASlowWorkerThatReportsProgressKeepsItsLease) {
  const std::string slow = Reg("slow"), other = Reg("other");
  const std::optional<v1::Job> job = Acquire(slow, "slow");
  ASSERT_TRUE(job);
  // Ten times the bound, a little more counted at each heartbeat.
  for (uint64_t beat = 1; beat * kBeatSeconds <= 10 * kProgressSeconds; ++beat) {
    Advance(kBeatSeconds);
    ASSERT_FALSE(Beat(slow, "slow", *job, 1000 * beat).stop()) << "at " << beat * kBeatSeconds;
  }
  EXPECT_EQ(Leased(), 1u);
  EXPECT_FALSE(Acquire(other, "other")) << "the job went to another worker meanwhile";
  EXPECT_TRUE(Complete(slow, "slow", *job).ok());
}

TEST_F(LeaseProgressTest, AMatchLeaseWithoutMovesPlayedIsTakenBack) {
  SwitchToMatch();
  const std::string idle = Reg("idle"), other = Reg("other");
  const std::optional<v1::Job> job = Acquire(idle, "idle");
  ASSERT_TRUE(job && job->has_match());
  ASSERT_TRUE(BeatFor(idle, "idle", *job, kProgressSeconds - kBeatSeconds, [](uint64_t) {
    return 0;
  })) << "taken back before the bound";
  EXPECT_EQ(Leased(), 1u);
  Advance(2 * kBeatSeconds);
  EXPECT_EQ(Leased(), 0u) << "a match lease without a move played was not taken back";
  const v1::HeartbeatResponse told = Beat(idle, "idle", *job, 0);
  EXPECT_TRUE(told.stop());
  EXPECT_NE(told.reason().find("no progress"), std::string::npos) << told.reason();
  const std::optional<v1::Job> again = Acquire(other, "other");
  ASSERT_TRUE(again) << "the job was not queued again";
  EXPECT_EQ(again->job_id(), job->job_id());
}

TEST_F(LeaseProgressTest, ASlowMatchWorkerPlayingMovesKeepsItsLease) {
  SwitchToMatch();
  const std::string slow = Reg("slow"), other = Reg("other");
  const std::optional<v1::Job> job = Acquire(slow, "slow");
  ASSERT_TRUE(job);
  // Ten times the bound, one move more at each heartbeat.
  EXPECT_TRUE(
      BeatFor(slow, "slow", *job, 10 * kProgressSeconds, [](uint64_t beat) { return beat; }));
  EXPECT_EQ(Leased(), 1u);
  EXPECT_FALSE(Acquire(other, "other")) << "the job went to another worker meanwhile";
}

// A worker older than RegisterRequest.job_progress sends 0 for a match job: its lease is held by
// heartbeats alone, as before, rather than taken back from every old worker after the bound.
TEST_F(LeaseProgressTest, AnOlderWorkersMatchLeaseIsHeldByHeartbeats) {
  SwitchToMatch();
  const std::string old = Reg("old", /*job_progress=*/false);
  const std::optional<v1::Job> job = Acquire(old, "old");
  ASSERT_TRUE(job);
  EXPECT_TRUE(BeatFor(old, "old", *job, 10 * kProgressSeconds, [](uint64_t) { return 0; }));
  EXPECT_EQ(Leased(), 1u);
}

}  // namespace
}  // namespace arbiter::coordinator

// A worker caught lying on a perft count: its token is quarantined (its workers take no leases,
// the leases they hold are taken back, their results are refused), its results in unfinished
// runs are voided and counted again by others, and all of it survives a restart until an admin
// lifts it. The use (honest workers finish exact) and the abuse (a forger that first earns trust)
// side by side.
#include <filesystem>
#include <functional>
#include <future>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordinator/coordinator.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "gtest/gtest.h"

namespace arbiter::coordinator {
namespace {

constexpr uint64_t kPerft5 = 4865609;
// With a quarter of the jobs recounted, the job ids of these runs let the forger get forgeries
// accepted before one of them is recounted (the tests check that it did).
constexpr int kHonestResults = 3;

class QuarantineTest : public ::testing::Test {
 protected:
  struct W {
    std::string id, token;
    // Honest on its first kHonestResults results (the first is recounted), then adds 7 to the
    // counts of every job nobody counted before (a recount it is given would give it away).
    bool liar = false;
    int results = 0, forged = 0;
  };

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("arbiter-quarantine-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Open();
  }
  void TearDown() override {
    c_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Leases outlast the test (none expires while it runs); a quarter of the jobs are recounted,
  // so that a forger that earned trust is caught after a few accepted forgeries.
  void Open() {
    c_.reset();
    auto c = Coordinator::Open(
        {.data_dir = dir_.string(), .lease_seconds = 3600, .perft_spot_check_percent = 25},
        nullptr);
    ASSERT_TRUE(c.ok()) << c.status();
    c_ = std::move(*c);
  }
  W Reg(const std::string& name, const std::string& token, bool liar = false) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(4);
    absl::StatusOr<v1::RegisterResponse> reg = c_->Register(r, Caller{token, v1::ROLE_WORKER});
    EXPECT_TRUE(reg.ok()) << reg.status();
    return {reg.ok() ? reg->worker_id() : "", token, liar};
  }
  uint64_t Submit() {
    v1::SubmitPerftRequest req;
    req.mutable_perft()->set_fen(std::string(Position::kStartFen));
    req.mutable_perft()->set_depth(5);
    req.set_target_jobs(64);
    absl::StatusOr<v1::Run> run = c_->SubmitPerft(req);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? run->id() : 0;
  }
  absl::StatusOr<v1::AcquireJobResponse> Acquire(const W& w) {
    v1::AcquireJobRequest req;
    req.set_worker_id(w.id);
    req.set_wait_seconds(0.05);
    std::promise<absl::StatusOr<v1::AcquireJobResponse>> p;
    c_->AcquireJob(
        req, [&](absl::StatusOr<v1::AcquireJobResponse> r) { p.set_value(r); },
        Caller{w.token, v1::ROLE_WORKER});
    return p.get_future().get();
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
  absl::Status Complete(W& w, const v1::Job& job) {
    std::vector<uint64_t> counts = Count(job);
    if (w.liar && w.results >= kHonestResults && !counted_.contains(job.job_id())) {
      for (uint64_t& c : counts) c += 7;
      ++w.forged;
    }
    ++w.results;
    counted_.insert(job.job_id());
    v1::CompleteJobRequest req;
    req.set_worker_id(w.id);
    req.set_job_id(job.job_id());
    req.set_lease_id(job.lease_id());
    for (uint64_t c : counts) req.mutable_perft()->add_counts(c);
    std::promise<absl::Status> p;
    c_->CompleteJob(
        req, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r.status()); },
        Caller{w.token, v1::ROLE_WORKER});
    return p.get_future().get();
  }
  // The workers take and answer jobs in turn until the run ends, nobody gets a job, or `stop`.
  v1::Run Play(
      uint64_t run_id, std::vector<W*> workers,
      const std::function<bool()>& stop = [] { return false; }) {
    for (int round = 0; round < 2000; ++round) {
      bool any = false;
      for (W* w : workers) {
        absl::StatusOr<v1::AcquireJobResponse> got = Acquire(*w);
        if (!got.ok() || !got->has_job()) continue;
        any = true;
        (void)Complete(*w, got->job());
        if (stop()) return *c_->GetRun(run_id);
      }
      v1::Run r = *c_->GetRun(run_id);
      if (r.state() == v1::RUN_STATE_SUCCEEDED || r.state() == v1::RUN_STATE_FAILED || !any)
        return r;
    }
    return *c_->GetRun(run_id);
  }
  // The "N jobs counted again" of a run's message (0 when it says none).
  static int CountedAgain(const v1::Run& run) {
    const size_t at = run.message().find(" jobs counted again");
    if (at == std::string::npos) return 0;
    size_t begin = at;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(run.message()[begin - 1]))) --begin;
    return std::stoi(run.message().substr(begin, at - begin));
  }
  bool Quarantined(const std::string& token) {
    for (const StoredQuarantine& q : c_->Quarantines())
      if (q.name == token) return true;
    return false;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Coordinator> c_;
  std::set<uint64_t> counted_;  // jobs some worker counted
};

// Honest workers beside each other: nobody is quarantined and the total is exact (the use).
TEST_F(QuarantineTest, HonestWorkersAreNeverQuarantined) {
  W a = Reg("a", "honest-1"), b = Reg("b", "honest-2"), c = Reg("c", "honest-3");
  const v1::Run run = Play(Submit(), {&a, &b, &c});
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), kPerft5);
  EXPECT_TRUE(c_->Quarantines().empty());
  EXPECT_EQ(run.message(), "");
}

// The abuse: the forger's first result is honest and vouches for it, then it forges; forgeries
// are accepted until one is recounted. Caught, every result of its token is voided and counted
// again, its idle second worker gets no lease, and the lease that worker held is taken back.
TEST_F(QuarantineTest, AForgerThatEarnedTrustHasItsResultsCountedAgainWhenCaught) {
  W a = Reg("honest-a", "honest-1"), b = Reg("honest-b", "honest-2");
  W forger = Reg("forger", "forger", /*liar=*/true);
  W second = Reg("forger-2", "forger");
  const uint64_t run_id = Submit();
  absl::StatusOr<v1::AcquireJobResponse> held = Acquire(second);
  ASSERT_TRUE(held.ok() && held->has_job()) << held.status();

  const v1::Run run = Play(run_id, {&a, &b, &forger});
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), kPerft5) << "a forged count was kept";
  EXPECT_TRUE(Quarantined("forger"));
  EXPECT_NE(run.message().find("token 'forger' quarantined"), std::string::npos) << run.message();
  // Caught at its first forgery that was recounted: the ones before it were accepted, and went
  // back to the queue with its results nobody recounted.
  EXPECT_GE(forger.forged, 2) << "caught at once: the test shows nothing about trust earned";
  EXPECT_GE(CountedAgain(run), forger.forged - 1) << run.message();

  // The second worker of the token: its lease was taken back, its result is refused, its
  // heartbeat says stop, and it gets no new lease.
  EXPECT_EQ(Complete(second, held->job()).code(), absl::StatusCode::kPermissionDenied);
  v1::HeartbeatRequest hb;
  hb.set_worker_id(second.id);
  hb.set_job_id(held->job().job_id());
  hb.set_lease_id(held->job().lease_id());
  absl::StatusOr<v1::HeartbeatResponse> beat = c_->Heartbeat(hb, Caller{"forger"});
  ASSERT_TRUE(beat.ok()) << beat.status();
  EXPECT_TRUE(beat->stop());
  EXPECT_NE(beat->reason().find("quarantined"), std::string::npos) << beat->reason();
  Submit();
  absl::StatusOr<v1::AcquireJobResponse> refused = Acquire(second);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("quarantined"), std::string::npos) << refused.status();
  // `arbiter workers` says why, on every worker of the token.
  int shown = 0;
  const v1::ListWorkersResponse workers = c_->ListWorkers({});
  for (const v1::WorkerStatus& w : workers.workers()) {
    if (w.token() == "forger") {
      EXPECT_NE(w.quarantine().find("otherwise than the majority"), std::string::npos)
          << w.quarantine();
      ++shown;
    } else {
      EXPECT_EQ(w.quarantine(), "") << w.worker().name();
    }
  }
  EXPECT_EQ(shown, 2);
}

// The quarantine and the voided results are stored: a restart after the forger was caught, with
// its jobs not yet counted again, neither lets its token back in nor counts its results; an admin
// lifts the quarantine.
TEST_F(QuarantineTest, TheQuarantineSurvivesARestartUntilAnAdminLiftsIt) {
  W a = Reg("honest-a", "honest-1"), b = Reg("honest-b", "honest-2");
  W forger = Reg("forger", "forger", /*liar=*/true);
  const uint64_t run_id = Submit();
  const v1::Run caught = Play(run_id, {&a, &b, &forger}, [&] { return Quarantined("forger"); });
  ASSERT_EQ(caught.state(), v1::RUN_STATE_RUNNING) << caught.message();
  ASSERT_GE(forger.forged, 2) << "caught at once: nothing to void";
  ASSERT_GE(CountedAgain(caught), forger.forged - 1) << caught.message();

  Open();
  EXPECT_TRUE(Quarantined("forger"));
  W again = Reg("forger", "forger", /*liar=*/true);
  again.results = kHonestResults;  // lies from its first result on
  EXPECT_EQ(Acquire(again).status().code(), absl::StatusCode::kPermissionDenied);
  W a2 = Reg("honest-a", "honest-1"), b2 = Reg("honest-b", "honest-2");
  const v1::Run run = Play(run_id, {&again, &a2, &b2});
  ASSERT_EQ(run.state(), v1::RUN_STATE_SUCCEEDED) << run.message();
  EXPECT_EQ(run.perft().result().nodes(), kPerft5) << "a voided result came back at the restart";
  EXPECT_EQ(again.results, kHonestResults) << "the quarantined token counted after the restart";

  EXPECT_TRUE(c_->LiftQuarantine("forger").ok());
  EXPECT_FALSE(Quarantined("forger"));
  EXPECT_EQ(c_->LiftQuarantine("forger").code(), absl::StatusCode::kNotFound);
  Submit();
  absl::StatusOr<v1::AcquireJobResponse> leased = Acquire(again);
  ASSERT_TRUE(leased.ok()) << leased.status();
  EXPECT_TRUE(leased->has_job());
  Open();
  EXPECT_FALSE(Quarantined("forger")) << "the lift is stored";
}

}  // namespace
}  // namespace arbiter::coordinator

// Perft results are checked, not believed: spot checks and --verify recount a worker's results on
// another worker (another token or host), flag the odd one out, and refuse impossible counts.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

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
    r.mutable_worker()->set_name(token);
    r.mutable_worker()->set_threads(4);
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
    if (w.worker().name() == "forger") flagged = w.flags_size() > 0;
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
    req.mutable_worker()->set_name(name);
    req.mutable_worker()->set_threads(64);
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

}  // namespace
}  // namespace arbiter::coordinator

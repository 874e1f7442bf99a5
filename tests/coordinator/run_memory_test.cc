// What a match run costs the coordinator: each job is kept and stored as its slice of pairs, not
// a copy of the run's engines, rules and book; a finished run forgets the jobs nobody leased; and
// one token's queued jobs are bounded.
#include <string>

#include "coordinator/match_run.h"
#include "coordinator/store.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

class RunMemoryTest : public CoordinatorTest {
 protected:
  // A match of `games` games, 2 pairs a job, with a 4 KB event and a book of three openings.
  static v1::SubmitMatchRequest Match(uint64_t games) {
    v1::SubmitMatchRequest req;
    for (const char* name : {"a", "b"}) {
      v1::EngineSpec* e = req.mutable_settings()->add_engines();
      e->set_name(name);
      e->set_builtin(true);
    }
    req.mutable_settings()->set_tc("depth=1");
    req.set_games(games);
    req.mutable_settings()->set_pairs_per_job(2);
    req.mutable_settings()->mutable_rules()->set_event(std::string(4096, 'e'));
    req.mutable_settings()->set_openings(
        "# three openings\n"
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n"
        "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n"
        "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2\n");
    return req;
  }
  static bool Same(const google::protobuf::Message& a, const google::protobuf::Message& b) {
    return google::protobuf::util::MessageDifferencer::Equals(a, b);
  }

  const Caller alice_{"alice", v1::ROLE_SUBMITTER};
};

TEST_F(RunMemoryTest, AJobIsStoredAsItsSliceAndLeasedWhole) {
  const v1::SubmitMatchRequest req = Match(2000);
  absl::StatusOr<v1::Run> run = c_->SubmitMatch(req, alice_);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->match().request().settings().openings().empty())
      << "the status carries the book's summary";
  EXPECT_EQ(run->match().book().positions(), 3u);
  // The worker gets what a whole plan would have given it: engines, rules, its own openings.
  const std::vector<v1::MatchJob> whole = PlanMatchJobs(req);
  const std::string w = Register("w", "", "t", 256);
  for (int i = 0; i < 3; ++i) {
    std::optional<v1::Job> job = Acquire(w, "t");
    ASSERT_TRUE(job);
    const uint64_t index = job->match().first_pair() / 2;
    ASSERT_LT(index, whole.size());
    EXPECT_TRUE(Same(job->match(), whole[index])) << job->match().ShortDebugString();
    EXPECT_EQ(job->match().rules().event().size(), 4096u);
  }
  // The store holds each job as its slice: a few bytes, not the 4 KB event.
  c_.reset();
  auto store = Store::Open(dir_.string());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<StoredJob>> jobs = (*store)->LoadJobs(run->id());
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 500u);
  for (const StoredJob& j : *jobs) ASSERT_LT(j.spec.size(), 32u);
}

// A database whose match jobs were stored whole (engines, rules and openings in every row) resumes
// with the same jobs.
TEST_F(RunMemoryTest, JobsStoredWholeResumeAsTheirSlices) {
  c_.reset();
  const v1::SubmitMatchRequest req = Match(40);
  const std::vector<v1::MatchJob> whole = PlanMatchJobs(req);
  {
    auto store = Store::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    StoredRun stored;
    stored.kind = v1::RUN_KIND_MATCH;
    stored.state = v1::RUN_STATE_QUEUED;
    stored.owner = "alice";
    store::v1::StoredMatchRun spec;
    *spec.mutable_request() = req;
    stored.spec = spec.SerializeAsString();
    std::vector<StoredJob> jobs;
    for (const v1::MatchJob& work : whole) {
      store::v1::StoredMatchJob job;
      *job.mutable_work() = work;
      jobs.push_back({.spec = job.SerializeAsString()});
    }
    ASSERT_TRUE((*store)->CreateRun(stored, jobs).ok());
  }
  OpenWith({});
  const std::string w = Register("w", "", "t", 256);
  std::set<uint64_t> seen;
  while (std::optional<v1::Job> job = Acquire(w, "t")) {
    const uint64_t index = job->match().first_pair() / 2;
    ASSERT_LT(index, whole.size());
    EXPECT_TRUE(Same(job->match(), whole[index]));
    seen.insert(index);
  }
  EXPECT_EQ(seen.size(), whole.size());
}

TEST_F(RunMemoryTest, AFinishedRunForgetsTheJobsNobodyLeased) {
  absl::StatusOr<v1::Run> run = c_->SubmitMatch(Match(20000), alice_);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(c_->JobsInMemory(), 5000u);
  const std::string w = Register("w", "", "t", 256);
  std::optional<v1::Job> leased = Acquire(w, "t");
  ASSERT_TRUE(leased);
  ASSERT_TRUE(c_->CancelRun(run->id(), "", alice_).ok());
  EXPECT_EQ(c_->JobsInMemory(), 1u) << "only the leased job, which its worker may still ask about";
  absl::StatusOr<v1::Run> after = c_->GetRun(run->id());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->jobs().total(), 5000u);
  EXPECT_EQ(after->jobs().cancelled(), 5000u);
}

TEST_F(RunMemoryTest, OneTokensQueuedJobsAreBounded) {
  OpenWith({.max_queued_jobs = 1000});
  absl::StatusOr<v1::Run> first = c_->SubmitMatch(Match(2000), alice_);  // 500 jobs
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(c_->SubmitMatch(Match(2000), alice_).ok());
  absl::StatusOr<v1::Run> third = c_->SubmitMatch(Match(8), alice_);
  EXPECT_EQ(third.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(third.status().message().find("1000 jobs queued"), std::string::npos) << third.status();
  EXPECT_TRUE(c_->SubmitMatch(Match(2000), Caller{"bob", v1::ROLE_SUBMITTER}).ok())
      << "another token has its own bound";
  EXPECT_TRUE(c_->SubmitMatch(Match(8), Caller{"root", v1::ROLE_ADMIN}).ok())
      << "admins are not bounded";
  ASSERT_TRUE(c_->CancelRun(first->id(), "", alice_).ok());
  EXPECT_TRUE(c_->SubmitMatch(Match(8), alice_).ok()) << "a finished run frees its jobs";
}

}  // namespace
}  // namespace arbiter::coordinator

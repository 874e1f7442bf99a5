// Revoking a token ends what it holds open: its run watches and its workers' long polls fail at
// once, and a token created again under the same name does not inherit its workers.
#include <future>
#include <string>

#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

class RevocationTest : public CoordinatorTest {
 protected:
  // A new token of `role` as its calls would carry it.
  Caller Token(const std::string& name, v1::Role role) {
    absl::StatusOr<std::string> secret = c_->tokens().Create(name, role);
    EXPECT_TRUE(secret.ok()) << secret.status();
    absl::StatusOr<Caller> who = c_->tokens().Authenticate("Bearer " + *secret);
    EXPECT_TRUE(who.ok()) << who.status();
    return *who;
  }
  // A match no worker of these tests may take (it needs a label none declares).
  uint64_t SubmitUnservable(const Caller& who) {
    v1::SubmitMatchRequest req;
    for (const char* name : {"a", "b"}) {
      v1::EngineSpec* e = req.mutable_settings()->add_engines();
      e->set_name(name);
      e->set_builtin(true);
    }
    req.mutable_settings()->set_tc("depth=1");
    req.set_games(4);
    (*req.mutable_settings()
          ->mutable_scheduling()
          ->mutable_requirements()
          ->mutable_labels())["pool"] = "elsewhere";
    absl::StatusOr<v1::Run> run = c_->SubmitMatch(req, who);
    EXPECT_TRUE(run.ok()) << run.status();
    return run->id();
  }
  std::string RegisterAs(const Caller& who) {
    v1::RegisterRequest req;
    req.mutable_worker()->set_name("w");
    req.mutable_worker()->set_threads(2);
    absl::StatusOr<v1::RegisterResponse> r = c_->Register(req, who);
    EXPECT_TRUE(r.ok()) << r.status();
    return r->worker_id();
  }
};

TEST_F(RevocationTest, RevokingATokenEndsItsWatchesAndLongPollsAtOnce) {
  const Caller submitter = Token("sub", v1::ROLE_SUBMITTER);
  const Caller viewer = Token("viewer", v1::ROLE_VIEWER);
  const Caller other = Token("other", v1::ROLE_VIEWER);
  const Caller worker = Token("wk", v1::ROLE_WORKER);
  const uint64_t run_id = SubmitUnservable(submitter);
  uint64_t version = 0;  // the run's version now: a first watch answers at once with it
  EXPECT_EQ(c_->WatchRun(run_id, 0, [&](absl::StatusOr<v1::Run>, uint64_t v) { version = v; }), 0u);
  ASSERT_GT(version, 0u);

  std::promise<absl::Status> viewer_watch, other_watch, poll;
  const uint64_t watch = c_->WatchRun(
      run_id, version,
      [&](absl::StatusOr<v1::Run> r, uint64_t) { viewer_watch.set_value(r.status()); }, "viewer");
  const uint64_t kept = c_->WatchRun(
      run_id, version,
      [&](absl::StatusOr<v1::Run> r, uint64_t) { other_watch.set_value(r.status()); }, "other");
  ASSERT_NE(watch, 0u) << "the run has not changed: the watch waits";
  ASSERT_NE(kept, 0u);
  const std::string worker_id = RegisterAs(worker);
  v1::AcquireJobRequest acquire;
  acquire.set_worker_id(worker_id);
  acquire.set_wait_seconds(60);
  ASSERT_NE(
      c_->AcquireJob(
          acquire, [&](absl::StatusOr<v1::AcquireJobResponse> r) { poll.set_value(r.status()); },
          worker),
      0u)
      << "no job is for it: the long poll waits";

  ASSERT_TRUE(c_->RevokeToken("viewer").ok());
  ASSERT_TRUE(c_->RevokeToken("wk").ok());
  // Both answered within the revocation call, not at the long poll's 60 s deadline.
  auto watched = viewer_watch.get_future();
  auto polled = poll.get_future();
  ASSERT_EQ(watched.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  ASSERT_EQ(polled.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(watched.get().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(polled.get().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(c_->tokens().Live(viewer));
  EXPECT_TRUE(c_->tokens().Live(other));
  // Another token's watch goes on.
  EXPECT_TRUE(c_->CancelWatch(kept));
  // A watch asked for under the revoked name afterwards is refused at once.
  std::promise<absl::Status> late;
  EXPECT_EQ(c_->WatchRun(
                run_id, version,
                [&](absl::StatusOr<v1::Run> r, uint64_t) { late.set_value(r.status()); }, "viewer"),
            0u);
  EXPECT_EQ(late.get_future().get().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(c_->RevokeToken("viewer").code(), absl::StatusCode::kNotFound);
}

TEST_F(RevocationTest, ATokenCreatedAgainUnderTheNameDoesNotInheritItsWorkers) {
  const Caller first = Token("wk", v1::ROLE_WORKER);
  const std::string worker_id = RegisterAs(first);
  ASSERT_TRUE(c_->RevokeToken("wk").ok());
  const Caller second = Token("wk", v1::ROLE_WORKER);
  ASSERT_NE(first.token_hash, second.token_hash);
  EXPECT_FALSE(c_->tokens().Live(first));
  EXPECT_TRUE(c_->tokens().Live(second));
  v1::AcquireJobRequest acquire;
  acquire.set_worker_id(worker_id);
  acquire.set_wait_seconds(0);
  std::promise<absl::Status> got;
  c_->AcquireJob(
      acquire, [&](absl::StatusOr<v1::AcquireJobResponse> r) { got.set_value(r.status()); },
      second);
  EXPECT_EQ(got.get_future().get().code(), absl::StatusCode::kPermissionDenied)
      << "the old worker id belongs to no token now";
  // Its own registration works as before.
  EXPECT_FALSE(RegisterAs(second).empty());
}

}  // namespace
}  // namespace arbiter::coordinator

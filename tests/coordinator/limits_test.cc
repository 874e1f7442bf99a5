// What one client may do: submissions checked and bounded, worker ids bound to their token,
// leases capped by declared threads, per-token limits, owners, and the token registry.
#include <limits>
#include <string>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

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
  big.mutable_worker()->set_threads(100'000);
  absl::StatusOr<v1::RegisterResponse> refused = c_->Register(big, Caller{"t", v1::ROLE_WORKER});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("at most 256"), std::string::npos) << refused.status();
  big.mutable_worker()->set_threads(256);
  EXPECT_TRUE(c_->Register(big, Caller{"t", v1::ROLE_WORKER}).ok());
}

// One token registers at most kMaxWorkersPerToken workers at once: a flood stops there.
TEST_F(CoordinatorTest, OneTokenRegistersABoundedNumberOfWorkers) {
  v1::RegisterRequest r;
  r.mutable_worker()->set_threads(1);
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
  reg.mutable_worker()->set_name("pipelined");
  reg.mutable_worker()->set_threads(1);
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
    v1::EngineSpec* e = match.mutable_settings()->add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  match.mutable_settings()->set_tc("10+0.1");
  match.set_games(4'294'967'294ull);
  refused(c_->SubmitMatch(match), "games must be at most");
  match.set_games(uint64_t(1) << 33);
  refused(c_->SubmitMatch(match), "games must be at most");
  match.set_games(10);
  match.mutable_settings()->set_tc("abc");
  refused(c_->SubmitMatch(match), "tc 'abc'");
  match.mutable_settings()->set_tc("0+0");
  refused(c_->SubmitMatch(match), "no time at all");
  match.mutable_settings()->set_tc("10+0.1");
  match.mutable_sprt()->set_elo0(0);
  match.mutable_sprt()->set_elo1(std::numeric_limits<double>::infinity());
  match.mutable_sprt()->set_alpha(0.05);
  match.mutable_sprt()->set_beta(0.05);
  refused(c_->SubmitMatch(match), "finite");
  match.clear_sprt();
  match.mutable_settings()->mutable_engines(0)->mutable_options()->insert(
      {"X", std::string(5000, 'x')});
  refused(c_->SubmitMatch(match), "at most 1024 bytes");
  match.mutable_settings()->mutable_engines(0)->clear_options();
  // Newlines would forge log lines and PGN tags, or inject commands into the engine's input.
  match.mutable_settings()->mutable_engines(0)->set_name("a\n[info] run 1: succeeded");
  refused(c_->SubmitMatch(match), "control characters");
  match.mutable_settings()->mutable_engines(0)->set_name("a");
  match.mutable_settings()->mutable_rules()->set_event("x\"]\n[Result \"1-0");
  refused(c_->SubmitMatch(match), "rules.event");
  match.mutable_settings()->mutable_rules()->set_event(std::string(5000, 'e'));
  refused(c_->SubmitMatch(match), "rules.event");
  match.mutable_settings()->mutable_rules()->clear_event();
  v1::RegisterRequest worker;
  worker.mutable_worker()->set_name("w\r\nforged");
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

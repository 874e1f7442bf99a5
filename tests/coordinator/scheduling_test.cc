// Scheduling: which run a worker's next lease goes to (priority, throughput, owners' shares), and
// requirements: a run waits, saying why, until a worker that meets them is there.
#include <map>
#include <string>

#include "base/cpu.h"
#include "base/strings.h"
#include "gtest/gtest.h"
#include "proto/requirements.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

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
      v1::EngineSpec* e = req.mutable_settings()->add_engines();
      e->set_name(name);
      e->set_builtin(true);
    }
    req.mutable_settings()->set_tc("depth=1");
    req.set_games(200);
    req.mutable_settings()->set_pairs_per_job(1);
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
    req.mutable_worker()->set_name(name);
    req.mutable_worker()->set_threads(64);
    req.mutable_worker()->set_cpu_level(cpu_level);
    req.mutable_worker()->set_memory_bytes(uint64_t(8) << 30);
    req.mutable_worker()->mutable_labels()->insert(labels.begin(), labels.end());
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
  for (const v1::WorkerStatus& w : list.workers()) by_name[w.worker().name()] = w;
  EXPECT_EQ(by_name["old"].worker().cpu_level(), 2u);
  EXPECT_EQ(by_name["fit"].worker().labels().at("gpu"), "none");
  EXPECT_EQ(by_name["fit"].worker().memory_bytes(), uint64_t(8) << 30);
}

// The engines' cpu levels raise a match's requirement; with every matching worker busy the run
// says so; with none connected, that.
TEST_F(RequirementsTest, EngineLevelsAndBusyWorkers) {
  v1::SubmitMatchRequest match;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = match.mutable_settings()->add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  match.mutable_settings()->mutable_engines(1)->set_cpu_level(3);
  match.mutable_settings()->set_tc("depth=1");
  match.set_games(2);
  match.mutable_settings()->set_pairs_per_job(1);
  absl::StatusOr<v1::Run> run = c_->SubmitMatch(match);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->scheduling().requirements().cpu_level(), 3u);
  EXPECT_EQ(run->waiting(), "no worker is connected");
  match.mutable_settings()->mutable_engines(0)->set_cpu_level(5);
  EXPECT_EQ(c_->SubmitMatch(match).status().code(), absl::StatusCode::kInvalidArgument);
  match.mutable_settings()->mutable_engines(0)->set_cpu_level(0);
  ASSERT_TRUE(c_->CancelRun(run->id(), "test").ok());

  // A single v3 worker of one thread, leased to an older run: the match waits for it.
  v1::RegisterRequest req;
  req.mutable_worker()->set_name("one");
  req.mutable_worker()->set_threads(1);
  req.mutable_worker()->set_cpu_level(3);
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
  w.mutable_worker()->set_name("w");
  w.mutable_worker()->set_cpu_level(5);
  EXPECT_EQ(c_->Register(w, Caller{}).status().code(), absl::StatusCode::kInvalidArgument);
  w.mutable_worker()->set_cpu_level(2);
  for (int i = 0; i < 17; ++i) (*w.mutable_worker()->mutable_labels())[Cat("k", i)] = "v";
  st = c_->Register(w, Caller{}).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("at most 16 labels"), absl::string_view::npos) << st;
  w.mutable_worker()->clear_labels();
  (*w.mutable_worker()->mutable_labels())["zone"] = std::string(65, 'x');
  EXPECT_EQ(c_->Register(w, Caller{}).status().code(), absl::StatusCode::kInvalidArgument);
  w.mutable_worker()->clear_labels();
  (*w.mutable_worker()->mutable_labels())["zone"] = "a,b=c";
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

}  // namespace
}  // namespace arbiter::coordinator

// Leases in simulated time (expiry, heartbeats), a run's end told to its watchers, its gauges,
// cancellation, and the results a restart from the SQLite store keeps.
#include <algorithm>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

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

// A round robin's results survive a restart, every pairing is played once, and the ratings and
// PGN cover all of them.
TEST_F(CoordinatorTest, TournamentResumesAfterRestartAndRatesEveryEngine) {
  v1::SubmitTournamentRequest req;
  for (const char* name : {"a", "b", "c"}) {
    v1::EngineSpec* e = req.mutable_settings()->add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  req.mutable_settings()->set_tc("depth=3");
  req.set_games_per_pairing(4);
  req.mutable_settings()->set_pairs_per_job(2);
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
    EXPECT_EQ(g.end(), v1::GAME_END_NORMAL);
    EXPECT_TRUE(g.game_result() == v1::GAME_RESULT_WHITE_WINS ||
                g.game_result() == v1::GAME_RESULT_BLACK_WINS)
        << g.game_result();
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

}  // namespace
}  // namespace arbiter::coordinator

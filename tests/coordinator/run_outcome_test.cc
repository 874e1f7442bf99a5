// A run's verdict apart from its state (an SPRT that accepted H0 is a rejected patch, not a
// success), and a worker's speed from all its recent perft jobs.
#include "coordinator/run_outcome.h"

#include "coordinator/worker_registry.h"
#include "gtest/gtest.h"
#include "match/stats_report.h"
#include "match/summary.h"
#include "proto/run_states.h"

namespace arbiter::coordinator {
namespace {

v1::Run Sprt(v1::RunState state, v1::SprtDecision decision, double llr) {
  v1::Run run;
  run.set_state(state);
  v1::SprtReport* s = run.mutable_match()->mutable_result()->mutable_stats()->mutable_sprt();
  s->set_llr(llr);
  s->set_lower_bound(-2.94);
  s->set_upper_bound(2.94);
  s->set_decision(decision);
  run.mutable_match()->mutable_result()->set_games(176);
  return run;
}

TEST(RunOutcome, AnSprtThatAcceptedH0IsARejectedPatch) {
  const v1::RunOutcome o =
      OutcomeOf(Sprt(v1::RUN_STATE_SUCCEEDED, v1::SPRT_DECISION_ACCEPT_H0, -2.97));
  EXPECT_EQ(o.verdict(), v1::RUN_VERDICT_FAILED);
  EXPECT_EQ(o.hypothesis(), "H0");
  EXPECT_EQ(o.summary(), "rejected: H0 (LLR -2.97 <= -2.94)");
  EXPECT_EQ(VerdictWord(o), "rejected");
  EXPECT_EQ(RunVerdictName(o.verdict()), "failed");
}

TEST(RunOutcome, AnSprtThatAcceptedH1Passed) {
  const v1::RunOutcome o =
      OutcomeOf(Sprt(v1::RUN_STATE_SUCCEEDED, v1::SPRT_DECISION_ACCEPT_H1, 3.0));
  EXPECT_EQ(o.verdict(), v1::RUN_VERDICT_PASSED);
  EXPECT_EQ(o.hypothesis(), "H1");
  EXPECT_EQ(VerdictWord(o), "accepted");
}

TEST(RunOutcome, AnUndecidedSprtIsPendingWhileItRunsAndInconclusiveWhenCancelled) {
  EXPECT_EQ(OutcomeOf(Sprt(v1::RUN_STATE_RUNNING, v1::SPRT_DECISION_CONTINUE, 1)).verdict(),
            v1::RUN_VERDICT_PENDING);
  const v1::RunOutcome o = OutcomeOf(Sprt(v1::RUN_STATE_CANCELLED, v1::SPRT_DECISION_CONTINUE, 1));
  EXPECT_EQ(o.verdict(), v1::RUN_VERDICT_INCONCLUSIVE);
  EXPECT_EQ(o.summary(), "inconclusive: LLR 1.00 in (-2.94, 2.94) after 176 games");
  EXPECT_EQ(OutcomeOf(Sprt(v1::RUN_STATE_FAILED, v1::SPRT_DECISION_CONTINUE, 1)).verdict(),
            v1::RUN_VERDICT_NONE);
}

TEST(RunOutcome, AMovegenCheckWithFailingPositionsFailedEvenWhileRunning) {
  v1::Run run;
  run.set_state(v1::RUN_STATE_RUNNING);
  v1::MovegenCheckResult* r = run.mutable_movegen_check()->mutable_result();
  r->set_positions(200);
  r->set_positions_checked(50);
  r->set_positions_clean(39);
  v1::RunOutcome o = OutcomeOf(run);
  EXPECT_EQ(o.verdict(), v1::RUN_VERDICT_FAILED);
  EXPECT_EQ(o.failing(), 11u);
  EXPECT_EQ(o.summary(), "failed: 11 of 200 positions failing");
  r->set_positions_checked(200);
  r->set_positions_clean(200);
  EXPECT_EQ(OutcomeOf(run).verdict(), v1::RUN_VERDICT_PENDING);
  run.set_state(v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(OutcomeOf(run).verdict(), v1::RUN_VERDICT_PASSED);
}

TEST(RunOutcome, AVerifiedPerftIsExactOrAMismatch) {
  v1::Run run;
  run.set_state(v1::RUN_STATE_SUCCEEDED);
  run.mutable_perft()->mutable_request()->set_verify(true);
  run.mutable_perft()->mutable_result()->set_nodes_decimal("197281");
  EXPECT_EQ(OutcomeOf(run).summary(), "exact: verified by two workers, 197281 nodes");
  run.mutable_perft()->add_disagreements();
  v1::RunOutcome o = OutcomeOf(run);
  EXPECT_EQ(o.verdict(), v1::RUN_VERDICT_FAILED);
  EXPECT_EQ(VerdictWord(o), "mismatch");
  run.mutable_perft()->mutable_request()->set_verify(false);
  run.mutable_perft()->clear_disagreements();
  EXPECT_EQ(OutcomeOf(run).verdict(), v1::RUN_VERDICT_MEASURED);
}

TEST(RunOutcome, StateWordsSayHowARunRanAndItsVerdict) {
  v1::Run run = Sprt(v1::RUN_STATE_SUCCEEDED, v1::SPRT_DECISION_ACCEPT_H0, -3);
  *run.mutable_outcome() = OutcomeOf(run);
  EXPECT_EQ(RunStatusWords(run), "finished, rejected");
  run.set_state(v1::RUN_STATE_RUNNING);
  EXPECT_EQ(RunStatusWords(run), "running");
}

// The draw ratio is drawn games over games; the pentanomial's share of 1-1 pairs is named apart.
TEST(DrawRatio, IsDrawsOverGames) {
  const v1::StatsReport r =
      match::MakeStatsReport(stats::Trinomial{.losses = 2, .draws = 3, .wins = 7}, nullptr);
  EXPECT_DOUBLE_EQ(r.game_draw_ratio(), 0.25);
  match::MatchSummary s;
  s.trinomial = {.losses = 2, .draws = 3, .wins = 7};
  s.games = 12;
  s.pentanomial.counts[1] = 1;  // 1/2-1 1/2, 1 1/2-1/2 and 2-0 pairs, no 1-1 pair:
  s.pentanomial.counts[3] = 4;  // a pair draw ratio of 0
  s.pentanomial.counts[4] = 1;
  const v1::MatchResult m = match::ToMatchResult(s, std::nullopt);
  EXPECT_DOUBLE_EQ(m.stats().game_draw_ratio(), 0.25);
  EXPECT_DOUBLE_EQ(m.stats().draw_ratio(), 0.0);
}

TEST(WorkerSpeed, IsItsCountedNodesOverItsOwnTimeNotItsLastJob) {
  SteadyClock::time_point now{};
  WorkerRegistry registry(std::chrono::seconds(30), [&] { return now; });
  WorkerInfo* w = registry.Find(registry.Register({}));
  ASSERT_NE(w, nullptr);
  registry.NoteWork(*w, 2e6, 1.0, 0);
  now += std::chrono::seconds(1);
  registry.NoteWork(*w, 1e6, 0.001, 0);  // answered by the shared hash table at once
  EXPECT_NEAR(w->PerftNodesPerSecond(), 3e6 / 1.001, 1);
  now += std::chrono::minutes(6);  // the first two leave the window with the next job
  registry.NoteWork(*w, 1e6, 0.5, 0);
  EXPECT_NEAR(w->PerftNodesPerSecond(), 2e6, 1);
}

}  // namespace
}  // namespace arbiter::coordinator

// The match's wire forms: every game end, result and side reads back as itself; the rules a
// CLI sends are the settings a worker applies.
#include "match/wire.h"

#include <gtest/gtest.h>

#include "match/stats_report.h"
#include "proto/arbiter/v1/work_service.pb.h"

namespace arbiter::match {
namespace {

TEST(Wire, GameEndsResultsAndSidesRoundTrip) {
  for (GameEnd end : {GameEnd::kNormal, GameEnd::kTimeForfeit, GameEnd::kIllegalMove,
                      GameEnd::kDisconnect, GameEnd::kStall, GameEnd::kAdjudication}) {
    v1::ReportedGame g;
    g.set_end(GameEndToProto(end));
    v1::ReportedGame back;
    ASSERT_TRUE(back.ParseFromString(g.SerializeAsString()));
    EXPECT_EQ(GameEndFromProto(back.end()), end) << GameEndName(end);
  }
  EXPECT_EQ(GameEndToProto(GameEnd::kAborted), v1::GAME_END_UNSPECIFIED) << "never reported";
  EXPECT_EQ(GameEndFromProto(v1::GAME_END_UNSPECIFIED), std::nullopt);
  EXPECT_EQ(GameEndFromProto(v1::GameEnd(99)), std::nullopt) << "a newer worker's end";
  for (GameResult r : {GameResult::kWhiteWins, GameResult::kBlackWins, GameResult::kDraw})
    EXPECT_EQ(GameResultFromProto(GameResultToProto(r)), r);
  EXPECT_EQ(GameResultFromProto(v1::GAME_RESULT_UNSPECIFIED), std::nullopt);
  EXPECT_EQ(GameResultText(v1::GAME_RESULT_BLACK_WINS), "0-1");
  EXPECT_EQ(GameResultText(v1::GAME_RESULT_DRAW), "1/2-1/2");
  for (Color c : {kWhite, kBlack}) EXPECT_EQ(SideFromProto(SideToProto(c)), c);
  EXPECT_EQ(SideFromProto(v1::SIDE_UNSPECIFIED), std::nullopt);
}

TEST(Wire, FaultsCountOnlyFaultEnds) {
  FaultCounts f;
  for (GameEnd end :
       {GameEnd::kNormal, GameEnd::kTimeForfeit, GameEnd::kIllegalMove, GameEnd::kDisconnect,
        GameEnd::kStall, GameEnd::kAdjudication, GameEnd::kStall})
    f.Add(end);
  const v1::EngineFaults p = FaultsToProto(f, "x");
  EXPECT_EQ(p.name(), "x");
  EXPECT_EQ(p.time_losses(), 1u);
  EXPECT_EQ(p.illegal_moves(), 1u);
  EXPECT_EQ(p.disconnects(), 1u);
  EXPECT_EQ(p.stalls(), 2u);
}

// What `arbiter match --coordinator` sends is what the worker plays with.
TEST(Wire, RulesRoundTrip) {
  MatchOptions o;
  o.settings.margin = Millis(75);
  o.settings.stop_grace = Millis(300);
  o.settings.no_clock_timeout = Millis(5000);
  o.timeouts.handshake = Millis(2500);
  o.settings.adjudication = {.draw_move_number = 40,
                             .draw_move_count = 8,
                             .draw_score = 10,
                             .resign_move_count = 3,
                             .resign_score = 600,
                             .max_moves = 200};
  o.chess960 = true;
  v1::EngineLimits limits;
  limits.set_memory_mb(512);
  const v1::GameRules rules = RulesToProto(o, "ev", limits);
  EXPECT_EQ(rules.event(), "ev");
  EXPECT_TRUE(rules.chess960());
  EXPECT_EQ(rules.engine_limits().memory_mb(), 512u);
  GameSettings settings;
  EngineTimeouts timeouts;
  ApplyRules(rules, settings, timeouts);
  EXPECT_EQ(settings.margin, Millis(75));
  EXPECT_EQ(settings.stop_grace, Millis(300));
  EXPECT_EQ(settings.no_clock_timeout, Millis(5000));
  EXPECT_EQ(timeouts.handshake, Millis(2500));
  EXPECT_EQ(timeouts.ready, Millis(2500));
  EXPECT_EQ(settings.adjudication.draw_move_number, 40);
  EXPECT_EQ(settings.adjudication.resign_score, 600);
  EXPECT_EQ(settings.adjudication.max_moves, 200);
  // Fields a run leaves unset keep the worker's defaults.
  GameSettings defaults;
  EngineTimeouts default_timeouts;
  ApplyRules(v1::GameRules(), defaults, default_timeouts);
  EXPECT_EQ(defaults.margin, GameSettings().margin);
  EXPECT_EQ(default_timeouts.handshake, EngineTimeouts().handshake);
}

TEST(Wire, SprtSpecRoundTrip) {
  const stats::SprtParams p{
      .elo0 = -1, .elo1 = 3, .alpha = 0.1, .beta = 0.02, .model = stats::SprtModel::kLogistic};
  const stats::SprtParams back = SprtParamsOf(SprtSpecOf(p));
  EXPECT_EQ(back.elo0, p.elo0);
  EXPECT_EQ(back.elo1, p.elo1);
  EXPECT_EQ(back.alpha, p.alpha);
  EXPECT_EQ(back.beta, p.beta);
  EXPECT_EQ(back.model, p.model);
  EXPECT_EQ(SprtParamsOf(v1::SprtSpec()).model, stats::SprtModel::kNormalized);
}

}  // namespace
}  // namespace arbiter::match

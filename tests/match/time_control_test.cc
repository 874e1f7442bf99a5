#include "match/time_control.h"

#include <gtest/gtest.h>

namespace arbiter::match {
namespace {

TimeControl Tc(std::string_view s) {
  absl::StatusOr<TimeControl> tc = ParseTimeControl(s);
  EXPECT_TRUE(tc.ok()) << s << ": " << tc.status();
  return tc.value_or(TimeControl{});
}

class RoundTrip : public testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(RoundTrip, ParsesAndPrints) {
  auto [text, pgn] = GetParam();
  TimeControl tc = Tc(text);
  EXPECT_EQ(tc.ToString(), text);
  EXPECT_EQ(tc.ToPgn(), pgn);
}

INSTANTIATE_TEST_SUITE_P(
    AllForms, RoundTrip,
    testing::Values(std::pair{"40/7200:20/3600:1800", "40/7200:20/3600:1800"},
                    std::pair{"300", "300"}, std::pair{"10+0.1", "10+0.1"},
                    std::pair{"10+0.1b", "?"}, std::pair{"10+0.1d", "?"},
                    std::pair{"0.2+0.002", "0.2+0.002"}, std::pair{"40/60+1", "40/60+1"},
                    std::pair{"40/60+1:30+1", "40/60+1:30+1"},
                    std::pair{"40/60+0:30+1", "40/60+0:30+1"}, std::pair{"40/60+2b:30+1b", "?"},
                    std::pair{"*60", "*60"}, std::pair{"movetime=1", "?"},
                    std::pair{"movetime=60,forfeit=2", "?"}, std::pair{"depth=8", "-"},
                    std::pair{"nodes=100000", "-"}));

TEST(ParseTimeControl, RejectsBadInputWithReasons) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "empty"},
      {"abc", "not a time"},
      {"-5", "not a time"},
      {"10+x", "increment"},
      {"1800:40/7200", "period 1 has no move count"},
      {"0/60", "not a move count"},
      {"10+1:20/5+2", "no move count"},
      {"40/60+1:30+2b", "same kind"},
      {"40/60+1d:30+2b", "same kind"},
      {"*0", "sandclock"},
      {"*60+1", "sandclock"},
      {"movetime=0", "positive"},
      {"depth=0", "depth"},
      {"nodes=-3", "nodes"},
      {"forfeit=2", "needs movetime"},
      {"depth=3,forfeit=2", "only to movetime"},
      {"speed=3", "unknown key"},
      {"0", "no time"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<TimeControl> tc = ParseTimeControl(c.text);
    ASSERT_FALSE(tc.ok()) << c.text;
    EXPECT_NE(tc.status().message().find(c.says), std::string::npos)
        << c.text << " -> " << tc.status();
  }
}

// The PGN says the clock that is applied: an increment on the last period only is every
// period's, per-period increments are kept, nothing is rewritten into another control.
TEST(ParseTimeControl, IncrementsArePerPeriodAndTheTagSaysWhichApply) {
  TimeControl legacy = Tc("40/60:30+1");
  ASSERT_EQ(legacy.periods.size(), 2u);
  EXPECT_EQ(legacy.periods[0].increment, Millis(1000));
  EXPECT_EQ(legacy.periods[1].increment, Millis(1000));
  EXPECT_EQ(legacy.ToPgn(), "40/60+1:30+1");
  EXPECT_EQ(legacy.ToString(), "40/60+1:30+1");

  TimeControl first_only = Tc("40/60+1:30");
  EXPECT_EQ(first_only.periods[0].increment, Millis(1000));
  EXPECT_EQ(first_only.periods[1].increment, Millis(0));
  EXPECT_EQ(first_only.ToPgn(), "40/60+1:30+0");
  EXPECT_EQ(first_only.ToString(), "40/60+1:30+0");

  TimeControl second_only = Tc("40/60+0:30+1");
  EXPECT_EQ(second_only.periods[0].increment, Millis(0));
  EXPECT_EQ(second_only.periods[1].increment, Millis(1000));
  EXPECT_EQ(Tc("40/60+1:20/30+0.5:15").ToPgn(), "40/60+1:20/30+0.5:15+0");
}

// Bronstein, simple delay and a fixed time per move cannot be read as Fischer from the PGN:
// TimeControl is the standard's "?" and ArbiterTimeControl has the exact control.
TEST(ParseTimeControl, PgnNeverWritesADelayOrMoveTimeAsFischer) {
  EXPECT_EQ(Tc("10+0.2").PgnExtension(), "");
  EXPECT_EQ(Tc("40/60:30").PgnExtension(), "");
  EXPECT_EQ(Tc("*60").PgnExtension(), "");
  EXPECT_EQ(Tc("10+0.2b").PgnExtension(), "10+0.2b");
  EXPECT_EQ(Tc("10+0.2d").PgnExtension(), "10+0.2d");
  EXPECT_EQ(Tc("movetime=0.2").PgnExtension(), "movetime=0.2");
  EXPECT_EQ(Tc("depth=8").PgnExtension(), "depth=8");
  EXPECT_NE(Tc("10+0.2b").ToPgn(), Tc("10+0.2").ToPgn());
  EXPECT_NE(Tc("10+0.2d").ToPgn(), Tc("10+0.2").ToPgn());
}

const Millis kNoMargin{0};

TEST(Clock, EachPeriodAddsItsOwnIncrement) {
  Clock c(Tc("1/1+0.5:1/2+0.1:3"));
  EXPECT_EQ(c.ForGo().increment, Millis(500));
  c.Finish(Millis(200), kNoMargin);  // 800 + 500, then period 2's 2000
  EXPECT_EQ(c.Remaining(), Millis(3300));
  EXPECT_EQ(c.ForGo().increment, Millis(100));
  c.Finish(Millis(300), kNoMargin);  // 3000 + 100, then the last period's 3000 (no increment)
  EXPECT_EQ(c.Remaining(), Millis(6100));
  EXPECT_EQ(c.ForGo().increment, Millis(0));
  c.Finish(Millis(100), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(6000));
}

TEST(Clock, SandclockPassesTheTimeUsedToTheOpponent) {
  Clock white(Tc("*1")), black(Tc("*1"));
  white.Finish(Millis(300), kNoMargin);
  black.CreditOpponentTime(Millis(300));
  EXPECT_EQ(white.Remaining(), Millis(700));
  EXPECT_EQ(black.Remaining(), Millis(1300));
  EXPECT_EQ(black.ForGo().increment, Millis(0));
  EXPECT_TRUE(white.Finish(Millis(701), kNoMargin).flag_fell);
  Clock fischer(Tc("1+0.1"));
  fischer.CreditOpponentTime(Millis(300));  // only a glass fills
  EXPECT_EQ(fischer.Remaining(), Millis(1000));
}

TEST(Clock, SuddenDeathFlagsAfterTheTimeIsUsed) {
  Clock c(Tc("1"));
  EXPECT_EQ(c.ForGo().time, Millis(1000));
  EXPECT_EQ(c.ForGo().movestogo, 0);
  EXPECT_FALSE(c.Finish(Millis(600), kNoMargin).flag_fell);
  EXPECT_EQ(c.Remaining(), Millis(400));
  MoveVerdict v = c.Finish(Millis(450), kNoMargin);
  EXPECT_TRUE(v.flag_fell);
  EXPECT_EQ(v.overrun, Millis(50));
}

TEST(Clock, MarginForgivesSmallOverruns) {
  Clock c(Tc("1"));
  EXPECT_FALSE(c.Finish(Millis(1020), Millis(30)).flag_fell);
  EXPECT_EQ(c.Remaining(), Millis(0));
  EXPECT_TRUE(c.Finish(Millis(31), Millis(30)).flag_fell);
}

TEST(Clock, PeriodsAddTimeAndCarryOver) {
  Clock c(Tc("2/0.1:1/0.05:0.03"));
  EXPECT_EQ(c.ForGo().movestogo, 2);
  c.Finish(Millis(10), kNoMargin);
  EXPECT_EQ(c.ForGo().movestogo, 1);
  c.Finish(Millis(20), kNoMargin);  // period 1 done: 70 left + 50
  EXPECT_EQ(c.Remaining(), Millis(120));
  EXPECT_EQ(c.ForGo().movestogo, 1);
  c.Finish(Millis(100), kNoMargin);  // period 2 done: 20 left + 30
  EXPECT_EQ(c.Remaining(), Millis(50));
  EXPECT_EQ(c.ForGo().movestogo, 0);  // the rest of the game
  c.Finish(Millis(10), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(40));
}

TEST(Clock, LastPeriodWithMovesRepeats) {
  Clock c(Tc("2/0.1"));
  c.Finish(Millis(30), kNoMargin);
  c.Finish(Millis(30), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(140));
  EXPECT_EQ(c.ForGo().movestogo, 2);
}

TEST(Clock, FischerAddsTheIncrementAfterEachMove) {
  Clock c(Tc("1+0.1"));
  EXPECT_EQ(c.ForGo().increment, Millis(100));
  c.Finish(Millis(300), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(800));
  c.Finish(Millis(0), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(900));
  // No increment once the flag has fallen.
  EXPECT_TRUE(c.Finish(Millis(950), kNoMargin).flag_fell);
}

TEST(Clock, BronsteinGivesBackTheTimeUsedUpToTheDelay) {
  Clock c(Tc("1+0.1b"));
  EXPECT_EQ(c.ForGo().increment, Millis(100));  // the delay is sent as increment
  c.Finish(Millis(60), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(1000));
  c.Finish(Millis(300), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(800));
  EXPECT_EQ(c.Allowance(), Millis(800));
  EXPECT_TRUE(c.Finish(Millis(801), kNoMargin).flag_fell);
}

TEST(Clock, SimpleDelayStartsTheMainClockAfterTheDelay) {
  Clock c(Tc("1+0.1d"));
  EXPECT_EQ(c.Allowance(), Millis(1100));
  c.Finish(Millis(60), kNoMargin);  // inside the delay: nothing charged, unused delay lost
  EXPECT_EQ(c.Remaining(), Millis(1000));
  c.Finish(Millis(300), kNoMargin);
  EXPECT_EQ(c.Remaining(), Millis(800));
  EXPECT_FALSE(c.Finish(Millis(900), kNoMargin).flag_fell);  // 100 delay + 800 main
  EXPECT_EQ(c.Remaining(), Millis(0));
  EXPECT_TRUE(c.Finish(Millis(101), kNoMargin).flag_fell);
}

TEST(Clock, MoveTimeLimitLosesOnTheFirstOverrun) {
  Clock c(Tc("movetime=0.5"));
  EXPECT_EQ(c.Allowance(), Millis(500));
  EXPECT_FALSE(c.Finish(Millis(500), kNoMargin).flag_fell);
  MoveVerdict v = c.Finish(Millis(520), Millis(10));
  EXPECT_TRUE(v.flag_fell);
  EXPECT_EQ(v.overrun, Millis(20));
}

TEST(Clock, OnlinePerMoveLimitAutoMovesThenForfeits) {
  Clock c(Tc("movetime=60,forfeit=2"));
  MoveVerdict v = c.Finish(Millis(61000), kNoMargin);
  EXPECT_TRUE(v.expired);
  EXPECT_FALSE(v.flag_fell);
  EXPECT_FALSE(c.Finish(Millis(1000), kNoMargin).expired);  // the streak is broken
  EXPECT_TRUE(c.Finish(Millis(61000), kNoMargin).expired);
  v = c.Finish(Millis(61000), kNoMargin);
  EXPECT_TRUE(v.flag_fell);
  EXPECT_EQ(v.overrun, Millis(1000));
}

TEST(Clock, DepthAndNodesHaveNoClock) {
  for (const char* s : {"depth=8", "nodes=1000"}) {
    Clock c(Tc(s));
    EXPECT_FALSE(c.tc().HasClock());
    EXPECT_FALSE(c.Finish(Millis(100000), kNoMargin).flag_fell);
  }
}

// Fair clocks: every time of a control scales, depth and nodes do not, nothing drops to 0.
TEST(ScaleTimeControl, ScalesEveryTime) {
  auto scaled = [](const char* tc, double f) {
    return ScaleTimeControl(*ParseTimeControl(tc), f).ToString();
  };
  EXPECT_EQ(scaled("10+0.1", 2), "20+0.2");
  EXPECT_EQ(scaled("10+0.1", 0.5), "5+0.05");
  EXPECT_EQ(scaled("40/7200:20/3600:1800", 0.5), "40/3600:20/1800:900");
  EXPECT_EQ(scaled("10+0.1b", 1.5), "15+0.15b");
  EXPECT_EQ(scaled("movetime=1", 0.25), "movetime=0.25");
  EXPECT_EQ(scaled("depth=8", 3), "depth=8");
  EXPECT_EQ(scaled("nodes=1000", 3), "nodes=1000");
  EXPECT_EQ(scaled("0.001+0", 0.01), "0.001");
  EXPECT_EQ(ScaleTimeControl(*ParseTimeControl("10+0.1"), 1.25).ToPgn(), "12.5+0.125");
}

}  // namespace
}  // namespace arbiter::match

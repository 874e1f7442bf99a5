// ctest -L slow: the unbugged test engine and Stockfish are clean over the whole standard suite
// to depth 5, the Chess960 suite to depth 4, and 1,000 random positions to depth 4.
#include <gtest/gtest.h>

#include "base/strings.h"
#include "engine/random_positions.h"
#include "match/movegen_check.h"

namespace arbiter::match {
namespace {

struct Engine {
  std::string name;
  EngineSpec spec;
};

class MovegenCheckSlow : public testing::TestWithParam<Engine> {};

v1::MovegenCheckResult Check(UciEngine& engine, const std::vector<v1::MovegenPosition>& ps) {
  MovegenAggregate sum;
  for (const auto& p : ps) {
    auto r = CheckMovegenPosition(engine, p, PerftDialect{}, Millis(600000));
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) sum.Add(*r);
  }
  return sum.Result(uint32_t(ps.size()));
}

TEST_P(MovegenCheckSlow, CleanOnSuitesAndRandomPositions) {
  UciEngine engine(GetParam().spec);
  auto standard = MovegenSuitePositions(Cat(ARBITER_PERFT_DATA, "/standard.epd"), 5, 0);
  auto fischer = MovegenSuitePositions(Cat(ARBITER_PERFT_DATA, "/fischer960.epd"), 4, 0);
  ASSERT_TRUE(standard.ok() && fischer.ok());
  std::vector<v1::MovegenPosition> random;
  for (const Position& pos : RandomPositions(1000, 2026)) {
    v1::MovegenPosition p;
    p.set_fen(pos.Fen());
    p.set_depth(4);
    p.set_source("random");
    random.push_back(p);
  }
  for (const auto* ps : {&*standard, &*fischer, &random}) {
    v1::MovegenCheckResult r = Check(engine, *ps);
    EXPECT_EQ(r.positions_checked(), ps->size());
    EXPECT_EQ(r.positions_clean(), ps->size()) << MovegenReportText(r);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Engines, MovegenCheckSlow,
    testing::Values(Engine{"test_engine", EngineSpec{.name = "t", .cmd = TEST_ENGINE}},
                    Engine{"stockfish", EngineSpec{.name = "sf", .cmd = "/usr/games/stockfish"}}),
    [](const testing::TestParamInfo<Engine>& i) { return i.param.name; });

}  // namespace
}  // namespace arbiter::match

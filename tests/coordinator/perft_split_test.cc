#include "coordinator/perft_split.h"

#include <set>

#include "engine/perft.h"
#include "gtest/gtest.h"

namespace arbiter::coordinator {
namespace {

constexpr char kKiwipete[] = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

// Recombines a split the way the coordinator does: sum of count x multiplicity per root move.
std::vector<uint64_t> Recombine(const PerftSplit& split) {
  std::vector<uint64_t> divide(split.root_moves.size(), 0);
  for (const SplitPosition& sp : split.unique) {
    Position p = sp.pos;
    uint64_t count = PerftReference(p, split.depth - split.split_depth);
    for (auto [root, mult] : sp.weights) divide[root] += count * mult;
  }
  return divide;
}

struct Case {
  const char* fen;
  int depth, split_depth;
  uint64_t nodes;
};

class SplitTest : public ::testing::TestWithParam<Case> {};

TEST_P(SplitTest, RecombinesToTheExactDivide) {
  const Case& c = GetParam();
  absl::StatusOr<Position> pos = Position::FromFen(c.fen);
  ASSERT_TRUE(pos.ok());
  absl::StatusOr<PerftSplit> split =
      SplitPerft(*pos, {.depth = c.depth, .split_depth = c.split_depth, .workers = 1});
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->split_depth, c.split_depth);
  absl::StatusOr<PerftResult> local = Perft(*pos, {.depth = c.depth, .divide = true});
  ASSERT_TRUE(local.ok());
  std::vector<uint64_t> divide = Recombine(*split);
  ASSERT_EQ(divide.size(), local->divide.size());
  uint64_t total = 0;
  for (size_t i = 0; i < divide.size(); ++i) {
    EXPECT_EQ(divide[i], local->divide[i].nodes) << split->root_moves[i];
    total += divide[i];
  }
  EXPECT_EQ(total, c.nodes);
}

INSTANTIATE_TEST_SUITE_P(
    Positions, SplitTest,
    ::testing::Values(
        Case{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 5, 3, 4865609},
        Case{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 4, 4, 197281},
        Case{kKiwipete, 4, 2, 4085603},
        // En passant and promotions (position 3 and 4 of the CPW list).
        Case{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 3, 674624},
        Case{"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 4, 2, 422333}));

TEST(SplitPerft, MergesTranspositionsByExactPosition) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 5, .split_depth = 4, .workers = 1});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->split_positions, 197281u);  // perft(4): every path
  EXPECT_LT(split->unique.size(), split->split_positions);
  std::set<std::string> fens;
  uint64_t weight = 0;
  for (const SplitPosition& sp : split->unique) {
    std::string fen = sp.pos.Fen();
    fens.insert(fen.substr(0, fen.rfind(' ', fen.rfind(' ') - 1)));  // without move counters
    for (auto [root, mult] : sp.weights) weight += mult;
  }
  EXPECT_EQ(fens.size(), split->unique.size()) << "a position appears twice";
  EXPECT_EQ(weight, split->split_positions);
}

TEST(SplitPerft, AutomaticDepthLeavesWorkForWorkers) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 7, .workers = 4});
  ASSERT_TRUE(split.ok());
  // 16 jobs a worker, 8 positions a job: 512 positions -> depth 3 (400 at depth 2 is too few).
  EXPECT_EQ(split->split_depth, 3);
  split = SplitPerft(Position::StartPosition(), {.depth = 2, .workers = 100});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->split_depth, 1);
}

TEST(SplitPerft, RejectsBadDepths) {
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 40}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 3, .split_depth = 4}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PackJobs, BalancesEstimatesAndUsesEveryPosition) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 7, .split_depth = 3, .workers = 1});
  ASSERT_TRUE(split.ok());
  auto jobs = PackJobs(*split, 32);
  ASSERT_EQ(jobs.size(), 32u);
  std::vector<int> seen(split->unique.size(), 0);
  double lo = 1e300, hi = 0;
  for (const auto& job : jobs) {
    double load = 0;
    for (uint32_t i : job) {
      ++seen[i];
      load += split->unique[i].estimate;
    }
    lo = std::min(lo, load);
    hi = std::max(hi, load);
  }
  for (int s : seen) ASSERT_EQ(s, 1);
  EXPECT_LT(hi / lo, 1.1) << "largest-first packing keeps jobs within 10% of each other";
  EXPECT_EQ(PackJobs(*split, 1'000'000).size(), split->unique.size());
}

}  // namespace
}  // namespace arbiter::coordinator

#include "coordinator/perft_split.h"

#include <map>
#include <set>

#include "engine/movegen.h"
#include "engine/perft.h"
#include "gtest/gtest.h"

namespace arbiter::coordinator {
namespace {

constexpr char kKiwipete[] = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

// Recombines a split the way the coordinator does: sum of count x multiplicity per root move.
std::vector<uint64_t> Recombine(const PerftSplit& split) {
  std::vector<uint64_t> divide(split.root_moves.size(), 0);
  for (size_t i = 0; i < split.unique.size(); ++i) {
    const SplitPosition& sp = split.unique[i];
    Position p = split.PositionAt(i);
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

// With one thread and with three (the sharded two-pass expansion, forced on small levels).
TEST_P(SplitTest, RecombinesToTheExactDivide) {
  const Case& c = GetParam();
  absl::StatusOr<Position> pos = Position::FromFen(c.fen);
  ASSERT_TRUE(pos.ok());
  absl::StatusOr<PerftResult> local = Perft(*pos, {.depth = c.depth, .divide = true});
  ASSERT_TRUE(local.ok());
  size_t unique = 0;
  for (int threads : {1, 3}) {
    absl::StatusOr<PerftSplit> split = SplitPerft(
        *pos, {.depth = c.depth, .split_depth = c.split_depth, .workers = 1, .threads = threads});
    ASSERT_TRUE(split.ok()) << split.status();
    EXPECT_EQ(split->split_depth, c.split_depth);
    if (threads == 1) unique = split->unique.size();
    EXPECT_EQ(split->unique.size(), unique) << threads << " threads";
    std::vector<uint64_t> divide = Recombine(*split);
    ASSERT_EQ(divide.size(), local->divide.size());
    uint64_t total = 0;
    for (size_t i = 0; i < divide.size(); ++i) {
      EXPECT_EQ(divide[i], local->divide[i].nodes) << split->root_moves[i] << ", " << threads;
      total += divide[i];
    }
    EXPECT_EQ(total, c.nodes) << threads << " threads";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Positions, SplitTest,
    ::testing::Values(
        Case{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 5, 3, 4865609},
        Case{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 4, 4, 197281},
        Case{kKiwipete, 4, 2, 4085603},
        // En passant and promotions (position 3 and 4 of the CPW list).
        Case{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 5, 3, 674624},
        Case{"r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 4, 2, 422333},
        // 218 moves at the root (the most known): levels whose parents have ~200 children.
        Case{"R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1", 5, 3, 13853661}));

TEST(SplitPerft, MergesTranspositionsByExactPosition) {
  absl::StatusOr<PerftSplit> split = SplitPerft(
      Position::StartPosition(), {.depth = 5, .split_depth = 4, .workers = 1, .threads = 2});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->split_positions, 197281u);  // perft(4): every path
  EXPECT_LT(split->unique.size(), split->split_positions);
  std::set<std::string> fens;
  uint64_t weight = 0;
  for (size_t i = 0; i < split->unique.size(); ++i) {
    const SplitPosition& sp = split->unique[i];
    std::string fen = split->PositionAt(i).Fen();
    fens.insert(fen.substr(0, fen.rfind(' ', fen.rfind(' ') - 1)));  // without move counters
    for (auto [root, mult] : sp.weights) weight += mult;
  }
  EXPECT_EQ(fens.size(), split->unique.size()) << "a position appears twice";
  EXPECT_EQ(weight, split->split_positions);
}

TEST(SplitPerft, AutomaticDepthLeavesThreePliesAndEnoughPositions) {
  struct Expect {
    int depth, workers, split_depth;
  };
  // Three plies left to the workers (perft(8): ply 5, 822,518 unique positions) unless the jobs
  // need more positions (16 a worker, 8 positions a job; 100 workers want 12,800) or depth - 1
  // is reached.
  for (Expect e : {Expect{8, 2, 5}, Expect{7, 4, 4}, Expect{6, 3, 3}, Expect{5, 100, 4},
                   Expect{4, 1, 2}, Expect{3, 1, 2}, Expect{2, 100, 1}, Expect{1, 1, 1}}) {
    absl::StatusOr<PerftSplit> split =
        SplitPerft(Position::StartPosition(), {.depth = e.depth, .workers = e.workers});
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(split->split_depth, e.split_depth) << "depth " << e.depth;
  }
}

// Workers sharing one hash: no plies are expanded for merging, only for the jobs (64 positions a
// job: perft(8) on 2 workers wants 2,048 positions, ply 3 has 5,362).
TEST(SplitPerft, SharedHashSplitsOnlyForTheJobs) {
  for (bool merge : {true, false}) {
    absl::StatusOr<PerftSplit> split =
        SplitPerft(Position::StartPosition(), {.depth = 8, .workers = 2, .merge = merge});
    ASSERT_TRUE(split.ok());
    EXPECT_EQ(split->split_depth, merge ? 5 : 3);
  }
}

TEST(SplitPerft, AutomaticDepthStopsBeforeTooManyPositions) {
  // Ply 4 has 72,078 unique positions: over a limit of 50,000 the split stays at ply 3.
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 9, .workers = 2, .max_positions = 50'000});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->split_depth, 3);
  EXPECT_EQ(split->unique.size(), 5362u);
  // An explicit split depth has the same bound: beyond it the request is refused, not expanded.
  split = SplitPerft(Position::StartPosition(),
                     {.depth = 9, .split_depth = 4, .workers = 2, .max_positions = 50'000});
  ASSERT_FALSE(split.ok());
  EXPECT_EQ(split.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(split.status().message().find("50000 unique positions"), std::string::npos)
      << split.status();
  split = SplitPerft(Position::StartPosition(),
                     {.depth = 9, .split_depth = 4, .workers = 2, .max_positions = 100'000});
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->unique.size(), 72078u);
}

// Two split positions with a common child must be neighbours in the split's order, so that one
// job (one worker's hash) sees them both. Checked on every child of every position at ply 3.
// Both ways of computing the order (from positions with estimates, from packed bytes without).
class NeighboursTest : public ::testing::TestWithParam<size_t> {};

TEST_P(NeighboursTest, PositionsWithACommonChildAreNeighbours) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(),
                 {.depth = 5, .split_depth = 3, .workers = 1, .estimate_positions = GetParam()});
  ASSERT_TRUE(split.ok());
  // Child (by FEN without counters) -> the split indices it is reached from.
  std::map<std::string, std::vector<uint32_t>> parents;
  for (uint32_t i = 0; i < split->unique.size(); ++i) {
    Position p = split->PositionAt(i);
    MoveList list;
    GenerateLegal(p, list);
    for (Move m : list) {
      UndoInfo undo;
      p.DoMove(m, undo);
      std::string fen = p.Fen();
      parents[fen.substr(0, fen.rfind(' ', fen.rfind(' ') - 1))].push_back(i);
      p.UndoMove(m, undo);
    }
  }
  // Group runs: maximal index ranges whose positions have the same pieces of the side not to
  // move. Every child's parents must lie in one group.
  std::vector<uint32_t> group(split->unique.size(), 0);
  for (uint32_t i = 1; i < split->unique.size(); ++i) {
    const Position a = split->PositionAt(i - 1);
    const Position b = split->PositionAt(i);
    bool same = true;
    for (int t = 0; t < 6 && same; ++t)
      same = a.Pieces(~a.SideToMove(), PieceType(t)) == b.Pieces(~b.SideToMove(), PieceType(t));
    group[i] = group[i - 1] + (same ? 0 : 1);
  }
  size_t shared = 0;
  for (const auto& [fen, from] : parents) {
    if (from.size() < 2) continue;
    ++shared;
    for (uint32_t i : from) ASSERT_EQ(group[i], group[from[0]]) << fen;
  }
  EXPECT_GT(shared, 1000u) << "ply 4 has many transpositions between ply-3 positions";
}

INSTANTIATE_TEST_SUITE_P(EstimatedAndUniform, NeighboursTest,
                         ::testing::Values(kExactEstimatePositions, size_t(0)));

// The order is total: the same on any number of threads (a streamed split's chunk-ply
// positions are walked in it, perhaps on another machine after a restart).
TEST(SplitPerft, OrderIsTheSameOnAnyNumberOfThreads) {
  absl::StatusOr<Position> pos = Position::FromFen(kKiwipete);
  ASSERT_TRUE(pos.ok());
  absl::StatusOr<PerftSplit> threaded =
      SplitPerft(*pos, {.depth = 5, .split_depth = 3, .threads = 3, .estimate_positions = 0});
  absl::StatusOr<PerftSplit> single =
      SplitPerft(*pos, {.depth = 5, .split_depth = 3, .threads = 1, .estimate_positions = 0});
  ASSERT_TRUE(threaded.ok() && single.ok());
  ASSERT_EQ(threaded->unique.size(), single->unique.size());
  for (size_t i = 0; i < single->unique.size(); ++i)
    ASSERT_EQ(threaded->unique[i].packed, single->unique[i].packed) << i;
}

// A streamed split's shards: Kiwipete's positions at ply 3, walked from the merged positions at
// ply 1, cut by key with a bound of 5,000 positions a shard, on one and on three threads.
// Together the shards hold exactly the in-memory split's unique positions (every transposition
// merged across shards, none in two shards), each within its keys and the bound, and their
// counts weighted by root move give the exact divide of perft(4).
TEST(SplitPerftShard, ShardsMergeEveryTranspositionAndRecombineToTheExactDivide) {
  absl::StatusOr<Position> pos = Position::FromFen(kKiwipete);
  ASSERT_TRUE(pos.ok());
  absl::StatusOr<PerftResult> local = Perft(*pos, {.depth = 4, .divide = true});
  absl::StatusOr<PerftSplit> level =
      SplitPerft(*pos, {.depth = 4, .split_depth = 1, .estimate_positions = 0});
  absl::StatusOr<PerftSplit> whole =
      SplitPerft(*pos, {.depth = 4, .split_depth = 3, .estimate_positions = 0});
  ASSERT_TRUE(local.ok() && level.ok() && whole.ok());
  for (int threads : {1, 3}) {
    std::set<PackedPosition> seen;
    std::vector<uint64_t> divide(level->root_moves.size(), 0);
    uint64_t paths = 0;
    int shards = 0;
    for (uint64_t begin = 0; begin < kShardKeyEnd; ++shards) {
      SplitShard shard = SplitPerftShard(
          *level, 3, begin, kShardKeyEnd,
          {.depth = 4, .max_positions = 5000, .threads = threads, .estimate_positions = 0});
      ASSERT_GT(shard.end, begin);
      EXPECT_EQ(shard.split.split_depth, 3);
      EXPECT_LE(shard.split.unique.size(), 5000u);
      for (size_t i = 0; i < shard.split.unique.size(); ++i) {
        EXPECT_TRUE(seen.insert(shard.split.unique[i].packed).second) << "in two shards";
        const uint64_t key = ShardKey(shard.split.PositionAt(i));
        EXPECT_TRUE(key >= begin && key < shard.end) << key;
      }
      paths += shard.split.split_positions;
      shard.split.root_moves = level->root_moves;
      const std::vector<uint64_t> d = Recombine(shard.split);
      for (size_t i = 0; i < d.size(); ++i) divide[i] += d[i];
      begin = shard.end;
    }
    EXPECT_EQ(seen.size(), whole->unique.size()) << threads;
    EXPECT_EQ(paths, whole->split_positions);  // 97,862: perft(3) of Kiwipete
    EXPECT_GT(shards, 8) << whole->unique.size();
    ASSERT_EQ(divide.size(), local->divide.size());
    for (size_t i = 0; i < divide.size(); ++i) EXPECT_EQ(divide[i], local->divide[i].nodes) << i;
  }
}

// The bound gives way only to one key: positions with the same pieces of the side not to move
// cannot be cut apart. With a bound of 1, the start position's 400 positions at ply 2 come in 20
// shards, one per black move, each of the 20 positions with that black move (one key), and
// perhaps an empty one above the highest key.
TEST(SplitPerftShard, ABoundBelowOneKeysPositionsKeepsThemTogether) {
  absl::StatusOr<PerftSplit> level = SplitPerft(
      Position::StartPosition(), {.depth = 4, .split_depth = 1, .estimate_positions = 0});
  ASSERT_TRUE(level.ok());
  size_t shards = 0, positions = 0;
  for (uint64_t begin = 0; begin < kShardKeyEnd; ++shards) {
    SplitShard shard = SplitPerftShard(*level, 2, begin, kShardKeyEnd,
                                       {.depth = 4, .max_positions = 1, .estimate_positions = 0});
    ASSERT_GT(shard.end, begin);
    // Each range ends just above a key; the last one may find none.
    if (shard.split.unique.empty()) {
      EXPECT_EQ(shard.end, kShardKeyEnd);
      break;
    }
    const uint64_t key = ShardKey(shard.split.PositionAt(0));
    for (size_t i = 0; i < shard.split.unique.size(); ++i)
      EXPECT_EQ(ShardKey(shard.split.PositionAt(i)), key);
    positions += shard.split.unique.size();
    begin = shard.end;
    if (shards > 100) break;
  }
  EXPECT_EQ(shards, 20u);
  EXPECT_EQ(positions, 400u);
}

// A streamed split's paths generated once (BucketedShards): Kiwipete's 97,862 paths from ply 1
// to ply 3, on one and on three threads, with their end positions kept or made again, taken
// ~5,000 paths a shard. The shards' positions, one
// shard after the other, are exactly the in-memory split's unique positions in its order, with
// the same weights; and a BucketedShards made again from the cursor after the third shard (a
// restarted coordinator) gives the same shards from there.
TEST(BucketedShards, ShardsFollowTheSplitsOrderExactlyAndResumeFromTheirCursor) {
  absl::StatusOr<Position> pos = Position::FromFen(kKiwipete);
  ASSERT_TRUE(pos.ok());
  absl::StatusOr<PerftSplit> level =
      SplitPerft(*pos, {.depth = 4, .split_depth = 1, .estimate_positions = 0});
  absl::StatusOr<PerftSplit> whole =
      SplitPerft(*pos, {.depth = 4, .split_depth = 3, .estimate_positions = 0});
  ASSERT_TRUE(level.ok() && whole.ok());
  const SplitOptions opts{.depth = 4, .estimate_positions = 0};
  // The shards from `cursor` to the end.
  auto shards = [&](uint64_t cursor, int threads, uint64_t packed_paths, uint64_t* before) {
    BucketedShards bucketed(*level, 3, cursor, threads, packed_paths);
    EXPECT_EQ(bucketed.paths(), whole->split_positions);  // 97,862: perft(3) of Kiwipete
    if (before) *before = bucketed.paths_before();
    std::vector<SplitShard> out;
    for (uint64_t at = cursor; at < kShardKeyEnd && out.size() < 1000;) {
      out.push_back(bucketed.Next(5000, opts));
      EXPECT_GT(out.back().end, at);
      at = out.back().end;
    }
    return out;
  };
  // With the paths' end positions kept, and made again from their moves (what larger levels do).
  for (const auto& [threads, packed] :
       {std::pair{1, BucketedShards::kPackedPaths}, std::pair{3, BucketedShards::kPackedPaths},
        std::pair{1, uint64_t{0}}, std::pair{3, uint64_t{0}}}) {
    SCOPED_TRACE(testing::Message() << threads << " threads, packed up to " << packed);
    const std::vector<SplitShard> all = shards(0, threads, packed, nullptr);
    EXPECT_GT(all.size(), 10u);
    std::vector<SplitPosition> joined;
    uint64_t paths = 0;
    for (const SplitShard& shard : all) {
      EXPECT_EQ(shard.split.split_depth, 3);
      paths += shard.split.split_positions;
      joined.insert(joined.end(), shard.split.unique.begin(), shard.split.unique.end());
    }
    EXPECT_EQ(paths, whole->split_positions);
    ASSERT_EQ(joined.size(), whole->unique.size());
    for (size_t i = 0; i < joined.size(); ++i) {
      ASSERT_EQ(joined[i].packed, whole->unique[i].packed) << i;
      auto sorted = [](Weights w) {
        std::sort(w.begin(), w.end());
        return w;
      };
      EXPECT_EQ(sorted(joined[i].weights), sorted(whole->unique[i].weights)) << i;
    }
    uint64_t before = 0, expected_before = 0;
    for (size_t k = 0; k < 3; ++k) expected_before += all[k].split.split_positions;
    const std::vector<SplitShard> rest = shards(all[2].end, threads, packed, &before);
    EXPECT_EQ(before, expected_before);
    ASSERT_EQ(rest.size(), all.size() - 3);
    for (size_t k = 0; k < rest.size(); ++k) {
      EXPECT_EQ(rest[k].end, all[k + 3].end);
      ASSERT_EQ(rest[k].split.unique.size(), all[k + 3].split.unique.size());
      for (size_t i = 0; i < rest[k].split.unique.size(); ++i)
        EXPECT_EQ(rest[k].split.unique[i].packed, all[k + 3].split.unique[i].packed);
    }
  }
}

// Paths of more plies than a path keeps the moves of (3 here: the start position's ply 1 to ply
// 4) keep their end positions even when asked not to: the shards are still the in-memory split's
// positions in its order.
TEST(BucketedShards, PathsOfMorePliesKeepTheirEndPositions) {
  const Position pos = Position::StartPosition();
  absl::StatusOr<PerftSplit> level =
      SplitPerft(pos, {.depth = 5, .split_depth = 1, .estimate_positions = 0});
  absl::StatusOr<PerftSplit> whole =
      SplitPerft(pos, {.depth = 5, .split_depth = 4, .estimate_positions = 0});
  ASSERT_TRUE(level.ok() && whole.ok());
  ASSERT_GT(4 - level->split_depth, BucketedShards::kMaxPlies);
  BucketedShards bucketed(*level, 4, 0, 1, /*packed_paths=*/0);
  EXPECT_EQ(bucketed.paths(), 197281u);  // perft(4)
  std::vector<PackedPosition> joined;
  uint64_t paths = 0;
  for (uint64_t at = 0; at < kShardKeyEnd;) {
    SplitShard shard = bucketed.Next(20000, {.depth = 5, .estimate_positions = 0});
    ASSERT_GT(shard.end, at);
    at = shard.end;
    paths += shard.split.split_positions;
    for (const SplitPosition& sp : shard.split.unique) joined.push_back(sp.packed);
  }
  EXPECT_EQ(paths, 197281u);
  ASSERT_EQ(joined.size(), whole->unique.size());
  for (size_t i = 0; i < joined.size(); ++i) ASSERT_EQ(joined[i], whole->unique[i].packed) << i;
}

TEST(SplitPerft, RejectsBadDepths) {
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 40}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SplitPerft(Position::StartPosition(), {.depth = 3, .split_depth = 4}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PackJobs, JobTargetsShrinkLinearlyAndSumToTheTotal) {
  std::vector<double> t = JobTargets(1000, 5);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_DOUBLE_EQ(t[0], 320);  // 1.6 x the mean of 200
  EXPECT_DOUBLE_EQ(t[4], 80);   // 0.4 x
  double sum = 0;
  for (size_t i = 0; i < t.size(); ++i) sum += t[i];
  for (size_t i = 1; i < t.size(); ++i) EXPECT_LT(t[i], t[i - 1]);
  EXPECT_DOUBLE_EQ(sum, 1000);
  EXPECT_EQ(JobTargets(7, 1), std::vector<double>{7});
}

// With lanes, each lane's jobs share an equal part of the total and shrink from 1.6x to 0.4x of
// that lane's mean, so every worker ends its lane on short jobs; a lane count above the job count
// gives one job a lane.
TEST(PackJobs, LaneJobTargetsShrinkWithinEachLane) {
  const std::vector<double> t = LaneJobTargets(1200, 10, 2);
  ASSERT_EQ(t.size(), 10u);
  for (size_t lane = 0; lane < 2; ++lane) {
    double sum = 0;
    for (size_t i = 5 * lane; i < 5 * lane + 5; ++i) {
      sum += t[i];
      if (i > 5 * lane) {
        EXPECT_LT(t[i], t[i - 1]) << i;
      }
    }
    EXPECT_DOUBLE_EQ(sum, 600) << "lane " << lane;
    EXPECT_DOUBLE_EQ(t[5 * lane], 1.6 * 120);
    EXPECT_DOUBLE_EQ(t[5 * lane + 4], 0.4 * 120);
  }
  // Uneven lanes (7 jobs over 3 lanes: 2, 2, 3), and more lanes than jobs.
  const std::vector<double> uneven = LaneJobTargets(900, 7, 3);
  ASSERT_EQ(uneven.size(), 7u);
  EXPECT_DOUBLE_EQ(uneven[0] + uneven[1], 300);
  EXPECT_DOUBLE_EQ(uneven[4] + uneven[5] + uneven[6], 300);
  EXPECT_EQ(LaneJobTargets(30, 2, 5), (std::vector<double>{15, 15}));
  EXPECT_EQ(LaneJobTargets(30, 3, 1), JobTargets(30, 3));
}

// A job's lane is the lane share that holds the middle of its estimate: packed for 2 lanes, the
// first half of the jobs (by estimate) is lane 0 and the rest lane 1, never a lane out of range.
TEST(PackJobs, JobLanesFollowTheLaneShares) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 6, .split_depth = 3, .workers = 2});
  ASSERT_TRUE(split.ok());
  const double total = TotalEstimate(*split);
  const std::vector<std::vector<uint32_t>> groups = PackJobs(*split, LaneJobTargets(total, 10, 2));
  const std::vector<uint32_t> lanes = JobLanes(*split, groups, 2);
  ASSERT_EQ(lanes.size(), groups.size());
  double lane0 = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) {
      EXPECT_GE(lanes[g], lanes[g - 1]) << g;
    }
    if (lanes[g] == 0) {
      for (uint32_t i : groups[g]) lane0 += split->unique[i].estimate;
    }
  }
  EXPECT_EQ(lanes.front(), 0u);
  EXPECT_EQ(lanes.back(), 1u);
  EXPECT_NEAR(lane0 / total, 0.5, 0.1);
  // One lane: every job in it; more lanes than jobs: each within range.
  for (uint32_t l : JobLanes(*split, groups, 1)) EXPECT_EQ(l, 0u);
  for (uint32_t l : JobLanes(*split, groups, 64)) EXPECT_LT(l, 64u);
}

// Many positions per job: contiguous runs of the split's order, each within one position's
// estimate of its target, covering every position once and in order.
TEST(PackJobs, ContiguousRunsNearTheirTargets) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 7, .split_depth = 3, .workers = 1});
  ASSERT_TRUE(split.ok());
  auto jobs = PackJobs(*split, 32);
  ASSERT_EQ(jobs.size(), 32u);
  double total = 0, largest = 0;
  for (const SplitPosition& sp : split->unique) {
    total += sp.estimate;
    largest = std::max(largest, sp.estimate);
  }
  const std::vector<double> targets = JobTargets(total, 32);
  uint32_t next = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    double load = 0;
    for (uint32_t i : jobs[j]) {
      ASSERT_EQ(i, next++) << "job " << j << " is not the next run of positions";
      load += split->unique[i].estimate;
    }
    EXPECT_NEAR(load, targets[j], largest) << "job " << j;
  }
  EXPECT_EQ(next, split->unique.size());
  EXPECT_GT(targets[0], 3 * targets[31]) << "the last jobs are the short ones";
}

// Few positions per job: largest first onto the least loaded job, every position once.
TEST(PackJobs, FewPositionsBalanceLargestFirst) {
  absl::StatusOr<PerftSplit> split =
      SplitPerft(Position::StartPosition(), {.depth = 6, .split_depth = 2, .workers = 1});
  ASSERT_TRUE(split.ok());
  auto jobs = PackJobs(*split, 200);  // 400 positions: 2 a job
  ASSERT_EQ(jobs.size(), 200u);
  std::vector<int> seen(split->unique.size(), 0);
  for (const auto& job : jobs)
    for (uint32_t i : job) ++seen[i];
  for (int s : seen) ASSERT_EQ(s, 1);
  EXPECT_EQ(PackJobs(*split, 1'000'000).size(), split->unique.size());
  EXPECT_TRUE(PackJobs(PerftSplit{}, 8).empty());
}

}  // namespace
}  // namespace arbiter::coordinator

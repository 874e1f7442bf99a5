#include "engine/perft.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/packed_position.h"
#include "engine/perft_lane.h"
#include "engine/perft_path.h"
#include "engine/random_positions.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"

namespace arbiter {
namespace {

using testing::LoadSuite;

// Runs `body` once on each copy of the counting core this CPU runs (every one the default build
// carries, on an AVX-512 machine), then goes back to the best.
void OnEveryPath(const std::function<void()>& body) {
  const std::vector<const PerftPath*> paths = RunnablePerftPaths();
  ASSERT_FALSE(paths.empty());
  for (const PerftPath* path : paths) {
    SCOPED_TRACE(Cat("perft path ", path->name));
    ASSERT_TRUE(UsePerftPath(path->name).ok());
    ASSERT_EQ(&ActivePerftPath(), path);
    body();
  }
  ASSERT_TRUE(UsePerftPath("").ok());
}

// Every suite position, to the deepest listed depth whose count stays under the node budget.
void CheckSuite(const std::string& name, uint64_t max_nodes, PerftOptions base) {
  auto suite = LoadSuite(name);
  ASSERT_GT(suite.size(), 100u);
  for (const auto& line : suite) {
    auto pos = Position::FromFen(line.fen);
    ASSERT_TRUE(pos.ok()) << line.fen << ": " << pos.status();
    int checked = 0;
    for (auto [depth, expected] : line.expected) {
      if (expected > max_nodes && checked > 0) break;
      PerftOptions opts = base;
      opts.depth = depth;
      auto r = Perft(*pos, opts);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->nodes, expected) << line.fen << " depth " << depth;
      ASSERT_STREQ(r->path, ActivePerftPath().name);
      ++checked;
    }
    EXPECT_GT(checked, 0) << line.fen;
  }
}

TEST(PerftSuite, StandardShallow) {
  OnEveryPath([] { CheckSuite("standard.epd", 2'000'000, {}); });
}
TEST(PerftSuite, Chess960Shallow) {
  OnEveryPath([] { CheckSuite("fischer960.epd", 300'000, {}); });
}
TEST(PerftSuite, StandardWithHashAndThreads) {
#if defined(__SANITIZE_THREAD__)
  // Under ThreadSanitizer (scripts/sanitize.sh) the threads and their shared table are what is
  // checked, and they are the same code on every path: the best path only, smaller trees, and a
  // 1 MB table (a 16 MB one, cleared and shadowed by TSan for each of the ~500 counts, made this
  // test ~6 minutes of CI; the Release and ASan runs check every path in full).
  CheckSuite("standard.epd", 200'000, {.threads = 2, .hash_mb = 1});
#else
  OnEveryPath([] { CheckSuite("standard.epd", 1'000'000, {.threads = 2, .hash_mb = 16}); });
#endif
}

TEST(PerftPaths, TheBestPathTheCpuRunsIsTheDefault) {
  const std::vector<const PerftPath*> built = BuiltPerftPaths();
  const std::vector<const PerftPath*> runnable = RunnablePerftPaths();
  ASSERT_FALSE(runnable.empty());
  EXPECT_EQ(&ActivePerftPath(), runnable.front());
  if (built.size() > 1) {  // the portable build carries the three levels, best first
    ASSERT_EQ(built.size(), 3u);
    EXPECT_STREQ(built[0]->name, "v4");
    EXPECT_TRUE(built[0]->pext && built[0]->avx512);
    EXPECT_STREQ(built[1]->name, "v3");
    EXPECT_TRUE(built[1]->pext && !built[1]->avx512);
    EXPECT_STREQ(built[2]->name, "v2");
    EXPECT_TRUE(!built[2]->pext && !built[2]->avx512);
    EXPECT_EQ(runnable.back(), built[2]) << "every x86-64-v2 CPU runs v2";
  }
  if (__builtin_cpu_supports("avx512vpopcntdq") && built.size() > 1) {
    EXPECT_STREQ(ActivePerftPath().name, "v4");
  }
}

TEST(PerftPaths, RefusesUnknownAndUnrunnablePaths) {
  absl::Status unknown = UsePerftPath("v5");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("v2, v3 or v4"), std::string::npos) << unknown;
  EXPECT_EQ(UsePerftPath(std::string(1 << 16, 'x')).code(), absl::StatusCode::kInvalidArgument);
  const std::vector<const PerftPath*> runnable = RunnablePerftPaths();
  for (const char* name : {"v2", "v3", "v4"}) {
    const bool runs = std::any_of(runnable.begin(), runnable.end(),
                                  [&](const PerftPath* p) { return p->name == std::string(name); });
    absl::Status s = UsePerftPath(name);
    EXPECT_EQ(s.ok(), runs) << name << ": " << s;
    if (!runs) {  // not in this binary, or this CPU lacks what it needs
      EXPECT_TRUE(s.code() == absl::StatusCode::kNotFound ||
                  s.code() == absl::StatusCode::kFailedPrecondition)
          << s;
    }
  }
  ASSERT_TRUE(UsePerftPath("").ok());
  setenv("ARBITER_PERFT_PATH", "fast", 1);
  absl::Status env = UsePerftPathFromEnvironment();
  unsetenv("ARBITER_PERFT_PATH");
  EXPECT_EQ(env.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(env.message().find("ARBITER_PERFT_PATH"), std::string::npos) << env;
  EXPECT_EQ(&ActivePerftPath(), runnable.front()) << "a refused name changed the path";
}

void FastPathAgreesWithReference() {
  // Depth 3 exercises the leaf board on every second move (castling with a rook that starts on
  // its own target square included); the reference makes and unmakes every move.
  std::vector<PerftSuiteLine> lines = LoadSuite("standard.epd");
  for (const auto& l : LoadSuite("fischer960.epd")) lines.push_back(l);
  // Castling where the king or the rook starts on its own target square, for both sides.
  for (const char* fen : {"3r2kr/pppppppp/8/8/8/8/PPPPPPPP/3R2KR w DHdh - 0 1",
                          "r1k4r/pppppppp/8/8/8/8/PPPPPPPP/R1K4R b AHah - 0 1",
                          "1r3kr1/8/8/8/8/8/8/1R3KR1 w BGbg - 0 1",
                          "3r2kr/8/8/8/8/8/8/4K3 w dh - 0 1", "r5kr/8/4K3/8/8/8/8/8 w ah - 0 1"})
    lines.push_back({.line_number = 0, .fen = fen, .expected = {}});
  for (const auto& line : lines) {
    auto pos = Position::FromFen(line.fen);
    ASSERT_TRUE(pos.ok()) << line.fen << ": " << pos.status();
    Position copy = *pos;
    for (int depth : {3, 4}) {
      if (depth == 4 && !line.expected.empty()) continue;  // deep only for the crafted ones
      auto fast = Perft(*pos, {.depth = depth});
      ASSERT_TRUE(fast.ok());
      EXPECT_EQ(fast->nodes, PerftReference(copy, depth)) << line.fen << " depth " << depth;
    }
    EXPECT_EQ(copy.Fen(), pos->Fen()) << "make/unmake did not restore the position";
  }
}

TEST(Perft, FastPathAgreesWithReferenceOnEveryPath) { OnEveryPath(FastPathAgreesWithReference); }

// The last interior ply takes the parent's count for a quiet move far from what the opponent's
// moves depend on (LastInteriorPly in engine/perft_core.cc, which counts the passing moves in
// bulk from each piece's target set): against the make/unmake reference on
// positions biased toward checks, pins, en passant, castling and promotions, from the standard
// and Chess960 starts, each position and every child of it counted 2 plies deep (so that every
// depth-2 node sees both sides move first).
void QuietMovesAgreeWithReference() {
  for (Position& pos : RandomPositions(1000, 20261204)) {
    for (int depth : {2, 3}) {
      auto fast = Perft(pos, {.depth = depth});
      ASSERT_TRUE(fast.ok());
      Position copy = pos;
      ASSERT_EQ(fast->nodes, PerftReference(copy, depth)) << pos.Fen() << " depth " << depth;
    }
  }
}

TEST(Perft, QuietMovesAgreeWithReferenceOnEveryPath) { OnEveryPath(QuietMovesAgreeWithReference); }

TEST(Perft, DivideSumsToTotalAndMatchesChildPerft) {
  Position pos = Position::StartPosition();
  auto r = Perft(pos, {.depth = 4, .threads = 2, .divide = true});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->divide.size(), 20u);
  uint64_t sum = 0;
  for (const auto& d : r->divide) {
    sum += d.nodes;
    Position child = pos;
    UndoInfo undo;
    child.DoMove(d.move, undo);
    auto sub = Perft(child, {.depth = 3});
    EXPECT_EQ(sub->nodes, d.nodes) << MoveToUci(pos, d.move);
  }
  EXPECT_EQ(sum, r->nodes);
  EXPECT_EQ(r->nodes, 197281u);
}

TEST(Perft, DepthZeroAndOne) {
  Position pos = Position::StartPosition();
  EXPECT_EQ(Perft(pos, {.depth = 0})->nodes, 1u);
  EXPECT_EQ(Perft(pos, {.depth = 1})->nodes, 20u);
}

Position Kiwipete() {
  return *Position::FromFen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
}

// The children of `root` in generation order, packed one after another, and their perft counts
// at `depth`.
struct Children {
  std::vector<Position> positions;
  std::string packed;
  std::vector<uint64_t> counts;
};
Children ChildrenOf(Position root, int depth) {
  Children out;
  MoveList list;
  GenerateLegal(root, list);
  for (Move m : list) {
    UndoInfo undo;
    root.DoMove(m, undo);
    out.positions.push_back(root);
    out.packed += AsBytes(PackPosition(root));
    out.counts.push_back(PerftCount(root, depth));
    root.UndoMove(m, undo);
  }
  return out;
}

// A batch of packed positions counts what the same positions count one by one (with and without
// a hash, on one thread and on two, few positions (split further) and many (unpacked as they are
// counted)); a bad position stops it with its index, and so does a torn last one.
TEST(PerftPackedBatch, CountsAsPositionsDoAndNamesABadOne) {
  const Position root = Kiwipete();
  const auto [positions, packed, expected] = ChildrenOf(root, 3);
  ASSERT_EQ(positions.size(), 48u);
  for (int threads : {1, 2}) {
    for (int hash_mb : {0, 4}) {
      for (size_t n : {size_t{3}, positions.size()}) {
        SCOPED_TRACE(Cat(threads, " threads, hash ", hash_mb, " MB, ", n, " positions"));
        const PerftBatchOptions opts{
            .depth = 3, .threads = threads, .hash_mb = hash_mb, .distinct = true};
        absl::StatusOr<std::vector<uint64_t>> counts = PerftPackedBatch(
            std::string_view(packed).substr(0, n * kPackedPositionSize), root, opts);
        ASSERT_TRUE(counts.ok()) << counts.status();
        EXPECT_EQ(*counts, std::vector<uint64_t>(expected.begin(), expected.begin() + long(n)));
        EXPECT_EQ(*counts, *PerftBatch(std::span(positions).first(n), opts));
      }
    }
  }
  EXPECT_TRUE(PerftPackedBatch("", root, {.depth = 3})->empty());
  std::string bad = packed;
  bad[17 * kPackedPositionSize + 12] = 0x66;  // piece code 6 in position 17
  for (int threads : {1, 2}) {
    absl::StatusOr<std::vector<uint64_t>> counts =
        PerftPackedBatch(bad, root, {.depth = 3, .threads = threads});
    EXPECT_EQ(counts.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(counts.status().message().find("position 17: packed position: bad piece code 6"),
              std::string::npos)
        << counts.status();
  }
  // Few positions on two threads (unpacked before they are split): the same check.
  const PerftBatchOptions split{.depth = 3, .threads = 2};
  EXPECT_TRUE(PerftPackedBatch(bad.substr(0, 3 * kPackedPositionSize), root, split).ok());
  EXPECT_NE(
      PerftPackedBatch(bad.substr(16 * kPackedPositionSize, 3 * kPackedPositionSize), root, split)
          .status()
          .message()
          .find("position 1: packed position: bad piece code 6"),
      std::string::npos);
  absl::StatusOr<std::vector<uint64_t>> torn =
      PerftPackedBatch(std::string_view(packed).substr(0, packed.size() - 1), root, {.depth = 3});
  EXPECT_NE(torn.status().message().find("not a multiple of 34"), std::string::npos)
      << torn.status();
}

// Lanes of keys (engine/perft_lane.h): each lane counts only the positions two plies below each
// batch position whose ShardKey is in its range; lanes that cover the keys once add up to the
// whole counts, on one thread or two, with no table or with one table kept across every lane and
// then the whole count (a lane's partial counts, stored above its ply, never answer for another
// lane's or for a whole count). A lane does filter: some of its counts are below the whole ones.
TEST(PerftLanes, LanesAddUpToTheWholeCounts) {
  const Position root = Kiwipete();
  const auto [positions, packed, whole] = ChildrenOf(root, 4);
  for (uint64_t lanes : {2, 3}) {
    for (int threads : {1, 2}) {
      for (bool table : {false, true}) {
        SCOPED_TRACE(Cat(lanes, " lanes, ", threads, " threads, table ", table));
        std::shared_ptr<PerftTable> kept = table ? MakePerftTable(4) : nullptr;
        std::vector<uint64_t> sum(positions.size(), 0);
        bool filtered = false;
        for (uint64_t l = 0; l < lanes; ++l) {
          const PerftBatchOptions opts{
              .depth = 4,
              .threads = threads,
              .table = kept.get(),
              .lane_begin = kShardKeyEnd / lanes * l,
              .lane_end = l + 1 == lanes ? kShardKeyEnd : kShardKeyEnd / lanes * (l + 1)};
          absl::StatusOr<std::vector<uint64_t>> counts = PerftBatch(positions, opts);
          ASSERT_TRUE(counts.ok()) << counts.status();
          EXPECT_EQ(*counts, *PerftPackedBatch(packed, root, opts));
          for (size_t i = 0; i < sum.size(); ++i) {
            sum[i] += (*counts)[i];
            filtered |= (*counts)[i] < whole[i];
          }
        }
        EXPECT_EQ(sum, whole);
        EXPECT_TRUE(filtered);
        EXPECT_EQ(*PerftBatch(positions, {.depth = 4, .threads = threads, .table = kept.get()}),
                  whole);
      }
    }
  }
}

// Every transposition one ply below a lane's positions stays in the lane: 1.e4 e5 2.Nf3 and
// 1.e4 Nc6 2.Nf3 both lead to 1.e4 e5 2.Nf3 Nc6, and have one key (white's pieces); the same
// position by another move order has the same key too. Positions with other white pieces differ.
TEST(PerftLanes, TranspositionsShareTheirKey) {
  auto after = [](std::initializer_list<const char*> ucis) {
    Position pos = Position::StartPosition();
    for (const char* uci : ucis) {
      UndoInfo undo;
      pos.DoMove(*ParseUciMove(pos, uci), undo);
    }
    return pos;
  };
  const Position a = after({"e2e4", "e7e5", "g1f3"}), b = after({"e2e4", "b8c6", "g1f3"});
  EXPECT_NE(a.Key(), b.Key());
  EXPECT_EQ(ShardKey(a), ShardKey(b));
  EXPECT_EQ(ShardKey(a), ShardKey(after({"g1f3", "e7e5", "e2e4"})));
  EXPECT_NE(ShardKey(a), ShardKey(after({"e2e4", "e7e5", "b1c3"})));
  EXPECT_LT(ShardKey(a), kShardKeyEnd);
}

// ShardKeyAfter keys a child from the move alone as ShardKey does after the move is made: every
// legal move of random positions (standard and Chess960: castling with king or rook standing
// still, promotions, en passant, captures) and of Kiwipete.
TEST(PerftLanes, ShardKeyAfterAMoveIsTheChildsShardKey) {
  std::vector<Position> positions = RandomPositions(400, 26);
  positions.push_back(Kiwipete());
  // Castling where the king (g1) and then the rook (f1) stays put, and long past its rook;
  // en passant; promotions.
  for (const char* fen : {"4k3/8/8/8/8/8/8/6KR w H - 0 1", "4k3/8/8/8/8/8/8/4KR2 w F - 0 1",
                          "4k3/8/8/8/8/8/8/5RK1 w F - 0 1", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1",
                          "2r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1"}) {
    absl::StatusOr<Position> pos = Position::FromFen(fen);
    ASSERT_TRUE(pos.ok()) << fen << ": " << pos.status();
    positions.push_back(*pos);
  }
  size_t moves = 0, castlings = 0, promotions = 0, en_passants = 0;
  for (Position& pos : positions) {
    MoveList list;
    GenerateLegal(pos, list);
    for (Move m : list) {
      const uint64_t before = ShardKeyAfter(pos, m);
      UndoInfo undo;
      pos.DoMove(m, undo);
      ASSERT_EQ(before, ShardKey(pos)) << pos.Fen() << " after " << m.Raw();
      pos.UndoMove(m, undo);
      ++moves;
      castlings += m.KindOf() == Move::kCastling;
      promotions += m.KindOf() == Move::kPromotion;
      en_passants += m.KindOf() == Move::kEnPassant;
    }
  }
  EXPECT_GT(moves, 5000u);
  EXPECT_GT(castlings, 0u);
  EXPECT_GT(promotions, 0u);
  EXPECT_GT(en_passants, 0u);
}

// The abuse: a lane that is empty, reversed or reaches past 2^63, or a depth too shallow for its
// plies, is refused with the reason, by both batch forms.
TEST(PerftLanes, RefusesBadLanes) {
  const Position root = Position::StartPosition();
  const std::vector<Position> positions = {root};
  const std::string packed(AsBytes(PackPosition(root)));
  struct Bad {
    uint64_t begin, end;
    int depth;
    const char* why;
  };
  for (const Bad& bad : {Bad{5, 5, 3, "non-empty range"}, Bad{9, 4, 3, "non-empty range"},
                         Bad{0, kShardKeyEnd + 1, 3, "below 2^63"},
                         Bad{0, kShardKeyEnd, 1, "depth of at least 2"}}) {
    SCOPED_TRACE(Cat(bad.begin, " ", bad.end, " ", bad.depth));
    const PerftBatchOptions opts{.depth = bad.depth, .lane_begin = bad.begin, .lane_end = bad.end};
    for (const absl::Status& s :
         {PerftBatch(positions, opts).status(), PerftPackedBatch(packed, root, opts).status()}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_NE(s.message().find(bad.why), std::string::npos) << s;
    }
  }
  // The same lane, well formed, at depth 2: the positions two plies down, counted once.
  EXPECT_EQ((*PerftBatch(positions, {.depth = 2, .lane_begin = 0, .lane_end = kShardKeyEnd}))[0],
            400u);
}

TEST(Perft, RejectsBadOptions) {
  Position pos = Position::StartPosition();
  EXPECT_EQ(Perft(pos, {.depth = 40}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Perft(pos, {.depth = -1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Perft(pos, {.depth = 3, .hash_mb = -5}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Perft, HashedDeepCountMatches) {
  // Kiwipete depth 5 with a small table forces many replacements and concurrent writes.
  auto pos =
      Position::FromFen("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
  ASSERT_TRUE(pos.ok());
  auto r = Perft(*pos, {.depth = 5, .threads = 2, .hash_mb = 1});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->nodes, 193690690u);
}

TEST(Movegen, CountMatchesGeneratedListEverywhere) {
  // Walk the first two plies of every suite position and compare counting with listing.
  for (const auto& line : LoadSuite("standard.epd")) {
    Position pos = *Position::FromFen(line.fen);
    MoveList list;
    GenerateLegal(pos, list);
    EXPECT_EQ(CountLegal(pos), list.size) << line.fen;
    for (Move m : list) {
      UndoInfo undo;
      pos.DoMove(m, undo);
      MoveList inner;
      GenerateLegal(pos, inner);
      EXPECT_EQ(CountLegal(pos), inner.size) << pos.Fen();
      EXPECT_EQ(pos.Key(), pos.ComputeKey())
          << "incremental key drifted after " << MoveToUci(pos, m) << " in " << line.fen;
      pos.UndoMove(m, undo);
    }
  }
}

// The AVX-512 counters (native builds on CPUs with AVX-512) against one table lookup per
// piece, on random occupancies: every square as a slider or knight, with random blockers.
TEST(SimdPieces, AgreeWithLookups) {
#if ARBITER_SIMD_SLIDERS
  uint64_t seed = 0x9E3779B97F4A7C15ULL;
  auto next = [&] {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return seed;
  };
  for (int trial = 0; trial < 20000; ++trial) {
    const Bitboard occ = next() & next();
    const Bitboard knights = next() & next() & next() & occ;
    const Bitboard diagonal = next() & next() & occ & ~knights;
    const Bitboard straight = next() & next() & occ & ~knights;
    const Bitboard target = trial % 3 == 0 ? ~Bitboard{0} : next();
    int expected_count = 0;
    Bitboard expected_attacks = 0;
    for (Bitboard b = knights; b;) {
      const Square s = PopLsb(b);
      expected_count += PopCount(KnightAttacks(s) & target);
      expected_attacks |= KnightAttacks(s);
    }
    for (Bitboard b = diagonal; b;) {
      const Square s = PopLsb(b);
      expected_count += PopCount(BishopAttacks(s, occ) & target);
      expected_attacks |= BishopAttacks(s, occ);
    }
    for (Bitboard b = straight; b;) {
      const Square s = PopLsb(b);
      expected_count += PopCount(RookAttacks(s, occ) & target);
      expected_attacks |= RookAttacks(s, occ);
    }
    ASSERT_EQ(PieceMoveCount(knights, diagonal, straight, ~occ, target), expected_count)
        << "trial " << trial;
    ASSERT_EQ(PieceAttacks(knights, diagonal, straight, ~occ), expected_attacks)
        << "trial " << trial;
  }
#else
  GTEST_SKIP() << "this build has no AVX-512 piece counters (" << SliderIndexing() << ")";
#endif
}

}  // namespace
}  // namespace arbiter

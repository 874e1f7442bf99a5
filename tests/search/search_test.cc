// The search, evaluation and time management in-process: mate scores, draws, SEE, evaluation
// symmetry, and clock arithmetic that can never overrun.
#include "engine/search/search.h"

#include <cctype>
#include <sstream>

#include "engine/movegen.h"
#include "engine/notation.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"

namespace arbiter::search {
namespace {

SearchResult SearchDepth(const std::string& fen, int depth, std::vector<uint64_t> history = {}) {
  Searcher s(4);
  SearchControl control;
  GoLimits limits;
  limits.depth = depth;
  auto pos = Position::FromFen(fen);
  EXPECT_TRUE(pos.ok()) << fen;
  return s.Search(*pos, history, limits, 0, control, nullptr);
}

TEST(Search, FindsMateInTwoWithMateScore) {
  // Two rooks: 1.Rb7 (cutting off the seventh rank) and 2.Ra8 mate.
  const std::string fen = "6k1/8/8/8/8/8/R7/1R4K1 w - - 0 1";
  SearchResult r = SearchDepth(fen, 6);
  EXPECT_GE(r.score, kMateBound);
  EXPECT_EQ(r.score, kMate - 3);  // mate in 2 = 3 plies
}

TEST(Search, SeesBeingMated) {
  // Black to move; White threatens Ra8 mate and Black cannot stop both rooks: mated in 2 at most.
  SearchResult r = SearchDepth("7k/8/8/8/8/8/R7/1R4K1 b - - 0 1", 8);
  EXPECT_LE(r.score, -kMateBound);
}

TEST(Search, StalemateAndInsufficientMaterialAreDraws) {
  // Black has no legal move and is not in check.
  SearchResult stalemate = SearchDepth("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", 4);
  EXPECT_TRUE(stalemate.best.IsNone());
  // White to move could stalemate: the engine must not (Qf7 is stalemate; any mate is better).
  SearchResult avoid = SearchDepth("7k/8/6K1/8/8/8/5Q2/8 w - - 0 1", 6);
  EXPECT_GE(avoid.score, kMateBound);
  SearchResult knight = SearchDepth("8/8/3k4/8/8/2N5/8/4K3 w - - 0 1", 6);
  EXPECT_EQ(knight.score, 0);
}

TEST(Search, FiftyMoveRuleIsADraw) {
  // A queen up, but the next quiet move ends the game by the 50-move rule and no mate is in one.
  SearchResult r = SearchDepth("8/8/8/3k4/8/8/8/Q3K3 w - - 99 120", 5);
  EXPECT_EQ(r.score, 0);
}

TEST(Search, RepetitionOfAGamePositionIsADraw) {
  // White is a queen down, but every White move leads to a position that already occurred in the
  // game (put into the history with the right parity and distance): the score must be a draw.
  const auto root = *Position::FromFen("7k/8/8/8/8/8/q7/7K w - - 60 90");
  MoveList moves;
  GenerateLegal(root, moves);
  ASSERT_GT(moves.size, 0);
  std::vector<uint64_t> history = {1};
  for (Move m : moves) {
    Position child = root;
    UndoInfo u;
    child.DoMove(m, u);
    history.push_back(child.Key().lo);
    history.push_back(1);
  }
  history.push_back(1);
  Searcher s(4);
  SearchControl control;
  GoLimits limits;
  limits.depth = 6;
  EXPECT_EQ(s.Search(root, history, limits, 0, control, nullptr).score, 0);
  // Without that history White is lost.
  EXPECT_LT(s.Search(root, {}, limits, 0, control, nullptr).score, -500);
}

TEST(Search, NodeLimitIsHonoured) {
  Searcher s(4);
  SearchControl control;
  GoLimits limits;
  limits.nodes = 3000;
  SearchResult r = s.Search(Position::StartPosition(), {}, limits, 0, control, nullptr);
  EXPECT_LE(r.nodes, 3000u);
  EXPECT_TRUE(IsLegal(Position::StartPosition(), r.best));
}

TEST(Search, StoppedBeforeStartingStillGivesALegalMove) {
  Searcher s(4);
  SearchControl control;
  control.stop = true;
  GoLimits limits;
  limits.infinite = true;
  SearchResult r = s.Search(Position::StartPosition(), {}, limits, 0, control, nullptr);
  EXPECT_TRUE(IsLegal(Position::StartPosition(), r.best));
}

TEST(See, ExchangesOnOneSquare) {
  // Pawn takes an undefended knight: wins a knight.
  auto pos = *Position::FromFen("4k3/8/8/3n4/4P3/8/8/4K3 w - - 0 1");
  Move pxn = *ParseUciMove(pos, "e4d5");
  EXPECT_TRUE(SeeAtLeast(pos, pxn, 300));
  // Queen takes a pawn defended by a pawn: loses the queen for a pawn.
  auto pos2 = *Position::FromFen("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1");
  Move qxp = *ParseUciMove(pos2, "d2d5");
  EXPECT_FALSE(SeeAtLeast(pos2, qxp, 0));
  EXPECT_TRUE(SeeAtLeast(pos2, qxp, -900));
  // Doubled rooks on both sides (x-rays): the exchanges cancel out.
  auto pos3 = *Position::FromFen("3rk3/3r4/8/3r4/8/8/3R4/3RK3 w - - 0 1");
  Move rxr = *ParseUciMove(pos3, "d2d5");
  EXPECT_TRUE(SeeAtLeast(pos3, rxr, 0));
  EXPECT_FALSE(SeeAtLeast(pos3, rxr, 1));
  // With one defender fewer White wins the rook.
  auto pos4 = *Position::FromFen("4k3/3r4/8/3r4/8/8/3R4/3RK3 w - - 0 1");
  EXPECT_TRUE(SeeAtLeast(pos4, *ParseUciMove(pos4, "d2d5"), 500));
  EXPECT_FALSE(SeeAtLeast(pos4, *ParseUciMove(pos4, "d2d5"), 501));
}

// The same position seen from the other side: ranks flipped, colours swapped.
std::string MirrorFen(const std::string& fen) {
  std::istringstream in(fen);
  std::string board, side, castling, ep, half = "0", full = "1";
  in >> board >> side >> castling >> ep >> half >> full;
  std::vector<std::string> ranks;
  std::string cur;
  for (char c : board) {
    if (c == '/') {
      ranks.push_back(cur);
      cur.clear();
    } else {
      cur += std::isalpha(static_cast<unsigned char>(c))
                 ? char(std::isupper(static_cast<unsigned char>(c)) ? std::tolower(c)
                                                                    : std::toupper(c))
                 : c;
    }
  }
  ranks.push_back(cur);
  std::string out;
  for (auto it = ranks.rbegin(); it != ranks.rend(); ++it) out += (out.empty() ? "" : "/") + *it;
  std::string cs;
  for (char c : castling)
    cs += c == '-' ? c
                   : char(std::isupper(static_cast<unsigned char>(c)) ? std::tolower(c)
                                                                      : std::toupper(c));
  std::string eps = ep == "-" ? ep : std::string{ep[0], char('1' + ('8' - ep[1]))};
  return out + (side == "w" ? " b " : " w ") + cs + " " + eps + " " + half + " " + full;
}

TEST(Eval, SymmetricForBothColours) {
  EvalParams params;
  int checked = 0;
  for (const auto& line : testing::LoadSuite("standard.epd")) {
    auto pos = Position::FromFen(line.fen);
    auto mirrored = Position::FromFen(MirrorFen(line.fen));
    ASSERT_TRUE(pos.ok() && mirrored.ok()) << line.fen << " / " << MirrorFen(line.fen);
    EXPECT_EQ(Evaluate(*pos, params), Evaluate(*mirrored, params)) << line.fen;
    ++checked;
  }
  EXPECT_GT(checked, 100);
}

TEST(Eval, MaterialAndParametersMatter) {
  EvalParams params;
  auto up_a_rook = *Position::FromFen("4k3/pppppppp/8/8/8/8/PPPPPPPP/R3K3 w - - 0 1");
  EXPECT_GT(Evaluate(up_a_rook, params), 300);
  params.piece_mg[kRook] = params.piece_eg[kRook] = 0;
  EXPECT_LT(Evaluate(up_a_rook, params), 200);
}

TEST(TimeManagement, NeverPlansBeyondTheClock) {
  // Every clock state of a 1+0.01 game, both sides, with and without moves to go.
  for (int overhead : {0, 10, 30, 100}) {
    for (int64_t remaining = 0; remaining <= 1000; remaining += 7) {
      for (int mtg : {0, 1, 2, 10, 40}) {
        GoLimits l;
        l.time[kBlack] = remaining;
        l.inc[kBlack] = 10;
        l.movestogo = mtg;
        TimeBudget b = AllocateTime(l, kBlack, overhead);
        ASSERT_GE(b.hard_ms, 1);
        ASSERT_GE(b.soft_ms, 1);
        ASSERT_LE(b.soft_ms, b.hard_ms);
        if (remaining > overhead + 1) {
          ASSERT_LE(b.hard_ms, remaining - overhead) << remaining << " " << mtg;
          if (mtg != 1) {
            ASSERT_LE(b.hard_ms * 3, remaining) << remaining << " " << mtg;
          }
        }
      }
    }
  }
}

TEST(TimeManagement, GoForms) {
  GoLimits movetime;
  movetime.movetime = 500;
  EXPECT_EQ(AllocateTime(movetime, kWhite, 20).hard_ms, 480);
  GoLimits infinite;
  infinite.infinite = true;
  EXPECT_EQ(AllocateTime(infinite, kWhite, 20).hard_ms, -1);
  GoLimits depth;
  depth.depth = 5;
  EXPECT_EQ(AllocateTime(depth, kWhite, 20).hard_ms, -1);
  // Increments are used: more time per move with a larger increment.
  GoLimits a, b;
  a.time[kWhite] = b.time[kWhite] = 10000;
  b.inc[kWhite] = 1000;
  EXPECT_GT(AllocateTime(b, kWhite, 20).soft_ms, AllocateTime(a, kWhite, 20).soft_ms);
  // Few moves to go: more time per move.
  GoLimits c = a;
  c.movestogo = 2;
  EXPECT_GT(AllocateTime(c, kWhite, 20).soft_ms, AllocateTime(a, kWhite, 20).soft_ms);
}

}  // namespace
}  // namespace arbiter::search

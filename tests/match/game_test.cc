// Arbitration of single games between real engine processes (the test engine and Stockfish):
// every termination, the clocks in play, adjudication, and that a misbehaving engine is
// restarted for the next game.
#include "match/game.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>

#include "engine/notation.h"

namespace arbiter::match {
namespace {

TimeControl Tc(std::string_view s) { return ParseTimeControl(s).value(); }

std::unique_ptr<UciEngine> Engine(std::string name, std::vector<std::string> args = {},
                                  EngineTimeouts timeouts = {}) {
  return std::make_unique<UciEngine>(
      EngineSpec{.name = std::move(name), .cmd = TEST_ENGINE, .args = std::move(args)}, timeouts);
}

GameSettings Settings(std::string_view tc) {
  GameSettings s;
  s.tc[0] = s.tc[1] = Tc(tc);
  s.stop_grace = Millis(400);
  return s;
}

Opening FromFen(std::string_view fen) { return Opening{.start = Position::FromFen(fen).value()}; }

// Replays the record with the core: every move must be legal.
void ExpectLegalReplay(const GameRecord& r) {
  Game g(r.start);
  for (const MoveRecord& m : r.moves) ASSERT_TRUE(g.Play(m.move).ok()) << m.san;
  if (r.end == GameEnd::kNormal) {
    EXPECT_EQ(g.Outcome().result, r.result);
    EXPECT_EQ(g.Outcome().termination, r.board);
  }
}

struct Pair {
  std::unique_ptr<UciEngine> white, black;
  GameRecord Play(const Opening& o, const GameSettings& s) {
    UciEngine* e[2] = {white.get(), black.get()};
    return PlayGame(e, o, s);
  }
};

TEST(Game, CheckmateEndsTheGameNormally) {
  Pair p{Engine("w"), Engine("b")};
  GameRecord r = p.Play(FromFen("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"), Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kNormal);
  EXPECT_EQ(r.board, Termination::kCheckmate);
  EXPECT_EQ(r.result, GameResult::kWhiteWins);
  EXPECT_EQ(r.reason, "White mates");
  ASSERT_EQ(r.moves.size(), 1u);
  EXPECT_EQ(r.moves[0].san, "Ra8#");
  EXPECT_EQ(r.moves[0].depth, 1);
  ExpectLegalReplay(r);
}

TEST(Game, FullGameFromTheStartIsLegalAndEndsByTheRules) {
  Pair p{Engine("w"), Engine("b")};
  GameRecord r = p.Play(Opening{}, Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kNormal) << r.reason;
  EXPECT_NE(r.result, GameResult::kOngoing);
  EXPECT_GT(r.moves.size(), 10u);
  ExpectLegalReplay(r);
  // A second game with the same processes.
  GameRecord again = p.Play(Opening{}, Settings("10+0.1"));
  EXPECT_EQ(again.end, GameEnd::kNormal);
  EXPECT_EQ(p.white->starts(), 1);
}

TEST(Game, BookMovesArePlayedFirst) {
  Pair p{Engine("w"), Engine("b")};
  Position start = Position::StartPosition();
  Opening o{.start = start, .moves = {ParseUciMove(start, "e2e4").value()}};
  GameSettings s = Settings("10+0.1");
  s.adjudication.max_moves = 3;
  GameRecord r = p.Play(o, s);
  ASSERT_GE(r.moves.size(), 2u);
  EXPECT_TRUE(r.moves[0].book);
  EXPECT_EQ(r.moves[0].san, "e4");
  EXPECT_FALSE(r.moves[1].book);
  EXPECT_EQ(r.end, GameEnd::kAdjudication);
  EXPECT_EQ(r.result, GameResult::kDraw);
  EXPECT_EQ(r.moves.size(), 6u);  // maximum length counts book plies
}

// GameSettings.plies counts the engines' moves as they are played (a worker's heartbeats report
// it), not the book's.
TEST(Game, PliesCountTheEnginesMoves) {
  Pair p{Engine("w"), Engine("b")};
  Position start = Position::StartPosition();
  Opening o{.start = start, .moves = {ParseUciMove(start, "e2e4").value()}};
  GameSettings s = Settings("10+0.1");
  s.adjudication.max_moves = 3;
  std::atomic<uint64_t> plies{7};
  s.plies = &plies;
  GameRecord r = p.Play(o, s);
  ASSERT_EQ(r.moves.size(), 6u);
  EXPECT_EQ(plies.load(), 7u + 5u) << "one book move, five of the engines";
}

TEST(Game, CrashIsADisconnectAndTheEngineRestartsForTheNextGame) {
  Pair p{Engine("w"), Engine("b", {"--crash", "--after", "3"})};
  for (int game = 0; game < 2; ++game) {
    GameRecord r = p.Play(Opening{}, Settings("10+0.1"));
    EXPECT_EQ(r.end, GameEnd::kDisconnect);
    EXPECT_EQ(r.result, GameResult::kWhiteWins);
    EXPECT_EQ(r.faulty, kBlack);
    EXPECT_EQ(r.moves.size(), 7u);  // Black's fourth `go` crashes it
  }
  EXPECT_EQ(p.black->starts(), 2);
}

TEST(Game, HangIsAStall) {
  Pair p{Engine("w", {"--hang", "--after", "2"}), Engine("b")};
  GameRecord r = p.Play(Opening{}, Settings("movetime=0.1"));
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_EQ(r.moves.size(), 4u);
  // The next game starts a fresh process, which plays two moves again.
  r = p.Play(Opening{}, Settings("movetime=0.1"));
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.moves.size(), 4u);
  EXPECT_EQ(p.white->starts(), 2);
}

TEST(Game, IgnoringStopIsAStall) {
  Pair p{Engine("w"), Engine("b", {"--ignore-stop", "--after", "1"})};
  GameRecord r = p.Play(Opening{}, Settings("movetime=0.1"));
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kWhiteWins);
  EXPECT_EQ(r.moves.size(), 3u);
}

TEST(Game, DepthLimitedSearchThatNeverEndsIsAStall) {
  Pair p{Engine("w", {"--hang"}), Engine("b")};
  GameSettings s = Settings("depth=3");
  s.no_clock_timeout = Millis(200);
  GameRecord r = p.Play(Opening{}, s);
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
}

TEST(Game, IllegalMoveLosesAndIsRecorded) {
  Pair p{Engine("w", {"--illegal", "--after", "1"}), Engine("b")};
  GameRecord r = p.Play(Opening{}, Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kIllegalMove);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_EQ(r.moves.size(), 2u);
  EXPECT_FALSE(r.illegal_move.empty());
  EXPECT_FALSE(ParseUciMove(Position::FromFen(r.illegal_fen).value(), r.illegal_move).ok());
  EXPECT_NE(r.reason.find(r.illegal_move), std::string::npos);
}

TEST(Game, GarbageAndNoneAreIllegalMoves) {
  Pair p{Engine("w"), Engine("b", {"--garbage", "--after", "2"})};
  GameRecord r = p.Play(Opening{}, Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kIllegalMove);
  EXPECT_EQ(r.illegal_move, "xyzzy");
  EXPECT_EQ(r.result, GameResult::kWhiteWins);

  Pair q{Engine("w", {"--none"}), Engine("b")};
  r = q.Play(Opening{}, Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kIllegalMove);
  EXPECT_EQ(r.illegal_move, "(none)");
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_TRUE(r.moves.empty());
}

TEST(Game, SlowStartWithinTheTimeoutPlaysOtherwiseDisconnects) {
  Pair ok{Engine("w", {"--slow-start", "300"}), Engine("b")};
  GameSettings s = Settings("10+0.1");
  s.adjudication.max_moves = 2;
  GameRecord r = ok.Play(Opening{}, s);
  EXPECT_EQ(r.end, GameEnd::kAdjudication);

  Pair late{Engine("w", {"--slow-start", "3000"}, EngineTimeouts{.handshake = Millis(100)}),
            Engine("b")};
  r = late.Play(Opening{}, s);
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_NE(r.reason.find("uciok"), std::string::npos);
}

TEST(Game, FloodingEngineIsDrainedAndBounded) {
  Pair p{Engine("w", {"--flood", "3000000"}), Engine("b")};
  GameSettings s = Settings("10+0.1");
  s.adjudication.max_moves = 4;
  GameRecord r = p.Play(Opening{}, s);
  EXPECT_EQ(r.end, GameEnd::kAdjudication) << r.reason;
  EXPECT_EQ(r.moves.size(), 8u);
  Subprocess* proc = p.white->process();
  ASSERT_NE(proc, nullptr);
  EXPECT_GE(proc->StdoutBytes(), 4u * 3000000);
  // stderr is drained by the I/O thread on its own schedule: wait for the last bytes.
  for (int i = 0; i < 1000 && proc->StderrBytes() < 4u * 3000000; ++i) usleep(10000);
  EXPECT_GE(proc->StderrBytes(), 4u * 3000000);
  EXPECT_LE(proc->StderrTail().size(), ProcessLimits{}.stderr_ring_bytes);
}

TEST(Game, SleepingPastTheTimeIsATimeForfeitWithTheOverrun) {
  Pair p{Engine("w"), Engine("b", {"--sleep-past", "250", "--after", "1"})};
  GameRecord r = p.Play(Opening{}, Settings("0.3"));
  EXPECT_EQ(r.end, GameEnd::kTimeForfeit);
  EXPECT_EQ(r.result, GameResult::kWhiteWins);
  EXPECT_EQ(r.faulty, kBlack);
  EXPECT_GT(r.overrun, Millis(50));  // at least the margin; the engine slept 250 ms too long
  EXPECT_EQ(r.moves.size(), 3u);
}

TEST(Game, FlagFallAgainstABareKingIsADraw) {
  // White (queen) oversleeps; Black has a bare king and cannot mate: draw.
  Pair p{Engine("w", {"--sleep-past", "200"}), Engine("b")};
  GameRecord r = p.Play(FromFen("4k3/8/8/8/8/8/8/KQ6 w - - 0 1"), Settings("0.2"));
  EXPECT_EQ(r.end, GameEnd::kTimeForfeit);
  EXPECT_EQ(r.result, GameResult::kDraw);
  EXPECT_NE(r.reason.find("cannot checkmate"), std::string::npos);
  // The bare king's flag falls: the queen side can mate, so it wins.
  Pair q{Engine("w"), Engine("b", {"--sleep-past", "200"})};
  r = q.Play(FromFen("4k3/8/8/8/8/8/8/KQ6 w - - 0 1"), Settings("0.2"));
  EXPECT_EQ(r.end, GameEnd::kTimeForfeit);
  EXPECT_EQ(r.result, GameResult::kWhiteWins);
}

TEST(Game, OnlinePerMoveLimitAutoMovesOnceThenForfeits) {
  Pair p{Engine("w", {"--sleep-past", "150", "--after", "1"}), Engine("b")};
  GameRecord r = p.Play(Opening{}, Settings("movetime=0.1,forfeit=2"));
  EXPECT_EQ(r.end, GameEnd::kTimeForfeit);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  ASSERT_EQ(r.moves.size(), 4u);
  EXPECT_FALSE(r.moves[0].auto_move);
  EXPECT_TRUE(r.moves[2].auto_move);  // the first expiry: a move is made for White
}

// The Laws at every overrun: whatever way an engine's flag falls (a late move, a stall past its
// clock, a crash with its clock running, a per-move-limit forfeit), it loses unless the opponent
// cannot checkmate, and then it is a draw; the termination still says what the engine did.
// Without a clock there is no flag: a plain loss. White has K+Q, Black a bare king.
constexpr char kQueenVsBareKing[] = "4k3/8/8/8/8/8/8/KQ6 w - - 0 1";

TEST(FlagFall, StallUnderAClockAgainstABareKingIsADraw) {
  Pair p{Engine("w", {"--hang"}), Engine("b")};
  GameRecord r = p.Play(FromFen(kQueenVsBareKing), Settings("0.2"));
  EXPECT_EQ(r.end, GameEnd::kStall) << "still counted as the engine's stall";
  EXPECT_EQ(r.faulty, kWhite);
  EXPECT_EQ(r.result, GameResult::kDraw) << r.reason;
  EXPECT_NE(r.reason.find("cannot checkmate"), std::string::npos) << r.reason;
  // Ignoring `stop` is the same.
  Pair q{Engine("w", {"--ignore-stop"}), Engine("b")};
  r = q.Play(FromFen(kQueenVsBareKing), Settings("movetime=0.1"));
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kDraw) << r.reason;
}

TEST(FlagFall, StallOfTheBareKingLoses) {
  Pair p{Engine("w"), Engine("b", {"--hang"})};
  GameRecord r = p.Play(FromFen(kQueenVsBareKing), Settings("0.2"));
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kWhiteWins) << "the queen side can mate";
}

TEST(FlagFall, StallWithoutAClockIsAPlainLoss) {
  Pair p{Engine("w", {"--hang"}), Engine("b")};
  GameSettings s = Settings("depth=3");
  s.no_clock_timeout = Millis(200);
  GameRecord r = p.Play(FromFen(kQueenVsBareKing), s);
  EXPECT_EQ(r.end, GameEnd::kStall);
  EXPECT_EQ(r.result, GameResult::kBlackWins) << "no clock, no flag: the Laws' exception is moot";
}

TEST(FlagFall, CrashOnItsOwnTurnAgainstABareKingIsADraw) {
  Pair p{Engine("w", {"--crash"}), Engine("b")};
  GameRecord r = p.Play(FromFen(kQueenVsBareKing), Settings("1+0.1"));
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_EQ(r.faulty, kWhite);
  EXPECT_EQ(r.result, GameResult::kDraw) << r.reason;
}

TEST(FlagFall, CrashDuringTheOpponentsTimeAgainstABareKingIsADraw) {
  // White moves once and exits while Black thinks; at its next turn its clock can only fall.
  Pair p{Engine("w", {"--exit-after-move"}), Engine("b")};
  GameRecord r = p.Play(FromFen(kQueenVsBareKing), Settings("1+0.1"));
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_EQ(r.faulty, kWhite);
  EXPECT_EQ(r.moves.size(), 2u);
  EXPECT_EQ(r.result, GameResult::kDraw) << r.reason;
  // The bare king's side crashing loses: White can mate.
  Pair q{Engine("w"), Engine("b", {"--exit-after-move"})};
  r = q.Play(FromFen(kQueenVsBareKing), Settings("1+0.1"));
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_EQ(r.result, GameResult::kWhiteWins) << r.reason;
}

TEST(FlagFall, PerMoveLimitForfeitAfterAnAutoMoveThatLeavesABareKingIsADraw) {
  // White's first overrun: the arbiter plays its (legal) move, Qxh1, which takes Black's last
  // piece. Its second overrun forfeits, and Black, a bare king, cannot checkmate: draw.
  Pair p{Engine("w", {"--sleep-past", "150"}), Engine("b")};
  GameRecord r =
      p.Play(FromFen("4k3/8/8/8/8/8/8/KQ5r w - - 0 1"), Settings("movetime=0.1,forfeit=2"));
  ASSERT_GE(r.moves.size(), 2u);
  EXPECT_TRUE(r.moves[0].auto_move);
  EXPECT_EQ(r.moves[0].san, "Qxh1");
  EXPECT_EQ(r.end, GameEnd::kTimeForfeit);
  EXPECT_EQ(r.faulty, kWhite);
  EXPECT_EQ(r.result, GameResult::kDraw) << r.reason;
}

TEST(Game, ResignAndDrawAdjudication) {
  // White is a queen up: both engines' material scores agree.
  Pair p{Engine("w"), Engine("b")};
  GameSettings s = Settings("10+0.1");
  s.adjudication.resign_move_count = 2;
  s.adjudication.resign_score = 600;
  GameRecord r = p.Play(FromFen("r3k3/pppp4/8/8/8/8/PPPP4/R2QK3 w - - 0 1"), s);
  EXPECT_EQ(r.end, GameEnd::kAdjudication) << r.reason;
  EXPECT_EQ(r.result, GameResult::kWhiteWins);

  GameSettings d = Settings("10+0.1");
  d.adjudication.draw_move_number = 1;
  d.adjudication.draw_move_count = 2;
  d.adjudication.draw_score = 50;
  r = p.Play(FromFen("4k3/pppp4/8/8/8/8/PPPP4/4K3 w - - 0 1"), d);
  EXPECT_EQ(r.end, GameEnd::kAdjudication) << r.reason;
  EXPECT_EQ(r.result, GameResult::kDraw);
}

TEST(Game, StockfishSelfPlayAtFixedNodes) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no stockfish"
                 << " (scripts/install-deps.sh installs it)";
  EngineSpec sf{.name = "sf", .cmd = "/usr/games/stockfish", .options = {{"Hash", "4"}}};
  Pair p{std::make_unique<UciEngine>(sf), std::make_unique<UciEngine>(sf)};
  GameSettings s = Settings("nodes=2000");
  s.adjudication.max_moves = 60;
  GameRecord r = p.Play(Opening{}, s);
  EXPECT_TRUE(r.end == GameEnd::kNormal || r.end == GameEnd::kAdjudication) << r.reason;
  ExpectLegalReplay(r);
  EXPECT_EQ(r.moves[0].score.kind, UciScore::kCp);
  EXPECT_GT(r.moves[0].depth, 0);
}

// The lines an engine started with `--log FILE` received.
std::vector<std::string> LoggedLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// The test engine reads castling in Chess960 form only once told UCI_Chess960 (the FEN alone does
// not switch it), and plays a mate in one first: here castling (king g1 stays, rook h1 jumps to
// f1) is the only mate (the king blocks the rook's own way to f1), so the game is one castling
// move long, and only if the option was sent.
TEST(Game, Chess960StartSetsUciChess960AndCastlesLegally) {
  Opening o = FromFen("4rkr1/4p1p1/8/8/8/8/8/6KR w H - 0 1");
  ASSERT_TRUE(o.start.IsChess960());
  const std::string log_w = ::testing::TempDir() + "/c960-w.log";
  const std::string log_b = ::testing::TempDir() + "/c960-b.log";
  std::remove(log_w.c_str());
  std::remove(log_b.c_str());
  GameSettings s = Settings("10+0.1");
  Pair p{Engine("w", {"--log", log_w}), Engine("b", {"--log", log_b})};
  GameRecord r = p.Play(o, s);
  ASSERT_EQ(r.end, GameEnd::kNormal) << r.reason;
  ExpectLegalReplay(r);
  ASSERT_EQ(r.moves.size(), 1u);
  EXPECT_EQ(r.moves[0].move.KindOf(), Move::kCastling);
  EXPECT_EQ(r.moves[0].san, "O-O#");
  EXPECT_EQ(r.result, GameResult::kWhiteWins);
  for (const std::string& log : {log_w, log_b}) {
    const std::vector<std::string> lines = LoggedLines(log);
    auto option = std::find(lines.begin(), lines.end(), "setoption name UCI_Chess960 value true");
    auto position = std::find_if(lines.begin(), lines.end(),
                                 [](const std::string& l) { return l.rfind("position ", 0) == 0; });
    EXPECT_NE(option, lines.end()) << log;
    EXPECT_LT(option, position) << log << ": the option comes before the first position";
  }
  // A standard start: the option is never turned on.
  std::remove(log_w.c_str());
  Pair std_pair{Engine("w", {"--log", log_w}), Engine("b")};
  GameSettings short_game = Settings("10+0.1");
  short_game.adjudication.max_moves = 4;
  std_pair.Play(Opening{}, short_game);
  const std::vector<std::string> std_lines = LoggedLines(log_w);
  EXPECT_FALSE(std_lines.empty());
  EXPECT_EQ(
      std::count(std_lines.begin(), std_lines.end(), "setoption name UCI_Chess960 value true"), 0);
  if (access("/usr/games/stockfish", X_OK) != 0) return;
  EngineSpec sf{.name = "sf", .cmd = "/usr/games/stockfish", .options = {{"Hash", "4"}}};
  Pair q{std::make_unique<UciEngine>(sf), std::make_unique<UciEngine>(sf)};
  GameSettings n = Settings("nodes=3000");
  n.adjudication.max_moves = 40;
  r = q.Play(o, n);
  EXPECT_TRUE(r.end == GameEnd::kNormal || r.end == GameEnd::kAdjudication) << r.reason;
  ExpectLegalReplay(r);
}

}  // namespace
}  // namespace arbiter::match

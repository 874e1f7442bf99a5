// Drives the real `arbiter uci` process over pipes: handshake, every `go` form, stop, ponder,
// `go perft` against Stockfish's, bench determinism, malformed input and self-play legality.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"
#include "tests/search/engine_process.h"

namespace arbiter {
namespace {

using testing::EngineProcess;

constexpr char kStockfish[] = "/usr/games/stockfish";

std::unique_ptr<EngineProcess> StartArbiter() {
  auto p = std::make_unique<EngineProcess>(std::vector<std::string>{ARBITER_BINARY, "uci"});
  EXPECT_TRUE(p->Started());
  return p;
}

std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The value following `key` in an info line, or "" when absent.
std::string Field(const std::string& line, const std::string& key) {
  auto w = Words(line);
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == key) return w[i + 1];
  return "";
}

// Plays `bestmove` (checked legal) on `pos`; fails the test if it is not a legal move.
void ExpectLegalBestmove(const Position& pos, const std::string& bestmove_line) {
  auto w = Words(bestmove_line);
  ASSERT_GE(w.size(), 2u) << bestmove_line;
  ASSERT_EQ(w[0], "bestmove");
  auto m = ParseUciMove(pos, w[1]);
  ASSERT_TRUE(m.ok()) << bestmove_line << " in " << pos.Fen() << ": " << m.status();
  if (w.size() >= 4) {
    ASSERT_EQ(w[2], "ponder");
    Position after = pos;
    UndoInfo undo;
    after.DoMove(*m, undo);
    EXPECT_TRUE(ParseUciMove(after, w[3]).ok()) << "illegal ponder move: " << bestmove_line;
  }
}

TEST(UciProcess, Handshake) {
  auto e = StartArbiter();
  e->Send("uci");
  auto lines = e->ReadUntil("uciok");
  ASSERT_FALSE(lines.empty()) << "no uciok";
  std::set<std::string> options;
  bool id_name = false;
  for (const auto& l : lines) {
    if (l.rfind("id name ", 0) == 0) id_name = true;
    if (l.rfind("option name ", 0) == 0) options.insert(l.substr(12, l.find(" type ") - 12));
  }
  EXPECT_TRUE(id_name);
  for (const char* o : {"Hash", "Threads", "Move Overhead", "UCI_Chess960", "FutilityMargin",
                        "KnightValueMg", "MobilityWeight"})
    EXPECT_TRUE(options.count(o)) << "missing option " << o;
  e->Send("isready");
  EXPECT_EQ(e->ReadLine(), "readyok");
  e->Send("quit");
  EXPECT_EQ(e->WaitExit(), 0);
}

TEST(UciProcess, GoDepthReportsFullInfo) {
  auto e = StartArbiter();
  e->Send("position startpos moves e2e4 e7e5");
  e->Send("go depth 6");
  auto lines = e->ReadUntil("bestmove");
  ASSERT_FALSE(lines.empty());
  int max_depth = 0;
  for (const auto& l : lines) {
    if (l.rfind("info depth", 0) != 0) continue;
    max_depth = std::max(max_depth, std::stoi(Field(l, "depth")));
    for (const char* key : {"seldepth", "score", "nodes", "nps", "time", "hashfull", "pv"})
      EXPECT_NE(l.find(std::string(" ") + key + " "), std::string::npos) << key << " in " << l;
    EXPECT_TRUE(Field(l, "score") == "cp" || Field(l, "score") == "mate") << l;
  }
  EXPECT_EQ(max_depth, 6);
  Position pos = Position::StartPosition();
  for (const char* mv : {"e2e4", "e7e5"}) {
    UndoInfo u;
    pos.DoMove(*ParseUciMove(pos, mv), u);
  }
  ExpectLegalBestmove(pos, lines.back());
}

TEST(UciProcess, EveryGoForm) {
  auto e = StartArbiter();
  const std::string fen = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4";
  const Position pos = *Position::FromFen(fen);
  Position black = pos;
  UndoInfo u;
  black.DoMove(*ParseUciMove(black, "e1g1"), u);
  struct Case {
    std::string go;
    bool black_to_move;
  };
  const std::vector<Case> cases = {
      {"go movetime 150", false},
      {"go nodes 20000", false},
      {"go depth 4", false},
      {"go wtime 3000 btime 3000 winc 50 binc 50", false},
      {"go wtime 2000 btime 2000 movestogo 5", false},
      {"go wtime 500 btime 9000 winc 0 binc 100", true},
      {"go btime 40 wtime 40 binc 10 winc 10", true},
      {"go btime 3000 wtime 3000 movestogo 1", true},
      {"go wtime 0 btime 0", false},
      {"go mate 2", false},
  };
  for (const auto& c : cases) {
    e->Send("position fen " + fen + (c.black_to_move ? " moves e1g1" : ""));
    e->Send(c.go);
    auto lines = e->ReadUntil("bestmove");
    ASSERT_FALSE(lines.empty()) << "no bestmove for " << c.go;
    ExpectLegalBestmove(c.black_to_move ? black : pos, lines.back());
    if (c.go.find("nodes") != std::string::npos)
      for (const auto& l : lines)
        if (l.rfind("info depth", 0) == 0) {
          EXPECT_LE(std::stoull(Field(l, "nodes")), 20000u) << l;
        }
  }
}

TEST(UciProcess, InfiniteWaitsForStopAndStopAnswers) {
  auto e = StartArbiter();
  // K v K: every iteration is instant, so the search reaches its maximum depth at once and must
  // still wait for `stop` before answering.
  e->Send("position fen 8/8/8/3k4/8/8/8/4K3 w - - 0 1");
  e->Send("go infinite");
  e->Send("isready");
  auto lines = e->ReadUntil("readyok");
  ASSERT_FALSE(lines.empty());
  for (const auto& l : lines) {
    EXPECT_NE(l.rfind("bestmove", 0), 0u) << "answered before stop";
  }
  e->Send("stop");
  lines = e->ReadUntil("bestmove", std::chrono::seconds(30));
  ASSERT_FALSE(lines.empty()) << "no bestmove after stop";
  ExpectLegalBestmove(*Position::FromFen("8/8/8/3k4/8/8/8/4K3 w - - 0 1"), lines.back());
}

TEST(UciProcess, StopDuringDeepSearch) {
  auto e = StartArbiter();
  e->Send("position startpos");
  e->Send("go infinite");
  ASSERT_FALSE(e->ReadUntil("info depth 4").empty());
  const auto sent = std::chrono::steady_clock::now();
  e->Send("stop");
  auto lines = e->ReadUntil("bestmove", std::chrono::seconds(30));
  ASSERT_FALSE(lines.empty()) << "no bestmove after stop";
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - sent);
  RecordProperty("stop_latency_us", int(latency.count()));
  ExpectLegalBestmove(Position::StartPosition(), lines.back());
  // The engine is still usable afterwards.
  e->Send("isready");
  EXPECT_EQ(e->ReadLine(), "readyok");
}

TEST(UciProcess, PonderThenPonderhit) {
  auto e = StartArbiter();
  e->Send("position startpos moves d2d4");
  e->Send("go ponder wtime 2000 btime 2000 winc 20 binc 20");
  ASSERT_FALSE(e->ReadUntil("info depth 2").empty());
  e->Send("ponderhit");
  auto lines = e->ReadUntil("bestmove");
  ASSERT_FALSE(lines.empty());
  Position pos = Position::StartPosition();
  UndoInfo u;
  pos.DoMove(*ParseUciMove(pos, "d2d4"), u);
  ExpectLegalBestmove(pos, lines.back());
}

TEST(UciProcess, MateScoreReported) {
  auto e = StartArbiter();
  // Back-rank mate in one for White, and Black to move being mated in one after a waiting move.
  e->Send("position fen 6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1");
  e->Send("go depth 5");
  auto lines = e->ReadUntil("bestmove");
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines.back().substr(0, 13), "bestmove d1d8");
  EXPECT_NE(lines[lines.size() - 2].find("score mate 1 "), std::string::npos)
      << lines[lines.size() - 2];
  e->Send("position fen 3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 0 1");
  e->Send("go depth 3");
  lines = e->ReadUntil("bestmove");
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back(), "bestmove (none)");
  EXPECT_NE(lines[lines.size() - 2].find("mate 0"), std::string::npos);
}

// `go perft` divide output of two engines, as sorted lines.
std::vector<std::string> PerftLines(EngineProcess& e, const std::string& fen, int depth) {
  e.Send("position fen " + fen);
  e.Send("go perft " + std::to_string(depth));
  auto lines = e.ReadUntil("Nodes searched", std::chrono::seconds(120));
  std::vector<std::string> out;
  for (const auto& l : lines)
    if (l.find(": ") != std::string::npos && l.rfind("info", 0) != 0) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(UciProcess, GoPerftMatchesStockfish) {
  EngineProcess sf({kStockfish});
  ASSERT_TRUE(sf.Started());
  sf.Send("uci");
  ASSERT_FALSE(sf.ReadUntil("uciok").empty()) << "Stockfish did not start (" << kStockfish << ")";
  auto e = StartArbiter();
  auto suite = testing::LoadSuite("standard.epd");
  ASSERT_GT(suite.size(), 20u);
  std::vector<std::string> fens = {suite[0].fen, suite[1].fen};
  for (size_t i = 5; i < suite.size(); i += 17) fens.push_back(suite[i].fen);
  for (const auto& fen : fens) {
    auto mine = PerftLines(*e, fen, 3);
    auto theirs = PerftLines(sf, fen, 3);
    ASSERT_GT(theirs.size(), 1u) << fen;
    EXPECT_EQ(mine, theirs) << fen;
  }
  // Chess960 with the option on: king-takes-rook castling notation on both sides.
  auto frc = testing::LoadSuite("fischer960.epd");
  sf.Send("setoption name UCI_Chess960 value true");
  e->Send("setoption name UCI_Chess960 value true");
  for (size_t i = 0; i < frc.size(); i += 240) {
    auto mine = PerftLines(*e, frc[i].fen, 3);
    auto theirs = PerftLines(sf, frc[i].fen, 3);
    ASSERT_GT(theirs.size(), 1u) << frc[i].fen;
    EXPECT_EQ(mine, theirs) << frc[i].fen;
  }
  sf.Send("quit");
}

uint64_t BenchNodes(const std::string& output) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Nodes searched", 0) == 0) return std::stoull(line.substr(line.find(':') + 1));
  return 0;
}

std::string RunBenchCommand(int depth) {
  EngineProcess p({ARBITER_BINARY, "bench", "--depth", std::to_string(depth)});
  std::string all;
  while (auto line = p.ReadLine(std::chrono::seconds(300))) all += *line + "\n";
  EXPECT_EQ(p.WaitExit(), 0);
  return all;
}

TEST(UciProcess, BenchSignatureIsDeterministic) {
  const uint64_t a = BenchNodes(RunBenchCommand(6));
  const uint64_t b = BenchNodes(RunBenchCommand(6));
  EXPECT_GT(a, 1000u);
  EXPECT_EQ(a, b);
  // The UCI `bench` command prints the same signature.
  auto e = StartArbiter();
  e->Send("bench 6");
  auto lines = e->ReadUntil("Nodes/second");
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_EQ(BenchNodes(all), a);
}

TEST(UciProcess, MalformedInputIsIgnored) {
  auto e = StartArbiter();
  for (const char* bad : {"",
                          "   ",
                          "garbage",
                          "position",
                          "position fen",
                          "position fen xyz",
                          "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
                          "position startpos moves e2e5",
                          "position startpos moves e2e4 zz",
                          "go depth",
                          "go depth abc",
                          "go wtime -x",
                          "go perft 0",
                          "go perft banana",
                          "setoption",
                          "setoption name",
                          "setoption name Hash value lots",
                          "setoption name Hash value 0",
                          "setoption name Nope value 3",
                          "setoption name UCI_Chess960 value maybe",
                          "stop",
                          "ponderhit",
                          "\x01\x02\xff",
                          "position startpos moves",
                          "bench x"})
    ASSERT_TRUE(e->Send(bad));
  e->Send("isready");
  ASSERT_FALSE(e->ReadUntil("readyok").empty()) << "engine died on malformed input";
  // Rejected positions leave the last good one in place.
  e->Send("position startpos moves g1f3");
  e->Send("position fen not a fen at all");
  e->Send("go depth 3");
  auto lines = e->ReadUntil("bestmove");
  ASSERT_FALSE(lines.empty());
  Position pos = Position::StartPosition();
  UndoInfo u;
  pos.DoMove(*ParseUciMove(pos, "g1f3"), u);
  ExpectLegalBestmove(pos, lines.back());
  e->Send("quit");
  EXPECT_EQ(e->WaitExit(), 0);
}

// Quick self-play from suite positions: every bestmove is checked with the core.
int SelfPlay(const std::vector<std::string>& fens, bool chess960, int max_plies,
             const std::string& go) {
  auto e = StartArbiter();
  if (chess960) e->Send("setoption name UCI_Chess960 value true");
  int checked = 0;
  for (const auto& fen : fens) {
    e->Send("ucinewgame");
    Position pos = *Position::FromFen(fen);
    std::string moves;
    for (int ply = 0; ply < max_plies; ++ply) {
      MoveList legal;
      if (GenerateLegal(pos, legal) == 0 || pos.HalfmoveClock() >= 100) break;
      e->Send("position fen " + fen + (moves.empty() ? "" : " moves" + moves));
      e->Send(go);
      auto lines = e->ReadUntil("bestmove");
      EXPECT_FALSE(lines.empty()) << "no bestmove in " << pos.Fen();
      if (lines.empty()) return checked;
      auto w = Words(lines.back());
      auto m = ParseUciMove(pos, w.size() > 1 ? w[1] : "");
      EXPECT_TRUE(m.ok()) << lines.back() << " in " << pos.Fen();
      if (!m.ok()) return checked;
      ++checked;
      moves += " " + w[1];
      UndoInfo u;
      pos.DoMove(*m, u);
    }
  }
  return checked;
}

// The default run samples the suites; the slow build (ARBITER_SELFPLAY_FULL) plays from every
// standard position and a tenth of the Chess960 ones, longer and at two search budgets.
#ifdef ARBITER_SELFPLAY_FULL
constexpr size_t kStandardStep = 1, kChess960Step = 10;
constexpr int kPlies = 80, kMinPositions = 10000;
const std::vector<std::string> kGoCommands = {"go nodes 1500", "go depth 4"};
#else
constexpr size_t kStandardStep = 4, kChess960Step = 96;
constexpr int kPlies = 40, kMinPositions = 1000;
const std::vector<std::string> kGoCommands = {"go nodes 1500"};
#endif

TEST(UciProcess, NoIllegalMoveInSelfPlay) {
  auto suite = testing::LoadSuite("standard.epd");
  auto frc = testing::LoadSuite("fischer960.epd");
  int checked = 0;
  for (const std::string& go : kGoCommands) {
    std::vector<std::string> fens;
    for (size_t i = 0; i < suite.size(); i += kStandardStep) fens.push_back(suite[i].fen);
    checked += SelfPlay(fens, false, kPlies, go);
    fens.clear();
    for (size_t i = 0; i < frc.size(); i += kChess960Step) fens.push_back(frc[i].fen);
    checked += SelfPlay(fens, true, kPlies, go);
  }
  RecordProperty("positions_checked", checked);
  EXPECT_GE(checked, kMinPositions);
}

}  // namespace
}  // namespace arbiter

// CECP (xboard protocol 2) engines: detection and handshake, games against UCI engines with the
// Laws still arbiter's (resignations, false claims, illegal and refused moves, stalls), and
// Debian's xboard engines (fairymax, phalanx) when installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "engine/rules.h"
#include "match/game.h"
#include "match/game_pgn.h"
#include "match/perft_diff.h"
#include "match/uci_engine.h"
#include "match/wire.h"

namespace arbiter::match {
namespace {

EngineSpec Cecp(std::string name, std::vector<std::string> args = {},
                Protocol protocol = Protocol::kXboard) {
  return EngineSpec{.name = std::move(name),
                    .cmd = CECP_TEST_ENGINE,
                    .args = std::move(args),
                    .protocol = protocol};
}

EngineSpec Uci(std::string name) { return EngineSpec{.name = std::move(name), .cmd = TEST_ENGINE}; }

GameSettings Settings(std::string_view tc, int max_moves = 30) {
  GameSettings s;
  s.tc[0] = s.tc[1] = ParseTimeControl(tc).value();
  s.stop_grace = Millis(300);
  s.adjudication.max_moves = max_moves;
  return s;
}

GameRecord Play(EngineSpec white, EngineSpec black, const GameSettings& s, const Opening& o = {}) {
  UciEngine w(std::move(white)), b(std::move(black));
  UciEngine* e[2] = {&w, &b};
  return PlayGame(e, o, s);
}

void ExpectLegalReplay(const GameRecord& r) {
  Game g(r.start);
  for (const MoveRecord& m : r.moves) ASSERT_TRUE(g.Play(m.move).ok()) << m.san;
}

std::string ReadFile(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// An engine that answers `uci` in xboard style is switched to CECP at once, not after the
// handshake timeout.
TEST(Cecp, XboardErrorToUciSwitchesAtOnce) {
  UciEngine e(Cecp("x", {"--uci-error"}, Protocol::kUci), {.handshake = Millis(10000)});
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(e.Start().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(e.protocol(), Protocol::kXboard);
  EXPECT_EQ(e.id_name(), "cecp test");
  EXPECT_TRUE(e.HasOption("Style"));
}

TEST(Cecp, SilentHandshakeShowsWhatTheEnginePrinted) {
  UciEngine e(EngineSpec{.name = "cat", .cmd = "/bin/cat"}, {.handshake = Millis(300)});
  absl::Status st = e.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no 'uciok' within 300 ms (it printed: uci)"), std::string::npos)
      << st;
}

TEST(Cecp, ProtocolOneEngineWithoutFeaturesStarts) {
  UciEngine e(Cecp("old", {"--no-features"}), {.handshake = Millis(300)});
  ASSERT_TRUE(e.Start().ok());
  EXPECT_EQ(e.protocol(), Protocol::kXboard);
}

TEST(Cecp, SpecTakesProto) {
  EXPECT_EQ(ParseEngineSpec("cmd=/x,proto=xboard")->protocol, Protocol::kXboard);
  EXPECT_EQ(ParseEngineSpec("cmd=/x,proto=uci")->protocol, Protocol::kUci);
  EXPECT_FALSE(ParseEngineSpec("cmd=/x,proto=winboard2").ok());
}

// The game as the protocol wants it: new/force, the control, usermove, time/otim in
// centiseconds, go, then force again after each move.
TEST(Cecp, PlaysAUciEngineWithTheProtocolsCommands) {
  const std::string log = testing::TempDir() + "/cecp_plays.log";
  std::remove(log.c_str());
  GameRecord r = Play(Cecp("x", {"--log", log}), Uci("u"), Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kAdjudication) << r.reason;
  EXPECT_EQ(r.moves.size(), 60u);
  ExpectLegalReplay(r);
  EXPECT_EQ(r.moves[0].depth, 1);  // from its thinking line
  EXPECT_EQ(r.moves[0].score.value, 12);
  const std::string sent = ReadFile(log);
  for (const char* want : {"xboard\nprotover 2\n", "accepted usermove\n", "new\n", "force\n",
                           "level 0 0:10 0.1\n", "time 1000\notim 1000\ngo\n", "usermove "})
    EXPECT_NE(sent.find(want), std::string::npos) << want << "\n" << sent.substr(0, 600);
}

TEST(Cecp, SanEngineAndSetboardFromABookPosition) {
  const Opening o{.start = Position::FromFen("4k3/8/8/8/8/8/4P3/4K2R w K - 0 1").value()};
  GameRecord r = Play(Uci("u"), Cecp("x", {"--san"}), Settings("10+0.1", 20), o);
  EXPECT_FALSE(IsFault(r.end)) << r.reason;
  EXPECT_GE(r.moves.size(), 2u);
  ExpectLegalReplay(r);
}

// An engine without setboard (Fairy-Max) gets a book position by `edit`: a first move makes it
// Black's turn when it is, and the castling rights it assumes are the position's. A position
// `edit` would misstate is refused, naming why.
TEST(Cecp, EditSetsUpABookPositionForAnEngineWithoutSetboard) {
  const std::string log = testing::TempDir() + "/cecp_edit.log";
  for (const char* fen : {"r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R w KQkq - 0 8",
                          "r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R b KQkq - 0 8"}) {
    std::remove(log.c_str());
    const Opening o{.start = Position::FromFen(fen).value()};
    for (int g = 0; g < 2; ++g) {
      EngineSpec x = Cecp("x", {"--no-setboard", "--log", log});
      GameRecord r = g == 0 ? Play(x, Uci("u"), Settings("10+0.1", 20), o)
                            : Play(Uci("u"), x, Settings("10+0.1", 20), o);
      EXPECT_FALSE(IsFault(r.end)) << fen << ": " << r.reason;
      EXPECT_GE(r.moves.size(), 4u) << fen;
      ExpectLegalReplay(r);
    }
    const std::string sent = ReadFile(log);
    EXPECT_EQ(sent.find("\nsetboard "), std::string::npos) << sent.substr(0, 400);
    EXPECT_NE(sent.find("edit\n#\nRa1\n"), std::string::npos) << sent.substr(0, 400);
    EXPECT_NE(sent.find("\nc\n"), std::string::npos) << sent.substr(0, 400);
    const bool black = std::string(fen).find(" b ") != std::string::npos;
    EXPECT_EQ(sent.find("usermove a2a3\nedit\n") != std::string::npos, black) << fen;
  }
  // Castling rights that `edit` would assume (king and rooks at home) but the position lacks.
  const Opening moved{.start = Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1").value()};
  GameRecord r = Play(Cecp("x", {"--no-setboard"}), Uci("u"), Settings("10+0.1"), moved);
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_NE(r.reason.find("`edit` cannot give it"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("castling rights 'KQkq'"), std::string::npos) << r.reason;
}

TEST(Cecp, ResignationLosesAndIsTheEnginesOwn) {
  GameRecord r = Play(Cecp("x", {"--resign", "--after", "2"}), Uci("u"), Settings("10+0.1"));
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_EQ(r.end, GameEnd::kResignation);
  EXPECT_FALSE(IsFault(r.end));
  EXPECT_EQ(GameEndName(r.end), "resignation");
  EXPECT_EQ(r.reason, "White resigns");
  EXPECT_EQ(r.moves.size(), 4u);
  // Through the wire as a resignation, not an adjudication.
  EXPECT_EQ(GameEndFromProto(GameEndToProto(r.end)), GameEnd::kResignation);
  // The PGN: the standard's Termination for a resignation is "normal"; the comment says who.
  const PgnGame pgn = ToPgnGame(r, {});
  EXPECT_EQ(pgn.termination, "normal");
  EXPECT_NE(pgn.comments.back().find("White resigns"), std::string::npos) << pgn.comments.back();
}

TEST(Cecp, FalseClaimsDecideNothing) {
  GameRecord r = Play(Uci("u"), Cecp("x", {"--false-claim", "--error-easy"}), Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kAdjudication) << r.reason;
  EXPECT_EQ(r.result, GameResult::kDraw);
  EXPECT_EQ(r.moves.size(), 60u);
}

TEST(Cecp, IllegalMoveLoses) {
  GameRecord r = Play(Cecp("x", {"--illegal", "--after", "1"}), Uci("u"), Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kIllegalMove);
  EXPECT_EQ(r.result, GameResult::kBlackWins);
  EXPECT_EQ(r.illegal_move, "a1a1");
}

TEST(Cecp, RefusingALegalMoveIsTheEnginesFault) {
  GameRecord r = Play(Uci("u"), Cecp("x", {"--reject-moves"}), Settings("10+0.1"));
  EXPECT_EQ(r.end, GameEnd::kIllegalMove);
  EXPECT_EQ(r.faulty, kBlack);
  EXPECT_NE(r.reason.find("refuses what arbiter sent: Illegal move: "), std::string::npos)
      << r.reason;
}

TEST(Cecp, HangIsAStallAfterTheMoveNowRequest) {
  GameRecord r = Play(Cecp("x", {"--hang", "--after", "1"}), Uci("u"), Settings("0.3+0"));
  EXPECT_EQ(r.end, GameEnd::kStall) << r.reason;
  EXPECT_EQ(r.faulty, kWhite);
}

TEST(Cecp, NodeLimitCannotBeSent) {
  GameRecord r = Play(Cecp("x"), Uci("u"), Settings("nodes=1000"));
  EXPECT_EQ(r.end, GameEnd::kDisconnect);
  EXPECT_NE(r.reason.find("CECP has no node limit"), std::string::npos) << r.reason;
}

TEST(Cecp, PerftCheckingRefusesCecpEngines) {
  UciEngine e(Cecp("x"));
  absl::StatusOr<PerftDiffReport> r =
      PerftDiff(e, Position::StartPosition().Fen(), 2, Millis(1000), PerftDialect{}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("CECP engine cannot be checked"), std::string::npos)
      << r.status();
}

// Fairy-Max has no setboard: from a book position it plays by `edit`, both colours, no fault.
TEST(Cecp, FairyMaxPlaysFromABookPosition) {
  if (access("/usr/games/fairymax", X_OK) != 0)
    GTEST_FAIL() << "fairymax not installed"
                 << " (scripts/install-deps.sh installs it)";
  const Opening o{
      .start = Position::FromFen("rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5")
                   .value()};
  for (int g = 0; g < 2; ++g) {
    EngineSpec x{.name = "x", .cmd = "/usr/games/fairymax", .protocol = Protocol::kXboard};
    GameRecord r = g == 0 ? Play(x, Uci("u"), Settings("2+0.05", 20), o)
                          : Play(Uci("u"), x, Settings("2+0.05", 20), o);
    EXPECT_FALSE(IsFault(r.end)) << r.reason;
    EXPECT_GE(r.moves.size(), 4u);
    ExpectLegalReplay(r);
  }
}

// Debian's xboard engines, detected without proto=: two games each against the UCI test
// engine, with no fault.
TEST(Cecp, DebianXboardEnginesPlayWithoutFaults) {
  for (const char* path : {"/usr/games/fairymax", "/usr/games/phalanx"}) {
    if (access(path, X_OK) != 0) {
      std::cerr << "skipped " << path << ": not installed\n";
      continue;
    }
    for (int g = 0; g < 2; ++g) {
      EngineSpec x{.name = "x", .cmd = path};
      GameRecord r = g == 0 ? Play(x, Uci("u"), Settings("2+0.05", 25))
                            : Play(Uci("u"), x, Settings("2+0.05", 25));
      EXPECT_FALSE(IsFault(r.end)) << path << ": " << r.reason;
      EXPECT_GE(r.moves.size(), 2u) << path;
      ExpectLegalReplay(r);
    }
  }
}

}  // namespace
}  // namespace arbiter::match

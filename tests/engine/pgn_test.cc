#include "engine/pgn.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/epd.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/rules.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"

namespace arbiter {
namespace {

Position Fen(const std::string& fen) {
  absl::StatusOr<Position> pos = Position::FromFen(fen);
  EXPECT_TRUE(pos.ok()) << fen << ": " << pos.status();
  return pos.ok() ? *pos : Position::StartPosition();
}

// Plays random legal moves from `start` until the game ends or `max_plies` are played, with a
// comment on some moves (some long, some with characters PGN comments cannot hold).
PgnGame RandomGame(const Position& start, std::mt19937& rng, int max_plies, int number) {
  PgnGame pgn;
  pgn.event = "Random \"quoted\" event";
  pgn.site = "arbiter test \\ suite";
  pgn.date = "2026.11.29";
  pgn.round = std::to_string(number);
  pgn.white = "Random A";
  pgn.black = "Random B";
  pgn.time_control = "10+0.1";
  pgn.extra_tags = {{"Opening", "random"}, {"GameId", std::to_string(number)}};
  pgn.start = start;
  Game game(start);
  while (game.Plies() < max_plies && !game.Outcome().IsOver()) {
    MoveList list;
    GenerateLegal(game.Current(), list);
    const Move m = list.moves[std::uniform_int_distribution<int>(0, list.size - 1)(rng)];
    EXPECT_TRUE(game.Play(m).ok());
    pgn.moves.push_back(m);
    std::string comment;
    switch (std::uniform_int_distribution<int>(0, 9)(rng)) {
      case 0:
        comment = "+0.31/12 0.105s";
        break;
      case 1:
        comment =
            "a long comment that certainly does not fit on one line of the movetext, so the "
            "writer has to wrap it across lines at word boundaries";
        break;
      case 2:
        comment = "braces } are replaced";
        break;
      default:
        break;
    }
    pgn.comments.push_back(comment);
  }
  pgn.result = std::string(ResultString(game.Outcome().result));
  if (game.Outcome().IsOver())
    pgn.termination = std::string(TerminationName(game.Outcome().termination));
  return pgn;
}

std::vector<PgnGame> RandomGames(const std::string& suite, int count, int max_plies,
                                 uint32_t seed) {
  std::vector<PerftSuiteLine> lines = testing::LoadSuite(suite);
  std::mt19937 rng(seed);
  std::vector<PgnGame> games;
  for (int i = 0; i < count && i < int(lines.size()); ++i)
    games.push_back(RandomGame(Fen(lines[i].fen), rng, max_plies, i + 1));
  return games;
}

std::string Expected(const PgnGame& game, size_t i) {
  std::string c = i < game.comments.size() ? game.comments[i] : "";
  for (char& ch : c)
    if (ch == '}') ch = ')';
  return c;
}

void ExpectSameGame(const PgnGame& want, const PgnGame& got) {
  EXPECT_EQ(got.event, want.event);
  EXPECT_EQ(got.site, want.site);
  EXPECT_EQ(got.date, want.date);
  EXPECT_EQ(got.round, want.round);
  EXPECT_EQ(got.white, want.white);
  EXPECT_EQ(got.black, want.black);
  EXPECT_EQ(got.result, want.result);
  EXPECT_EQ(got.time_control, want.time_control);
  EXPECT_EQ(got.termination, want.termination);
  EXPECT_EQ(got.extra_tags, want.extra_tags);
  EXPECT_EQ(got.start.Fen(), want.start.Fen());
  EXPECT_EQ(got.start.IsChess960(), want.start.IsChess960());
  ASSERT_EQ(got.moves.size(), want.moves.size()) << want.start.Fen();
  for (size_t i = 0; i < want.moves.size(); ++i) {
    ASSERT_EQ(got.moves[i], want.moves[i]) << "ply " << i + 1 << " from " << want.start.Fen();
    EXPECT_EQ(i < got.comments.size() ? got.comments[i] : "", Expected(want, i)) << "ply " << i;
  }
}

void ExpectLinesFit(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '[') {
      EXPECT_LE(line.size(), 79u) << line;
    }
  }
}

TEST(PgnWrite, ShortGameExactText) {
  PgnGame game;
  game.event = "Test";
  game.white = "A";
  game.black = "B";
  Game g(Position::StartPosition());
  for (const char* san : {"f3", "e5", "g4", "Qh4#"}) {
    ASSERT_TRUE(g.PlaySan(san).ok());
  }
  game.moves = g.Moves();
  game.comments = {"", "book", "", ""};
  game.result = std::string(ResultString(g.Outcome().result));
  game.termination = "normal";
  EXPECT_EQ(WritePgn(game),
            "[Event \"Test\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n"
            "[White \"A\"]\n[Black \"B\"]\n[Result \"0-1\"]\n[Termination \"normal\"]\n"
            "[PlyCount \"4\"]\n\n"
            "1. f3 e5 {book} 2. g4 Qh4# 0-1\n\n");
}

TEST(PgnWrite, SetupBlackToMoveAndChess960Tags) {
  PgnGame game;
  game.start = Fen("4k3/8/8/8/8/8/4P3/4K3 b - - 3 40");
  absl::StatusOr<Move> m = ParseSanMove(game.start, "Kd7");
  ASSERT_TRUE(m.ok());
  game.moves = {*m};
  const std::string text = WritePgn(game);
  EXPECT_NE(text.find("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 3 40\"]"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Variant"), std::string::npos);
  EXPECT_NE(text.find("\n40... Kd7 *\n"), std::string::npos) << text;

  PgnGame c960;
  c960.start = Fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9");
  EXPECT_NE(WritePgn(c960).find("[Variant \"Chess960\"]"), std::string::npos);
}

// Found by pgn_fuzz: a Result tag that is not a termination marker was written at the end of the
// movetext, where it read back as a bad move.
TEST(PgnWrite, ResultTagThatIsNoMarkerEndsTheMovetextWithStar) {
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn("[Result \"01- \"]\n\n1. e4 e5\n");
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 1u);
  const std::string text = WritePgn((*games)[0]);
  EXPECT_NE(text.find("1. e4 e5 *\n"), std::string::npos) << text;
  absl::StatusOr<std::vector<PgnGame>> again = ReadPgn(text);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
  EXPECT_EQ((*again)[0].moves, (*games)[0].moves);
}

TEST(PgnRoundTrip, RandomGamesFromStandardSuite) {
  std::vector<PgnGame> games = RandomGames("standard.epd", 200, 300, 12345);
  ASSERT_GT(games.size(), 100u);
  std::string text;
  for (const PgnGame& g : games) text += WritePgn(g);
  ExpectLinesFit(text);
  absl::StatusOr<std::vector<PgnGame>> read = ReadPgn(text);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), games.size());
  for (size_t i = 0; i < games.size(); ++i) {
    EXPECT_EQ((*read)[i].game_number, int(i + 1));
    ExpectSameGame(games[i], (*read)[i]);
  }
}

TEST(PgnRoundTrip, RandomGamesFromChess960Suite) {
  std::vector<PgnGame> games = RandomGames("fischer960.epd", 120, 200, 960);
  std::string text;
  for (const PgnGame& g : games) text += WritePgn(g);
  absl::StatusOr<std::vector<PgnGame>> read = ReadPgn(text);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), games.size());
  int castles = 0;
  for (size_t i = 0; i < games.size(); ++i) {
    ExpectSameGame(games[i], (*read)[i]);
    for (Move m : games[i].moves) castles += m.KindOf() == Move::kCastling;
  }
  EXPECT_GT(castles, 0) << "no castling move was exercised";
}

TEST(PgnRead, ParsesMovetextFeatures) {
  const char* text = R"(% an escape line
[Event "Features"]
[Site "here"]
[Date "2026.01.01"]
[Round "1"]
[White "W"]
[Black "B"]
[Result "1-0"]
[ECO "C20"]

; a rest-of-line comment
{A leading comment} 1.e4 $1 e5!? 2. Nf3 (2. Nc3 Nf6 (2... Nc6 3. f4 {in a variation}) 3. f4)
2... Nc6 {after
 a line break} 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 1-0

1. d4 d5 2. c4 dxc4 *
)";
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text);
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 2u);
  const PgnGame& g = (*games)[0];
  EXPECT_EQ(g.event, "Features");
  EXPECT_EQ(g.site, "here");
  EXPECT_EQ(g.result, "1-0");
  EXPECT_EQ(g.Tag("ECO"), "C20");
  EXPECT_EQ(g.Tag("White"), "W");
  EXPECT_EQ(g.Tag("Nope"), std::nullopt);
  ASSERT_EQ(g.moves.size(), 10u);
  Position pos = g.start;
  std::vector<std::string> uci;
  for (Move m : g.moves) {
    uci.push_back(MoveToUci(pos, m));
    UndoInfo undo;
    pos.DoMove(m, undo);
  }
  EXPECT_EQ(uci, (std::vector<std::string>{"e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4",
                                           "g8f6", "e1g1", "f8e7"}));
  ASSERT_EQ(g.comments.size(), 10u);
  EXPECT_EQ(g.comments[3], "after a line break");  // line breaks become spaces
  EXPECT_EQ(g.comments[0], "");
  const PgnGame& h = (*games)[1];
  EXPECT_EQ(h.game_number, 2);
  EXPECT_EQ(h.result, "*");
  EXPECT_EQ(h.moves.size(), 4u);
  EXPECT_EQ(h.event, "?");
}

TEST(PgnRead, GameWithoutResultEndsAtNextTagsOrEnd) {
  const char* text = "[Event \"a\"]\n\n1. e4 e5\n\n[Event \"b\"]\n\n1. d4\n";
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text);
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 2u);
  EXPECT_EQ((*games)[0].moves.size(), 2u);
  EXPECT_EQ((*games)[1].event, "b");
  EXPECT_EQ((*games)[1].moves.size(), 1u);
}

TEST(PgnRead, SetUpEnPassantPromotionAndChess960) {
  const char* text = R"([Event "setup"]
[SetUp "1"]
[FEN "4k3/1P6/8/3pP3/8/8/8/4K3 w - d6 0 50"]

50. exd6 e.p. Kf7 51. b8=N Ke6 52. Kd2 Kxd6 *

[Variant "Chess960"]
[FEN "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"]

9. Rf3 Nb6 10. Rg3 Nbd5 11. O-O *
)";
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text);
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 2u);
  EXPECT_EQ((*games)[0].moves.size(), 6u);
  EXPECT_EQ((*games)[0].moves[0].KindOf(), Move::kEnPassant);
  EXPECT_EQ((*games)[0].moves[2].Promotion(), kKnight);
  EXPECT_TRUE((*games)[1].start.IsChess960());
  ASSERT_EQ((*games)[1].moves.size(), 5u);
  EXPECT_EQ((*games)[1].moves[4].KindOf(), Move::kCastling);
}

TEST(PgnRead, ByteOrderMarkAndWindowsLineEnds) {
  const std::string text =
      "\xEF\xBB\xBF[Event \"bom\"]\r\n[Result \"1-0\"]\r\n\r\n1. e4 {x\r\ny} e5 0-0?! 1-0\r\n";
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text);
  ASSERT_FALSE(games.ok());  // 0-0 is not legal yet: the error proves the moves were read
  EXPECT_NE(std::string(games.status().message()).find("bad move '0-0?!' at ply 3"),
            std::string::npos)
      << games.status();
  games = ReadPgn(text.substr(0, text.find(" 0-0?!")) + " 1-0\r\n");
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 1u);
  EXPECT_EQ((*games)[0].event, "bom");
  EXPECT_EQ((*games)[0].moves.size(), 2u);
  EXPECT_EQ((*games)[0].comments[0], "x y");
}

TEST(PgnRead, MaxPliesTruncates) {
  const char* text = "1. e4 {a} e5 {b} 2. Nf3 {c} Nc6 {d} 3. Bb5 a6 1/2-1/2\n\n1. d4 *\n";
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(text, PgnReadOptions{.max_plies = 3});
  ASSERT_TRUE(games.ok()) << games.status();
  ASSERT_EQ(games->size(), 2u);
  EXPECT_EQ((*games)[0].moves.size(), 3u);
  EXPECT_EQ((*games)[0].comments, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ((*games)[0].result, "1/2-1/2");
  EXPECT_EQ((*games)[1].moves.size(), 1u);
  absl::StatusOr<std::vector<PgnGame>> none = ReadPgn(text, PgnReadOptions{.max_plies = 0});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE((*none)[0].moves.empty());
}

struct PgnErrorCase {
  const char* name;
  const char* text;
  const char* message_part;
};

class PgnErrorTest : public ::testing::TestWithParam<PgnErrorCase> {};

TEST_P(PgnErrorTest, NamesGameAndToken) {
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgn(GetParam().text);
  ASSERT_FALSE(games.ok()) << GetParam().text;
  EXPECT_EQ(games.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(games.status().message()).find(GetParam().message_part), std::string::npos)
      << games.status();
}

INSTANTIATE_TEST_SUITE_P(
    Bad, PgnErrorTest,
    ::testing::Values(
        PgnErrorCase{"IllegalMove", "1. e4 e5 *\n\n1. e4 e5 2. Ke3 *\n",
                     "PGN game 2 (line 3): bad move 'Ke3' at ply 3"},
        PgnErrorCase{"UnknownToken", "1. e4 Xz9 *\n",
                     "PGN game 1 (line 1): bad move 'Xz9' at ply 2"},
        PgnErrorCase{"BadFen", "[FEN \"8/8/8 w - - 0 1\"]\n\n*\n", "tag FEN \"8/8/8 w - - 0 1\""},
        PgnErrorCase{"Variant", "[Variant \"crazyhouse\"]\n\n1. e4 *\n",
                     "tag Variant \"crazyhouse\" is not supported"},
        PgnErrorCase{"UnclosedComment", "1. e4 {never closed\n", "comment '{' is never closed"},
        PgnErrorCase{"UnclosedVariation", "1. e4 (1. d4 d5\n", "variation '(' is never closed"},
        PgnErrorCase{"StrayParen", "1. e4 ) e5 *\n", "')' without a variation"},
        PgnErrorCase{"UnclosedString", "[Event \"abc\n\n1. e4 *\n", "string is not closed"},
        PgnErrorCase{"TagWithoutValue", "[Event]\n\n1. e4 *\n", "tag Event: quoted value expected"},
        PgnErrorCase{"StrayCharacter", "1. e4 & e5 *\n", "unexpected character '&'"},
        PgnErrorCase{"MoveAfterMate", "1. f3 e5 2. g4 Qh4# 3. a3 0-1\n", "bad move 'a3' at ply 5"}),
    [](const ::testing::TestParamInfo<PgnErrorCase>& info) { return info.param.name; });

TEST(PgnRead, ReaderContinuesWithTheNextGameAfterAnError) {
  const char* text =
      "[Event \"one\"]\n\n1. e4 Nf9 2. d4 *\n\n[Event \"two\"]\n[FEN \"bad\"]\n\n1. e4 *\n\n"
      "[Event \"three\"]\n\n1. c4 *\n";
  PgnReader reader(text);
  absl::StatusOr<std::optional<PgnGame>> g = reader.Next();
  EXPECT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("PGN game 1"), std::string::npos);
  g = reader.Next();
  EXPECT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("PGN game 2"), std::string::npos) << g.status();
  g = reader.Next();
  ASSERT_TRUE(g.ok()) << g.status();
  ASSERT_TRUE(g->has_value());
  EXPECT_EQ((*g)->event, "three");
  EXPECT_EQ((*g)->game_number, 3);
  g = reader.Next();
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->has_value());
}

// Damaged input (cut anywhere, bytes overwritten) gives games or errors, never a crash or a hang.
TEST(PgnRead, DamagedInputNeverCrashes) {
  std::vector<PgnGame> games = RandomGames("standard.epd", 6, 80, 4242);
  std::string text;
  for (const PgnGame& g : games) text += WritePgn(g);
  text += "1. e4 (1. d4 {x} (1. c4 $3)) e5 ; end\n% escape\n*\n";
  std::mt19937 rng(99);
  const std::string alphabet = "[]{}()\"$;%.!?*01/-=+#NBRQKabcdefgh12345678 \n\\x";
  int errors = 0, parsed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string damaged = text.substr(0, rng() % (text.size() + 1));
    for (int k = rng() % 4; k > 0 && !damaged.empty(); --k)
      damaged[rng() % damaged.size()] = alphabet[rng() % alphabet.size()];
    PgnReader reader(damaged);
    bool ended = false;
    for (int n = 0; n < 100 && !ended; ++n) {  // errors resume at the next game
      absl::StatusOr<std::optional<PgnGame>> g = reader.Next();
      if (!g.ok()) {
        ++errors;
        EXPECT_NE(std::string(g.status().message()).find("PGN game "), std::string::npos);
        continue;
      }
      ended = !g->has_value();
      parsed += !ended;
    }
    EXPECT_TRUE(ended) << "reader did not reach the end of:\n" << damaged;
  }
  EXPECT_GT(errors, 0);
  EXPECT_GT(parsed, 0);
}

TEST(PgnRead, MissingFile) {
  absl::StatusOr<std::vector<PgnGame>> games = ReadPgnFile("/nonexistent/book.pgn");
  EXPECT_EQ(games.status().code(), absl::StatusCode::kNotFound);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The real pgn-extract must read what we write, without a complaint, and replay the same moves
// (it writes Chess960 castling as king-takes-rook, as our UCI does).
class PgnExtractTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PgnExtractTest, ReadsWrittenGamesWithoutComplaint) {
  const std::string tool = "/usr/games/pgn-extract";
  if (!std::filesystem::exists(tool))
    GTEST_FAIL() << "pgn-extract is not installed"
                 << " (scripts/install-deps.sh installs it)";
  std::vector<PgnGame> games = RandomGames(GetParam(), 60, 300, 777);
  std::string text;
  for (const PgnGame& g : games) text += WritePgn(g);
  const std::string dir = ::testing::TempDir();
  const std::string base = dir + "/arbiter_pgn_test_" + std::to_string(getpid());
  const std::string in = base + "_in.pgn", out = base + "_out.txt", err = base + "_err.txt";
  std::ofstream(in) << text;
  std::filesystem::remove(out);
  const std::string cmd =
      tool + " -s -Wuci --nocomments --notags -o " + out + " " + in + " 2>" + err;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(ReadFile(err), "") << "pgn-extract complained about " << in;
  // pgn-extract's UCI output: one game per paragraph, moves then the result.
  std::vector<std::string> words;
  {
    std::istringstream s(ReadFile(out));
    std::string w;
    // pgn-extract writes promotion pieces in upper case (f2f1N); UCI uses lower case.
    while (s >> w) {
      for (char& c : w) c = char(std::tolower(static_cast<unsigned char>(c)));
      words.push_back(w);
    }
  }
  std::vector<std::string> expected;
  for (const PgnGame& g : games) {
    Position pos = g.start;
    for (Move m : g.moves) {
      expected.push_back(MoveToUci(pos, m));
      UndoInfo undo;
      pos.DoMove(m, undo);
    }
    expected.push_back(g.result);
  }
  EXPECT_EQ(words.size(), expected.size());
  for (size_t i = 0; i < words.size() && i < expected.size(); ++i) {
    ASSERT_EQ(words[i], expected[i]) << "word " << i << " of pgn-extract's UCI output";
  }
  if (!HasFailure())
    for (const std::string& f : {in, out, err}) std::filesystem::remove(f);
}

INSTANTIATE_TEST_SUITE_P(Suites, PgnExtractTest,
                         ::testing::Values("standard.epd", "fischer960.epd"));

TEST(EpdBook, ParsesPositionsAndOpcodes) {
  const char* text =
      "# an opening book\n"
      "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id \"1. e4\"; c0 \"a;b\";\n"
      "\n"
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - hmvc 3; fmvn 12;\n"
      "4k3/8/8/8/8/8/4P3/4K3 w - - 5 60\n"
      "4k3/8/8/8/8/8/4P3/4K3 w - - bm e4\n";
  absl::StatusOr<std::vector<EpdEntry>> book = ReadEpd(text);
  ASSERT_TRUE(book.ok()) << book.status();
  ASSERT_EQ(book->size(), 4u);
  EXPECT_EQ((*book)[0].line_number, 2);
  EXPECT_EQ((*book)[0].position.Fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
  EXPECT_EQ((*book)[0].opcodes,
            (std::vector<std::pair<std::string, std::string>>{{"id", "1. e4"}, {"c0", "a;b"}}));
  EXPECT_EQ((*book)[1].position.HalfmoveClock(), 3);
  EXPECT_EQ((*book)[1].position.FullmoveNumber(), 12);
  EXPECT_EQ((*book)[2].position.FullmoveNumber(), 60);
  EXPECT_TRUE((*book)[2].opcodes.empty());
  EXPECT_EQ((*book)[3].opcodes, (std::vector<std::pair<std::string, std::string>>{{"bm", "e4"}}));
}

TEST(EpdBook, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* part;
  } cases[] = {
      {"4k3/8/8/8/8/8/8/4K3 w -\n", "EPD line 1: has 3 FEN fields"},
      {"\n4k3/8/8/8/8/8/8/4K4 w - -\n", "EPD line 2: FEN field 1"},
      {"4k3/8/8/8/8/8/8/4K3 w - - hmvc x;\n", "opcode hmvc needs a number"},
      {"4k3/8/8/8/8/8/8/4K3 w - - id \"open;\n", "quoted operand is never closed"},
      {"4k3/8/8/8/8/8/8/4K3 w - - 5 e4;\n", "'5 e4' is not an opcode"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<EpdEntry>> book = ReadEpd(c.text);
    ASSERT_FALSE(book.ok()) << c.text;
    EXPECT_NE(std::string(book.status().message()).find(c.part), std::string::npos)
        << book.status();
  }
  EXPECT_EQ(ReadEpdFile("/nonexistent.epd").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace arbiter

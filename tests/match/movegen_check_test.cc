#include "match/movegen_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/random_positions.h"

namespace arbiter::match {
namespace {

EngineSpec TestEngine(std::vector<std::string> args) {
  return EngineSpec{.name = "t", .cmd = TEST_ENGINE, .args = std::move(args)};
}

const std::string kStandard = Cat(ARBITER_PERFT_DATA, "/standard.epd");
const std::string kFischer = Cat(ARBITER_PERFT_DATA, "/fischer960.epd");

// Checks every position of the suites (each with its node budget) and adds the results up.
v1::MovegenCheckResult CheckSuites(UciEngine& engine,
                                   const std::vector<std::pair<std::string, uint64_t>>& suites,
                                   const PerftDialect& dialect = {}) {
  MovegenAggregate sum;
  // One checker for all: the engine probed and set up once, again when Chess960 changes.
  MovegenChecker checker(engine, dialect, Millis(60000));
  uint32_t n = 0;
  for (const auto& [path, budget] : suites) {
    auto positions = MovegenSuitePositions(path, 0, budget);
    EXPECT_TRUE(positions.ok()) << positions.status();
    if (!positions.ok()) continue;
    for (const v1::MovegenPosition& p : *positions) {
      auto r = checker.Check(p);
      EXPECT_TRUE(r.ok()) << r.status();
      if (r.ok()) sum.Add(*r), ++n;
    }
  }
  return sum.Result(n);
}

std::vector<std::string> Sorted(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::vector<std::string> out(v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

struct BugCase {
  std::string bug;
  uint64_t standard_budget, fischer_budget;
  // The smallest example expected among the failures.
  std::string fen;
  std::vector<std::string> missing, extra;
};

class MovegenBugTest : public testing::TestWithParam<BugCase> {};

TEST_P(MovegenBugTest, SuitesFindTheSmallestExample) {
  const BugCase& c = GetParam();
  UciEngine engine(TestEngine({"--movegen-bug", c.bug}));
  v1::MovegenCheckResult r =
      CheckSuites(engine, {{kStandard, c.standard_budget}, {kFischer, c.fischer_budget}});
  engine.Quit();
  EXPECT_EQ(r.positions_faulted(), 0u);
  ASSERT_GT(r.failures_size(), 0) << c.bug << " not found";
  bool found = false;
  uint32_t positions = 0;
  for (const v1::MovegenFailure& f : r.failures()) {
    positions += f.positions();
    // Every failure is a list difference at depth 1 of the kind the bug makes.
    EXPECT_EQ(f.depth(), 1u);
    EXPECT_EQ(f.missing_moves_size() > 0, !c.missing.empty()) << f.fen();
    EXPECT_EQ(f.extra_moves_size() > 0, !c.extra.empty()) << f.fen();
    EXPECT_EQ(uint32_t(f.path_size()), f.root_depth() - 1) << f.fen();
    if (f.fen() == c.fen) {
      found = true;
      EXPECT_EQ(Sorted(f.missing_moves()), c.missing);
      EXPECT_EQ(Sorted(f.extra_moves()), c.extra);
    }
  }
  EXPECT_TRUE(found) << c.bug << ": no failure at " << c.fen << "\n" << MovegenReportText(r);
  EXPECT_EQ(positions, r.positions_checked() - r.positions_clean());
}

INSTANTIATE_TEST_SUITE_P(
    Bugs, MovegenBugTest,
    testing::Values(
        BugCase{"no-ep-evasion",
                3000000,
                1000,
                "8/8/3p4/1Pp4r/1K3p2/6k1/4P1P1/1R6 w - c6 0 3",
                {"b5c6"},
                {}},
        BugCase{"castle-through-check",
                200000,
                1000,
                "r3k2r/8/8/8/8/8/8/3RK2R b Kkq - 1 1",
                {},
                {"e8c8"}},
        BugCase{"keep-castling-rights", 200000, 1000, "K3k3/8/8/8/8/8/8/8 b - - 0 1", {}, {"e8c8"}},
        BugCase{"no-underpromotion",
                200000,
                1000,
                "k7/8/8/3p4/8/8/4p3/6K1 b - - 1 3",
                {"e2e1b", "e2e1n", "e2e1r"},
                {}},
        BugCase{
            "ep-rank-pin", 200000, 1000, "8/2p5/3p4/KP5r/1R2Pp1k/8/6P1/8 b - e3 0 1", {}, {"f4e3"}},
        BugCase{"c960-king-on-rook-square",
                1000,
                20000,
                "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
                {"f1g1"},
                {}}),
    [](const testing::TestParamInfo<BugCase>& i) {
      std::string n = i.param.bug;
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

TEST(MovegenCheck, CorrectEngineIsCleanOnBothSuites) {
  UciEngine engine(TestEngine({}));
  v1::MovegenCheckResult r = CheckSuites(engine, {{kStandard, 200000}, {kFischer, 20000}});
  EXPECT_EQ(r.positions_checked(), 128u + 960u);
  EXPECT_EQ(r.positions_clean(), r.positions_checked());
  EXPECT_EQ(r.failures_size(), 0);
  EXPECT_GT(r.nodes_compared(), 0u);
}

TEST(MovegenCheck, StockfishIsCleanOnBothSuites) {
  UciEngine engine(EngineSpec{.name = "sf", .cmd = "/usr/games/stockfish"});
  v1::MovegenCheckResult r = CheckSuites(engine, {{kStandard, 100000}, {kFischer, 5000}});
  EXPECT_EQ(r.positions_checked(), 128u + 960u);
  EXPECT_EQ(r.positions_faulted(), 0u);
  EXPECT_EQ(r.failures_size(), 0) << MovegenReportText(r);
}

TEST(MovegenCheck, BarePerftAndCustomDialects) {
  UciEngine bare(TestEngine({"--perft-dialect", "bare", "--movegen-bug", "no-underpromotion"}));
  auto d = MakePerftDialect("perft", "", "", "");
  ASSERT_TRUE(d.ok());
  v1::MovegenPosition p;
  p.set_fen("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1");
  p.set_depth(2);
  auto r = CheckMovegenPosition(bare, p, *d, Millis(60000));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_failure());
  EXPECT_EQ(r->failure().root_depth(), 1u);
  EXPECT_EQ(r->failure().missing_moves_size(), 9);

  UciEngine custom(TestEngine({"--perft-dialect", "custom"}));
  auto c = MakePerftDialect("custom", "divide {depth}", R"(^perft total = (\d+)$)",
                            R"(^move (\S+) nodes (\d+)$)");
  ASSERT_TRUE(c.ok()) << c.status();
  auto ok = CheckMovegenPosition(custom, p, *c, Millis(60000));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_FALSE(ok->has_failure());
  EXPECT_EQ(ok->engine_nodes(), ok->arbiter_nodes());
  EXPECT_GT(ok->engine_nodes(), 0u);
}

TEST(MovegenCheck, DialectsAreBoundedAndValidated) {
  EXPECT_FALSE(MakePerftDialect("uci", "", "", "").ok());
  EXPECT_FALSE(MakePerftDialect("custom", "divide {depth}", "", "").ok());
  EXPECT_FALSE(MakePerftDialect("go-perft", "go perft", "", "").ok());  // no {depth}
  EXPECT_FALSE(MakePerftDialect("go-perft", "", "(unclosed", "").ok());
  EXPECT_FALSE(MakePerftDialect("go-perft", "", "^Nodes (\\d+) (\\d+)$", "").ok());  // 2 groups
  EXPECT_FALSE(MakePerftDialect("go-perft", "", std::string(300, 'a'), "").ok());
  EXPECT_FALSE(MakePerftDialect("go-perft", "go perft {depth}\nquit", "", "").ok());
}

// A dialect's patterns are compiled once, when it is made, and shared by its copies (each checker,
// each job); a bad pattern is refused there with the reason. A dialect built by hand has its
// patterns compiled when it is used, and refused there the same way.
TEST(MovegenCheck, DialectPatternsAreCompiledOnceAndBadOnesRefusedWithTheReason) {
  absl::StatusOr<PerftDialect> d = MakePerftDialect("perft", "", "", "");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(d->total_re && d->divide_re);
  const PerftDialect copy = *d;
  EXPECT_EQ(copy.total_re.get(), d->total_re.get());
  EXPECT_EQ(copy.divide_re.get(), d->divide_re.get());

  auto message = [](const absl::Status& st) { return std::string(st.message()); };
  absl::StatusOr<PerftDialect> bad = MakePerftDialect("go-perft", "", "(unclosed", "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(bad.status()), "--total-regex '(unclosed': missing ): (unclosed");
  bad = MakePerftDialect("go-perft", "", "", "^(\\S+)$");
  EXPECT_EQ(message(bad.status()), "--divide-regex '^(\\S+)$' has 1 groups, want 2");

  UciEngine engine(TestEngine({}));
  PerftDialect by_hand;
  by_hand.total_regex = "(unclosed";
  absl::StatusOr<EngineDivide> r = RunEnginePerft(engine, by_hand, 1, Millis(60000));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(message(r.status()), "total regex '(unclosed': missing ): (unclosed");
  by_hand = PerftDialect{};
  by_hand.divide_regex = "^(\\S+)$";
  r = RunEnginePerft(engine, by_hand, 1, Millis(60000));
  EXPECT_EQ(message(r.status()), "divide regex '^(\\S+)$' has 1 groups, want 2");
}

// A user's pattern that a backtracking matcher (std::regex) takes 2^40 steps over, against an
// engine line made for it: matched in linear time (RE2), the position checked as usual. The
// engine is a small shell script that answers `divide N` with that line and a total.
TEST(MovegenCheck, APatternThatWouldBacktrackForeverCannotHangTheCheck) {
  const std::string script = Cat(testing::TempDir(), "/backtrack-engine-", getpid(), ".sh");
  {
    FILE* f = fopen(script.c_str(), "w");
    ASSERT_TRUE(f);
    fputs(
        "#!/bin/sh\n"
        "while read -r cmd rest; do\n"
        "  case \"$cmd\" in\n"
        "    uci) echo 'id name backtrack'; echo uciok ;;\n"
        "    isready) echo readyok ;;\n"
        "    divide) echo 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'; echo 'total 20' ;;\n"
        "    quit) exit 0 ;;\n"
        "  esac\n"
        "done\n",
        f);
    fclose(f);
    chmod(script.c_str(), 0700);
  }
  absl::StatusOr<PerftDialect> d = MakePerftDialect("custom", "divide {depth}", "^total (\\d+)$",
                                                    "^(?:(?:a|a)*)*([a-h][1-8][a-h][1-8]) (\\d+)$");
  ASSERT_TRUE(d.ok()) << d.status();
  UciEngine engine(EngineSpec{.name = "backtrack", .cmd = script});
  v1::MovegenPosition p;
  p.set_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
  p.set_depth(1);
  absl::StatusOr<v1::MovegenPositionResult> r = CheckMovegenPosition(engine, p, *d, Millis(60000));
  engine.Quit();
  std::remove(script.c_str());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->fault().empty()) << r->fault();
  EXPECT_EQ(r->engine_nodes(), 20u);
  EXPECT_FALSE(r->has_failure());
  // Patterns RE2 does not take are refused with the reason (backreferences, lookarounds).
  EXPECT_FALSE(MakePerftDialect("custom", "divide {depth}", "^total (\\d+)\\1$", "^(.)(.)$").ok());
  EXPECT_FALSE(
      MakePerftDialect("custom", "divide {depth}", "^(?=t)total (\\d+)$", "^(.)(.)$").ok());
}

// An engine that does not speak the dialect is recognised on the first position, with a message
// naming the dialect tried and the others; with perft-diff the same.
TEST(MovegenCheck, EngineThatSearchesOrStaysSilentIsRecognisedAtOnce) {
  v1::MovegenPosition p;
  p.set_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
  p.set_depth(3);
  for (const char* mode : {"search", "silent"}) {
    UciEngine engine(TestEngine({"--perft-dialect", mode}));
    // The timeout is far beyond the test's own: recognising must not wait for it.
    auto r = CheckMovegenPosition(engine, p, PerftDialect{}, Millis(3600 * 1000));
    ASSERT_FALSE(r.ok()) << mode;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string msg(r.status().message());
    EXPECT_NE(msg.find("'go-perft' dialect"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--dialect perft, custom"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string(mode) == "search" ? "bestmove" : "printed nothing more"),
              std::string::npos)
        << msg;
  }
  std::string cmd = Cat(ARBITER_BINARY, " perft-diff --engine '", TEST_ENGINE,
                        " --perft-dialect search' --depth 4 2>&1");
  FILE* f = popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(pclose(f)), 2) << out;
  EXPECT_NE(out.find("it searched and answered `bestmove"), std::string::npos) << out;
  EXPECT_NE(out.find("the others: --dialect perft, custom"), std::string::npos) << out;
}

TEST(MovegenCheck, CrashesAreFaultsOfThePositionNotOfTheRun) {
  // It answers the dialect probe, then dies on the real request: every time, after a restart.
  UciEngine engine(TestEngine({"--perft-crash-after", "1"}));
  MovegenAggregate sum;
  for (const char* fen : {"4k3/8/8/8/8/8/8/4K3 w - - 0 1", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"}) {
    v1::MovegenPosition p;
    p.set_fen(fen);
    p.set_depth(2);
    auto r = CheckMovegenPosition(engine, p, PerftDialect{}, Millis(60000));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NE(r->fault().find("exited during `go perft 2`"), std::string::npos) << r->fault();
    sum.Add(*r);
  }
  v1::MovegenCheckResult r = sum.Result(2);
  EXPECT_EQ(r.positions_faulted(), 2u);
  EXPECT_EQ(r.faults_size(), 2);
  EXPECT_EQ(r.positions_checked(), 0u);
}

TEST(MovegenCheck, FailuresAreDeduplicatedByFinalPositionAndMoves) {
  MovegenAggregate sum;
  for (int i = 0; i < 3; ++i) {
    v1::MovegenPositionResult r;
    r.set_arbiter_nodes(10);
    v1::MovegenFailure* f = r.mutable_failure();
    f->set_fen(Cat("8/8/8/8/8/8/8/K1k5 w - - ", i, " 1"));  // counters differ: same bug
    f->add_extra_moves("a1b1");
    for (int k = 0; k < 3 - i; ++k) f->add_path("a1a2");
    f->set_positions(1);
    sum.Add(r);
  }
  v1::MovegenPositionResult other;
  other.mutable_failure()->set_fen("8/8/8/8/8/8/8/K1k5 w - - 0 1");
  other.mutable_failure()->add_missing_moves("a1a2");
  other.mutable_failure()->set_positions(1);
  sum.Add(other);
  v1::MovegenCheckResult r = sum.Result(4);
  ASSERT_EQ(r.failures_size(), 2);
  EXPECT_EQ(r.failures(0).positions(), 3u);
  EXPECT_EQ(r.failures(0).path_size(), 1);  // the smallest example is kept
  EXPECT_EQ(r.failures(1).positions(), 1u);
  EXPECT_EQ(r.nodes_compared(), 30u);
}

const char kKiwipete[] = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

v1::MovegenPosition At(const std::string& fen, uint32_t depth, uint64_t estimate = 0) {
  v1::MovegenPosition p;
  p.set_fen(fen);
  p.set_depth(depth);
  p.set_source("test");
  p.set_estimate_nodes(estimate);
  return p;
}

TEST(MovegenSplit, PartsAddUpToTheWholePositionInAnyOrder) {
  const v1::MovegenPosition whole = At(kKiwipete, 3, 97862);
  std::vector<v1::MovegenPosition> parts = SplitMovegenPosition(whole, 7);
  ASSERT_EQ(parts.size(), 48u);
  double estimates = 0;
  for (const v1::MovegenPosition& part : parts) {
    EXPECT_EQ(part.fen(), whole.fen());
    EXPECT_EQ(part.depth(), 2u);
    ASSERT_EQ(part.moves_size(), 1);
    EXPECT_EQ(part.index(), 7u);
    EXPECT_EQ(part.parts(), 48u);
    estimates += double(part.estimate_nodes());
  }
  EXPECT_NEAR(estimates, 97862, 48);
  // Not split: too shallow, or already a part.
  EXPECT_TRUE(SplitMovegenPosition(At(kKiwipete, 1), 0).empty());
  EXPECT_TRUE(SplitMovegenPosition(parts[0], 0).empty());

  UciEngine engine(TestEngine({}));
  MovegenChecker checker(engine, PerftDialect{}, Millis(60000));
  MovegenParts sum;
  std::optional<v1::MovegenPositionResult> done;
  for (size_t i = parts.size(); i-- > 0;) {
    absl::StatusOr<v1::MovegenPositionResult> r = checker.Check(parts[i]);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->has_failure()) << parts[i].moves(0);
    EXPECT_FALSE(done) << "the whole came before its last part";
    done = sum.Add(parts[i], *r);
  }
  engine.Quit();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->fen(), whole.fen());
  EXPECT_EQ(done->depth(), 3u);
  EXPECT_EQ(done->arbiter_nodes(), 97862u);
  EXPECT_EQ(done->engine_nodes(), 97862u);
  EXPECT_FALSE(done->has_failure());
  EXPECT_TRUE(done->fault().empty());
}

// A part is given to the engine as `position fen F moves M`: a bug in the engine's own make of M
// shows, though the position after M, set up from its FEN, would be counted right.
TEST(MovegenSplit, TheEnginesOwnMakeOfTheSplitMoveIsChecked) {
  const std::string fen = "r3k2r/8/1N6/8/8/8/8/4K3 w kq - 0 1";
  v1::MovegenPosition part = At(fen, 2);
  part.add_moves("b6a8");  // takes the rook: black's queen-side right is gone
  part.set_index(0);
  part.set_parts(11);
  UciEngine bugged(TestEngine({"--movegen-bug", "keep-castling-rights"}));
  MovegenChecker checker(bugged, PerftDialect{}, Millis(60000));
  absl::StatusOr<v1::MovegenPositionResult> r = checker.Check(part);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->has_failure());
  const v1::MovegenFailure& f = r->failure();
  EXPECT_EQ(f.root_fen(), fen);
  ASSERT_EQ(f.path_size(), 1);
  EXPECT_EQ(f.path(0), "b6a8");
  EXPECT_EQ(f.fen().substr(0, f.fen().find(' ')), "N3k2r/8/8/8/8/8/8/4K3");
  EXPECT_EQ(Sorted(f.extra_moves()), std::vector<std::string>{"e8c8"});
  EXPECT_EQ(f.depth(), 1u);
  // The same subtree from its FEN is right: the bug is in the make, which only the moves show.
  v1::MovegenPosition child = At("N3k2r/8/8/8/8/8/8/4K3 b k - 0 1", 1);
  absl::StatusOr<v1::MovegenPositionResult> from_fen = checker.Check(child);
  ASSERT_TRUE(from_fen.ok()) << from_fen.status();
  EXPECT_FALSE(from_fen->has_failure());
  bugged.Quit();

  // Parts with failures: the whole keeps the smallest example (the shortest path).
  MovegenParts sum;
  v1::MovegenPosition other = part;
  other.set_moves(0, "b6d7");
  v1::MovegenPositionResult deeper = *r;
  deeper.mutable_failure()->add_path("e8d8");
  EXPECT_FALSE(sum.Add(other, deeper));
  for (uint32_t i = 2; i < 11; ++i) EXPECT_FALSE(sum.Add(part, v1::MovegenPositionResult{}));
  std::optional<v1::MovegenPositionResult> whole = sum.Add(part, *r);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->failure().path_size(), r->failure().path_size());
  EXPECT_EQ(whole->depth(), 3u);
}

// A part's moves are played one after the other: a move that is not legal after the ones before it
// is refused, naming the part's source, the move and the position it was tried in.
TEST(MovegenSplit, APartWithAMoveThatIsNotLegalIsRefused) {
  UciEngine engine(TestEngine({}));
  MovegenChecker checker(engine, PerftDialect{}, Millis(60000));
  v1::MovegenPosition part = At("r3k2r/8/1N6/8/8/8/8/4K3 w kq - 0 1", 1);
  part.add_moves("b6a8");
  part.add_moves("e8c8");  // the rook it would castle with was just taken
  absl::StatusOr<v1::MovegenPositionResult> r = checker.Check(part);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(r.status().message()),
            "test: move 'e8c8': illegal move 'e8c8' in position N3k2r/8/8/8/8/8/8/4K3 b k - 0 1");
  part.set_moves(1, "zz");
  r = checker.Check(part);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()), "test: move 'zz': 'zz' is not a UCI move");
}

TEST(RandomPositions, DeterministicLegalAndBiased) {
  std::vector<Position> a = RandomPositions(1000, 7), b = RandomPositions(1000, 7);
  ASSERT_EQ(a.size(), 1000u);
  int chess960 = 0, check = 0, ep = 0, castling_rights = 0, promotion = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].Fen(), b[i].Fen());
    ASSERT_TRUE(Position::FromFen(a[i].Fen()).ok()) << a[i].Fen();
    EXPECT_GT(CountLegal(a[i]), 0) << a[i].Fen();
    chess960 += a[i].IsChess960();
    check += a[i].InCheck();
    ep += a[i].EpCaptureLegal();
    castling_rights += a[i].CastlingRights() != 0;
    MoveList list;
    GenerateLegal(a[i], list);
    for (Move m : list)
      if (m.KindOf() == Move::kPromotion) {
        ++promotion;
        break;
      }
  }
  EXPECT_EQ(chess960, 500);
  // A uniform playout gives few of these; the bias must give many.
  EXPECT_GT(check, 100);
  EXPECT_GT(ep, 100);
  EXPECT_GT(castling_rights, 200);
  EXPECT_GT(promotion, 20);
}

TEST(RandomPositions, Chess960StartNumbering) {
  EXPECT_EQ(Chess960Start(518).Fen().substr(0, 43), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
  EXPECT_EQ(Chess960Start(0).Fen().substr(0, 8), "bbqnnrkr");
}

}  // namespace
}  // namespace arbiter::match

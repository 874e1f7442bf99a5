#include "match/uci_engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "match/process.h"

namespace arbiter::match {
namespace {

SteadyTime In(int ms) { return SteadyClock::now() + Millis(ms); }

TEST(ParseInfoLine, ReadsEveryField) {
  InfoLine info;
  ASSERT_TRUE(ParseInfoLine(
      "info depth 12 seldepth 17 multipv 1 score cp -34 upperbound nodes 12345 nps 999 "
      "time 77 pv e2e4 e7e5 g1f3",
      info));
  EXPECT_EQ(info.depth, 12);
  EXPECT_EQ(info.seldepth, 17);
  EXPECT_EQ(info.score.kind, UciScore::kCp);
  EXPECT_EQ(info.score.value, -34);
  EXPECT_TRUE(info.score.upperbound);
  EXPECT_EQ(info.nodes, 12345u);
  EXPECT_EQ(info.nps, 999u);
  EXPECT_EQ(info.time_ms, 77);
  ASSERT_EQ(info.pv.size(), 3u);
  EXPECT_EQ(info.pv[2], "g1f3");
  ASSERT_TRUE(ParseInfoLine("info depth 30 score mate -3 pv a1a2", info));
  EXPECT_EQ(info.score.kind, UciScore::kMate);
  EXPECT_EQ(info.score.value, -3);
  EXPECT_FALSE(ParseInfoLine("info string hello depth 3", info));
  EXPECT_FALSE(ParseInfoLine("bestmove e2e4", info));
  EXPECT_FALSE(ParseInfoLine("info depth banana score cp", info));
}

TEST(ParseBestMove, TakesTheMoveWord) {
  EXPECT_EQ(ParseBestMove("bestmove e7e8q ponder a1a2").value(), "e7e8q");
  EXPECT_EQ(ParseBestMove("bestmove (none)").value(), "(none)");
  EXPECT_EQ(ParseBestMove("bestmove").value(), "");
  EXPECT_FALSE(ParseBestMove("info depth 1").has_value());
}

TEST(ParseEngineSpec, ReadsAllKeys) {
  auto spec = ParseEngineSpec("name=A,cmd=/bin/eng uci,dir=/tmp,option.Hash=16,env.X=1,tc=10+0.1");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "A");
  EXPECT_EQ(spec->cmd, "/bin/eng");
  ASSERT_EQ(spec->args.size(), 1u);
  EXPECT_EQ(spec->args[0], "uci");
  EXPECT_EQ(spec->dir, "/tmp");
  ASSERT_EQ(spec->options.size(), 1u);
  EXPECT_EQ(spec->options[0].first, "Hash");
  EXPECT_EQ(spec->env[0], "X=1");
  EXPECT_EQ(spec->tc, "10+0.1");
  EXPECT_EQ(ParseEngineSpec("cmd=/usr/games/stockfish")->name, "stockfish");
  EXPECT_FALSE(ParseEngineSpec("name=A").ok());
  EXPECT_FALSE(ParseEngineSpec("name=A,cmd=x,colour=red").ok());
  EXPECT_EQ(ParseEngineSpec("name=A,cmd=/bin/eng,cpu=v3")->cpu_level, 3);
  EXPECT_EQ(ParseEngineSpec("name=A,cmd=/bin/eng,cpu=x86-64-v4")->cpu_level, 4);
  EXPECT_FALSE(ParseEngineSpec("name=A,cmd=/bin/eng,cpu=v5").ok());
  EXPECT_FALSE(ParseEngineSpec("name=A,cmd=/bin/eng,cpu=avx2").ok());
}

TEST(Subprocess, ReportsExecAndChdirFailures) {
  auto p = Subprocess::Start({.argv = {"/nonexistent/engine"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("exec '/nonexistent/engine'"), std::string::npos)
      << p.status();
  p = Subprocess::Start({.argv = {"/bin/true"}, .cwd = "/nonexistent-dir"});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("chdir"), std::string::npos) << p.status();
}

TEST(Subprocess, PassesArgsCwdAndEnv) {
  auto p =
      Subprocess::Start({.argv = {"/bin/sh", "-c", "echo \"$ARBITER_X\"; pwd; echo arg=$0", "zero"},
                         .cwd = "/tmp",
                         .env = {"ARBITER_X=hello world"}});
  ASSERT_TRUE(p.ok()) << p.status();
  OutputLine l;
  ASSERT_EQ((*p)->ReadLine(In(5000), l), ReadResult::kLine);
  EXPECT_EQ(l.text, "hello world");
  ASSERT_EQ((*p)->ReadLine(In(5000), l), ReadResult::kLine);
  EXPECT_EQ(l.text, "/tmp");
  ASSERT_EQ((*p)->ReadLine(In(5000), l), ReadResult::kLine);
  EXPECT_EQ(l.text, "arg=zero");
  EXPECT_EQ((*p)->ReadLine(In(5000), l), ReadResult::kEof);
  EXPECT_EQ((*p)->WaitOrKill(Millis(2000)), 0);
}

TEST(Subprocess, BoundsLinesAndStderr) {
  ProcessLimits limits{.max_line_bytes = 1000, .stderr_ring_bytes = 4096};
  auto p = Subprocess::Start(
      {.argv = {"/bin/sh", "-c",
                "head -c 3000000 /dev/zero | tr '\\0' e >&2; head -c 50000 /dev/zero | tr '\\0' o;"
                " echo; echo tail-line"}},
      limits);
  ASSERT_TRUE(p.ok()) << p.status();
  OutputLine l;
  ASSERT_EQ((*p)->ReadLine(In(10000), l), ReadResult::kLine);
  EXPECT_TRUE(l.truncated);
  EXPECT_EQ(l.text.size(), 1000u);
  ASSERT_EQ((*p)->ReadLine(In(10000), l), ReadResult::kLine);
  EXPECT_EQ(l.text, "tail-line");
  EXPECT_FALSE(l.truncated);
  EXPECT_EQ((*p)->ReadLine(In(10000), l), ReadResult::kEof);
  // stdout's end says nothing of stderr's: its last bytes may still be on their way.
  EXPECT_TRUE((*p)->WaitStderrClosed(In(10000)));
  EXPECT_EQ((*p)->StderrBytes(), 3000000u);
  EXPECT_EQ((*p)->StderrTail(), std::string(4096, 'e'));
}

TEST(Subprocess, TimesOutAndKillsAHungChild) {
  auto p = Subprocess::Start({.argv = {"/bin/sleep", "100"}});
  ASSERT_TRUE(p.ok());
  OutputLine l;
  EXPECT_EQ((*p)->ReadLine(In(50), l), ReadResult::kTimeout);
  EXPECT_FALSE((*p)->Exited());
  int status = (*p)->WaitOrKill(Millis(10));
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE((*p)->Exited());
}

EngineSpec TestEngine(std::vector<std::string> args = {}) {
  return EngineSpec{.name = "t", .cmd = TEST_ENGINE, .args = std::move(args)};
}

TEST(UciEngine, HandshakePositionGoBestmove) {
  UciEngine e(TestEngine());
  ASSERT_TRUE(e.Start().ok());
  EXPECT_EQ(e.id_name(), "TestEngine");
  EXPECT_TRUE(e.HasOption("UCI_Chess960"));
  EXPECT_TRUE(e.HasOption("Hash"));
  ASSERT_TRUE(e.NewGame(false).ok());
  ASSERT_TRUE(e.Send("position startpos moves e2e4 f7f6 d2d4 g7g5").ok());
  ASSERT_TRUE(e.Send("go wtime 1000 btime 1000").ok());
  OutputLine l;
  std::optional<std::string> best;
  InfoLine info;
  bool saw_info = false;
  while (!best && e.ReadLine(In(5000), l) == ReadResult::kLine) {
    saw_info |= ParseInfoLine(l.text, info);
    best = ParseBestMove(l.text);
  }
  EXPECT_TRUE(saw_info);
  EXPECT_EQ(best.value_or(""), "d1h5");  // mate in one is found
  e.Quit();
  EXPECT_FALSE(e.Running());
}

// --engine-log: one file per engine process, every line both ways with its UTC time.
TEST(UciEngine, TrafficLogHasEveryLineBothWaysWithTimes) {
  const std::string dir = testing::TempDir() + "/engine_log";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  EngineSpec spec = TestEngine();
  spec.name = "a b";
  spec.log_dir = dir;
  UciEngine e(spec);
  ASSERT_TRUE(e.Start().ok());
  e.Kill();
  ASSERT_TRUE(e.EnsureRunning().ok());  // a second process: a second file
  e.Quit();
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir)) files.push_back(f.path());
  ASSERT_EQ(files.size(), 2u);
  std::stringstream text;
  text << std::ifstream(files[0]).rdbuf();
  EXPECT_NE(files[0].find("/a_b-"), std::string::npos) << files[0];
  const std::regex sent(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z > uci\n)");
  const std::regex read(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z < uciok\n)");
  EXPECT_TRUE(std::regex_search(text.str(), sent)) << text.str();
  EXPECT_TRUE(std::regex_search(text.str(), read)) << text.str();
  EXPECT_NE(text.str().find("Z > isready\n"), std::string::npos);
  EXPECT_NE(text.str().find("Z < readyok\n"), std::string::npos);
}

// The threads an engine searches with: set in the spec, else its option list's default.
TEST(UciEngine, ThreadsFromTheSpecOrTheEnginesDefault) {
  const std::string script = testing::TempDir() + "/threads_engine.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "while read l; do case \"$l\" in\n"
                           "uci) echo 'option name Threads type spin default 3 min 1 max 8'; "
                           "echo uciok;;\n"
                           "isready) echo readyok;;\n"
                           "quit) exit 0;;\n"
                           "esac; done\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  UciEngine by_default(EngineSpec{.name = "d", .cmd = script});
  ASSERT_TRUE(by_default.Start().ok());
  EXPECT_EQ(by_default.Threads(), 3);
  UciEngine set(EngineSpec{.name = "s", .cmd = script, .options = {{"Threads", "5"}}});
  ASSERT_TRUE(set.Start().ok());
  EXPECT_EQ(set.Threads(), 5);
  UciEngine none(TestEngine());
  ASSERT_TRUE(none.Start().ok());
  EXPECT_EQ(none.Threads(), 1);
}

TEST(UciEngine, HandshakeTimeoutAndRestartAfterCrash) {
  UciEngine slow(TestEngine({"--slow-start", "3000"}), EngineTimeouts{.handshake = Millis(200)});
  absl::Status st = slow.Start();
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_NE(st.message().find("uciok"), std::string::npos);
  slow.Kill();

  UciEngine crashy(TestEngine({"--crash"}));
  ASSERT_TRUE(crashy.Start().ok());
  ASSERT_TRUE(crashy.Send("position startpos").ok());
  ASSERT_TRUE(crashy.Send("go depth 1").ok());
  OutputLine l;
  EXPECT_EQ(crashy.ReadLine(In(5000), l), ReadResult::kEof);
  EXPECT_FALSE(crashy.Running());
  ASSERT_TRUE(crashy.EnsureRunning().ok());
  EXPECT_EQ(crashy.starts(), 2);
  EXPECT_TRUE(crashy.Running());
}

TEST(UciEngine, StockfishHandshake) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no stockfish"
                 << " (scripts/install-deps.sh installs it)";
  UciEngine sf(EngineSpec{
      .name = "sf", .cmd = "/usr/games/stockfish", .options = {{"Hash", "8"}, {"Threads", "1"}}});
  ASSERT_TRUE(sf.Start().ok());
  EXPECT_NE(sf.id_name().find("Stockfish"), std::string::npos);
  EXPECT_TRUE(sf.HasOption("UCI_Chess960"));
  ASSERT_TRUE(sf.NewGame(true).ok());
  ASSERT_TRUE(sf.Send("position startpos").ok());
  ASSERT_TRUE(sf.Send("go nodes 2000").ok());
  OutputLine l;
  std::optional<std::string> best;
  while (!best && sf.ReadLine(In(10000), l) == ReadResult::kLine) best = ParseBestMove(l.text);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(best->size(), 4u);
}

TEST(ParseOptionLine, ReadsEveryType) {
  std::optional<UciOption> spin =
      ParseOptionLine("option name Move Overhead type spin default 10 min 0 max 5000");
  ASSERT_TRUE(spin);
  EXPECT_EQ(spin->name, "Move Overhead");
  EXPECT_EQ(spin->type, "spin");
  EXPECT_EQ(spin->default_value, "10");
  EXPECT_EQ(spin->min, 0);
  EXPECT_EQ(spin->max, 5000);
  std::optional<UciOption> combo = ParseOptionLine(
      "option name Style type combo default Normal var Solid var Normal var Risky Play");
  ASSERT_TRUE(combo);
  EXPECT_EQ(combo->vars, (std::vector<std::string>{"Solid", "Normal", "Risky Play"}));
  std::optional<UciOption> button = ParseOptionLine("option name Clear Hash type button");
  ASSERT_TRUE(button);
  EXPECT_EQ(button->name, "Clear Hash");
  EXPECT_EQ(button->type, "button");
  EXPECT_FALSE(ParseOptionLine("id name Stockfish"));
}

TEST(CheckOptionValue, RefusesUnknownNamesAndValuesOutOfRangeWithTheList) {
  std::vector<UciOption> declared;
  for (const char* line : {"option name Hash type spin default 16 min 1 max 1024",
                           "option name Ponder type check default false",
                           "option name Style type combo default Solid var Solid var Risky",
                           "option name SyzygyPath type string default <empty>"})
    declared.push_back(*ParseOptionLine(line));
  // UCI option names are case-insensitive: the engine's own spelling is what is sent.
  EXPECT_EQ(CheckOptionValue(declared, "hash", "16").value_or(""), "Hash");
  EXPECT_EQ(CheckOptionValue(declared, "ponder", "TRUE").value_or(""), "Ponder");
  EXPECT_EQ(CheckOptionValue(declared, "Style", "risky").value_or(""), "Style");
  EXPECT_TRUE(CheckOptionValue(declared, "SyzygyPath", "/tb").ok());
  absl::StatusOr<std::string> unknown = CheckOptionValue(declared, "Hsh", "16");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find(
                "no option 'Hsh'; its options: Hash (spin 1..1024), Ponder (check), Style (combo "
                "Solid|Risky), SyzygyPath (string)"),
            std::string::npos)
      << unknown.status();
  for (const auto& [name, value, why] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"Hash", "1025", "out of its range 1..1024"},
           {"Hash", "0", "out of its range 1..1024"},
           {"Hash", "99999999999999999999", "not a whole number"},
           {"Hash", "16MB", "not a whole number"},
           {"Ponder", "yes", "true or false"},
           {"Style", "Wild", "not one of its values"}}) {
    absl::StatusOr<std::string> st = CheckOptionValue(declared, name, value);
    ASSERT_FALSE(st.ok()) << name << "=" << value;
    EXPECT_NE(st.status().message().find(why), std::string::npos) << st.status();
    EXPECT_NE(st.status().message().find("its options: Hash"), std::string::npos) << st.status();
  }
}

// A bare command is cmd= that command, named by the program's base name, as in every command.
TEST(ParseEngineSpec, ABareCommandIsItsCmd) {
  absl::StatusOr<EngineSpec> path = ParseEngineSpec("/usr/games/stockfish");
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(path->cmd, "/usr/games/stockfish");
  EXPECT_EQ(path->name, "stockfish");
  absl::StatusOr<EngineSpec> args = ParseEngineSpec("./engine --uci --threads=2");
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(args->cmd, "./engine");
  EXPECT_EQ(args->args, (std::vector<std::string>{"--uci", "--threads=2"}));
  EXPECT_EQ(args->name, "engine");
  EXPECT_EQ(ParseEngineSpec("builtin")->cmd, "builtin");
  EXPECT_FALSE(ParseEngineSpec("name=a,option.Hash=16").ok()) << "a spec without cmd=";
}

TEST(ParseEngineSpec, RefusesControlCharactersInOptions) {
  for (const std::string spec : {"cmd=sf,option.Hash=16\nquit", "cmd=sf,option.Ha\tsh=16"}) {
    const std::string& text = spec;
    absl::StatusOr<EngineSpec> parsed = ParseEngineSpec(spec);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("control character"), std::string::npos)
        << parsed.status();
  }
  EXPECT_TRUE(ParseEngineSpec("cmd=sf,option.Hash=16").ok());
}

// The handshake checks each option against the engine's list before sending any: an unknown
// name or a value out of range fails Start() with the list; another case of a declared name is
// sent in the engine's spelling.
TEST(UciEngine, OptionsAreCheckedAgainstTheEnginesList) {
  EngineSpec typo = TestEngine();
  typo.options = {{"Hsh", "16"}};
  absl::Status st = UciEngine(typo).Start();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(st.message().find("t: the engine has no option 'Hsh'; its options: Hash (spin "
                              "1..1024), UCI_Chess960 (check)"),
            std::string::npos)
      << st;
  EngineSpec big = TestEngine();
  big.options = {{"Hash", "2048"}};
  st = UciEngine(big).Start();
  EXPECT_NE(st.message().find("option Hash=2048: out of its range 1..1024"), std::string::npos)
      << st;
  const std::string log = ::testing::TempDir() + "uci-options-" + std::to_string(getpid());
  EngineSpec lower = TestEngine({"--log", log});
  lower.options = {{"hash", "32"}};
  UciEngine fine(lower);
  ASSERT_TRUE(fine.Start().ok());
  fine.Quit();
  std::ifstream in(log);
  const std::string sent((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(sent.find("setoption name Hash value 32"), std::string::npos) << sent;
  std::remove(log.c_str());
}

// Debian's Stockfish: a misspelled name is refused naming Hash in its list; a Hash beyond its
// maximum is refused as out of range.
TEST(UciEngine, StockfishRefusesUnknownOptionsAndValuesOutOfRange) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no stockfish"
                 << " (scripts/install-deps.sh installs it)";
  absl::Status typo = CheckEngine(
      EngineSpec{.name = "sf", .cmd = "/usr/games/stockfish", .options = {{"Hsh", "16"}}},
      EngineTimeouts{});
  EXPECT_EQ(typo.code(), absl::StatusCode::kInvalidArgument) << typo;
  EXPECT_NE(typo.message().find("no option 'Hsh'"), std::string::npos) << typo;
  EXPECT_NE(typo.message().find("Hash (spin 1.."), std::string::npos) << typo;
  absl::Status huge = CheckEngine(
      EngineSpec{.name = "sf", .cmd = "/usr/games/stockfish", .options = {{"Hash", "99999999999"}}},
      EngineTimeouts{});
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument) << huge;
  EXPECT_NE(huge.message().find("option Hash=99999999999: out of its range"), std::string::npos)
      << huge;
}

}  // namespace
}  // namespace arbiter::match

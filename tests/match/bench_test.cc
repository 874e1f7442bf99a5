// An engine's bench run the way a worker runs it: the signature and speed of the test engine,
// arbiter's own and Stockfish's (summary on stderr), the same in the sandbox; an engine whose
// bench hangs is killed at the timeout, one that prints garbage or fails is a clear error.
#include "match/bench.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

namespace arbiter::match {
namespace {

EngineSpec TestEngine(std::vector<std::string> args) {
  return EngineSpec{.name = "t", .cmd = TEST_ENGINE, .args = std::move(args)};
}

TEST(BenchOutput, ReadsTheSummary) {
  auto r = ParseBenchOutput(
      {"Total time (ms) : 10", "Nodes searched  : 232923", "Nodes/second    : 1500000"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->nodes, 232923u);
  EXPECT_EQ(r->nps, 1500000u);
  EXPECT_FALSE(ParseBenchOutput({"info depth 1", "bestmove e2e4"}).ok());
  EXPECT_FALSE(ParseBenchOutput({"Nodes searched  : many"}).ok());
}

TEST(EngineBench, TestEngineSignatureAndSpeed) {
  auto r = RunEngineBench(TestEngine({"--bench-nodes", "4242", "--bench-nps", "777"}), {},
                          Millis(10000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->nodes, 4242u);
  EXPECT_EQ(r->nps, 777u);
}

TEST(EngineBench, ArbiterBenchIsItsSignature) {
  auto r = RunEngineBench(EngineSpec{.name = "arbiter", .cmd = ARBITER_BINARY}, {}, Millis(120000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->nodes, 232923u);  // the README's signature of `arbiter bench`
  EXPECT_GT(r->nps, 0u);
}

TEST(EngineBench, StockfishInTheSandbox) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no /usr/games/stockfish"
                 << " (scripts/install-deps.sh installs it)";
  SandboxOptions box{.isolation = Isolation::kLimits};
  box.limits.memory_mb = kSanitizerBuild ? 0 : 1024;
  box.root_drops_to = -1;
  auto r =
      RunEngineBench(EngineSpec{.name = "sf", .cmd = "/usr/games/stockfish"}, box, Millis(120000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->nodes, 100000u);  // its summary is on stderr
  EXPECT_GT(r->nps, 0u);
}

TEST(EngineBench, InNamespaces) {
  if (absl::Status st = ProbeNamespaces("/usr/bin/bwrap"); !st.ok())
    GTEST_SKIP() << "no namespaces for bwrap here: " << st.message();
  SandboxOptions box{.isolation = Isolation::kNamespaces};
  box.limits.memory_mb = kSanitizerBuild ? 0 : 256;
  box.root_drops_to = 60000 + getpid() % 5000;
  auto r = RunEngineBench(TestEngine({"--bench-nodes", "99"}), box, Millis(10000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->nodes, 99u);
}

TEST(EngineBench, HangIsKilledAtTheTimeout) {
  const auto start = std::chrono::steady_clock::now();
  auto r = RunEngineBench(TestEngine({"--bench-hang"}), {}, Millis(500));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(r.status().message().find("engine 't': bench did not finish within 0.5 s"),
            std::string::npos)
      << r.status();
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(EngineBench, GarbageIsAClearError) {
  auto r = RunEngineBench(TestEngine({"--bench-garbage"}), {}, Millis(10000));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(r.status().message());
  EXPECT_NE(m.find("bad bench summary line 'Nodes searched  : lots'"), std::string::npos) << m;
  EXPECT_NE(m.find("exited with code 3"), std::string::npos) << m;
}

// The summary is read from stderr to its end, but an engine that leaves a process behind holding
// its stderr (30 s here) does not hold the bench: the summary it wrote is read within a second.
TEST(EngineBench, AProcessLeftHoldingStderrDoesNotHoldTheBench) {
  const auto start = std::chrono::steady_clock::now();
  auto r =
      RunEngineBench(TestEngine({"--bench-nodes", "4242", "--bench-orphan"}), {}, Millis(20000));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->nodes, 4242u);
  EXPECT_LT(took, std::chrono::seconds(10));
}

TEST(EngineBench, NoBenchAtAllIsAClearError) {
  // /bin/true takes `bench` as an argument and prints nothing.
  auto r = RunEngineBench(EngineSpec{.name = "true", .cmd = "/bin/true"}, {}, Millis(10000));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no 'Nodes searched : N' line"), std::string::npos)
      << r.status();
  auto missing =
      RunEngineBench(EngineSpec{.name = "m", .cmd = "/nonexistent/engine"}, {}, Millis(10000));
  ASSERT_FALSE(missing.ok());
}

}  // namespace
}  // namespace arbiter::match

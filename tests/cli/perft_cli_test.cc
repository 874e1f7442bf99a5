// Drives the real `arbiter perft` process: text and JSON output, suites, and bad input.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/strings.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/perft.pb.h"

namespace arbiter {
namespace {

struct Output {
  int exit_code;
  std::string text;  // stdout and stderr together
};

// `env`: assignments put before the command ("NAME=value ...").
Output RunArbiter(const std::string& args, const std::string& env = "") {
  std::string cmd = Cat(env, env.empty() ? "" : " ", ARBITER_BINARY, " ", args, " 2>&1");
  FILE* pipe = popen(cmd.c_str(), "r");
  Output out{-1, ""};
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.text.append(buf, n);
  int status = pclose(pipe);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(PerftCli, DivideLinesThenTotal) {
  Output o = RunArbiter("perft --startpos --depth 3 --divide");
  ASSERT_EQ(o.exit_code, 0) << o.text;
  EXPECT_NE(o.text.find("e2e4: 600\n"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("g1f3: 440\n"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("Nodes searched: 8902\n"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("nodes/s"), std::string::npos) << o.text;
}

TEST(PerftCli, PromotionsInDivide) {
  Output o = RunArbiter("perft --fen '8/P6k/8/8/8/8/8/K7 w - - 0 1' --depth 1 --divide");
  ASSERT_EQ(o.exit_code, 0) << o.text;
  for (const char* m : {"a7a8q: 1", "a7a8r: 1", "a7a8b: 1", "a7a8n: 1"})
    EXPECT_NE(o.text.find(m), std::string::npos) << m << " missing in\n" << o.text;
}

TEST(PerftCli, JsonIsAPerftResult) {
  Output o = RunArbiter(
      "perft --fen 'r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1' "
      "--depth 3 --divide --json --threads 2 --hash 8");
  ASSERT_EQ(o.exit_code, 0) << o.text;
  v1::PerftResult r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(o.text, &r).ok()) << o.text;
  EXPECT_EQ(r.nodes(), 97862u);
  EXPECT_EQ(r.depth(), 3u);
  EXPECT_EQ(r.divide_size(), 48);
  uint64_t sum = 0;
  for (const auto& d : r.divide()) sum += d.nodes();
  EXPECT_EQ(sum, r.nodes());
}

// ARBITER_PERFT_PATH picks the copy of the counting core; --json names the one that ran.
TEST(PerftCli, PerftPathIsReportedAndCanBeForced) {
  Output best = RunArbiter("perft --startpos --depth 4 --json");
  ASSERT_EQ(best.exit_code, 0) << best.text;
  v1::PerftResult r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(best.text, &r).ok()) << best.text;
  EXPECT_EQ(r.nodes(), 197281u);
  EXPECT_TRUE(r.perft_core_path() == v1::PERFT_PATH_V2 ||
              r.perft_core_path() == v1::PERFT_PATH_V3 || r.perft_core_path() == v1::PERFT_PATH_V4)
      << best.text;
  // Every x86-64-v2 CPU runs v2 in the portable build; a build for one level carries only its own.
  Output forced = RunArbiter("perft --startpos --depth 4 --json", "ARBITER_PERFT_PATH=v2");
  if (forced.exit_code == 0) {
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(forced.text, &r).ok()) << forced.text;
    EXPECT_EQ(r.perft_core_path(), v1::PERFT_PATH_V2) << forced.text;
    EXPECT_EQ(r.nodes(), 197281u);
    // People read the path as ARBITER_PERFT_PATH spells it.
    Output text = RunArbiter("perft --startpos --depth 3", "ARBITER_PERFT_PATH=v2");
    EXPECT_NE(text.text.find(", v2 (magic sliders"), std::string::npos) << text.text;
  } else {
    EXPECT_EQ(forced.exit_code, 2) << forced.text;
    EXPECT_NE(forced.text.find("is not in this binary"), std::string::npos) << forced.text;
  }
  Output text = RunArbiter("perft --startpos --depth 3");
  EXPECT_NE(text.text.find(" sliders"), std::string::npos) << text.text;
}

TEST(PerftCli, BadPerftPathIsAStartUpError) {
  for (const char* bad : {"v9", "native", "'v2;v3'"}) {
    Output o = RunArbiter("perft --startpos --depth 1", Cat("ARBITER_PERFT_PATH=", bad));
    EXPECT_EQ(o.exit_code, 2) << bad << ": " << o.text;
    EXPECT_NE(o.text.find("error: ARBITER_PERFT_PATH: unknown perft path"), std::string::npos)
        << o.text;
    EXPECT_EQ(o.text.find("Nodes searched"), std::string::npos) << o.text;
  }
}

TEST(PerftCli, BadFenNamesTheField) {
  Output o = RunArbiter(
      "perft --fen 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e5 0 1' --depth 2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.text.find("FEN field 4"), std::string::npos) << o.text;
}

TEST(PerftCli, DepthOutOfRange) {
  Output o = RunArbiter("perft --startpos --depth 40");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.text.find("depth"), std::string::npos) << o.text;
}

TEST(PerftCli, SuiteReportsFirstWrongDepthAndFails) {
  std::string path = ::testing::TempDir() + "/suite.epd";
  {
    std::ofstream f(path);
    f << "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400 ;D3 8902\n";
    f << "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 ;D1 48 ;D2 2040\n";
    f << "not a fen ;D1 3\n";
    f << "\n# comment\n";
    f << "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66 ;D3 1197 ;D4 7059 ;D5 133987\n";
  }
  Output o = RunArbiter("perft --suite " + path + " --max-depth 4");
  EXPECT_EQ(o.exit_code, 1) << o.text;
  EXPECT_NE(o.text.find("ok    line 1 D1..D3"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("WRONG line 2 D2 expected 2040 got 2039"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("ERROR line 3"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("ok    line 6 D1..D4"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("4 positions: 2 ok, 1 wrong, 1 errors"), std::string::npos) << o.text;

  Output good = RunArbiter("perft --suite " + std::string(ARBITER_PERFT_DATA) +
                           "/standard.epd --max-nodes 100000");
  EXPECT_EQ(good.exit_code, 0) << good.text;
  EXPECT_NE(good.text.find("0 wrong, 0 errors"), std::string::npos) << good.text;
}

TEST(PerftCli, MissingSuiteFile) {
  Output o = RunArbiter("perft --suite /nonexistent/suite.epd");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.text.find("cannot open suite file"), std::string::npos) << o.text;
}

}  // namespace
}  // namespace arbiter

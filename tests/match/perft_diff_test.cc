#include "match/perft_diff.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

namespace arbiter::match {
namespace {

EngineSpec TestEngine(std::vector<std::string> args) {
  return EngineSpec{.name = "t", .cmd = TEST_ENGINE, .args = std::move(args)};
}

TEST(PerftDiff, DescendsToTheMissingEnPassantCapture) {
  UciEngine broken(TestEngine({"--perft-bug"}));
  auto r = PerftDiff(broken, "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1", 3, Millis(60000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->identical);
  EXPECT_EQ(r->depth, 2);
  ASSERT_EQ(r->path.size(), 1u);
  EXPECT_EQ(r->path[0], "e2e4");
  ASSERT_EQ(r->missing.size(), 1u);
  EXPECT_EQ(r->missing[0], "d4e3");
  EXPECT_TRUE(r->extra.empty());
  EXPECT_EQ(r->fen.substr(0, r->fen.find(' ')), "4k3/8/8/8/3pP3/8/8/4K3");
  ASSERT_EQ(r->steps.size(), 2u);
  EXPECT_GT(r->steps[0].expected, r->steps[0].reported);
}

TEST(PerftDiff, CorrectEngineIsIdentical) {
  UciEngine good(TestEngine({}));
  auto r = PerftDiff(good, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
                     2, Millis(60000));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->identical);
  EXPECT_EQ(r->steps[0].expected, 2039u);
  EXPECT_EQ(r->steps[0].reported, 2039u);
}

TEST(PerftDiff, CommandPrintsTheFirstDifferenceAndExitsWithOne) {
  std::string cmd = std::string(ARBITER_BINARY) + " perft-diff --engine '" + TEST_ENGINE +
                    " --perft-bug' --fen '4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1' --depth 2";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_NE(out.find("missing moves (legal, not reported): d4e3"), std::string::npos) << out;
  EXPECT_NE(out.find("FEN:   4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1"), std::string::npos) << out;
}

}  // namespace
}  // namespace arbiter::match

// Runs the real `arbiter stats` binary: its text and JSON output, and its errors on bad input.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/stats.pb.h"

namespace arbiter {
namespace {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

CliRun Arbiter(const std::string& args) {
  const std::string command = std::string(ARBITER_BINARY) + " stats " + args + " 2>&1";
  CliRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StatsCli, TrinomialTextWithBayesEloSprt) {
  const CliRun r =
      Arbiter("--wdl 1477,2942,1351 --elo0 0 --elo1 10 --alpha 0.01 --beta 0.01 --model bayeselo");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "Games: 5770 (W 1477, D 2942, L 1351)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "score 51.09 %")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Elo: 7.59 +/- ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "LLR 2.53 (-4.60, 4.60) - continue")) << r.out;
}

TEST(StatsCli, PentanomialTextWithNormalizedSprt) {
  const CliRun r = Arbiter("--penta 365,16618,36229,16974,390 --elo0 0 --elo1 2");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "(70576 pairs), Ptnml(0-2): [365, 16618, 36229, 16974, 390]"))
      << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "SPRT (normalized, [0.00, 2.00], alpha 0.05, beta 0.05): LLR 2.25 "
                       "(-2.94, 2.94) - continue"))
      << r.out;
}

TEST(StatsCli, DecisionIsPrinted) {
  const CliRun r = Arbiter("--wdl 4250,0,0 --elo0 0 --elo1 10");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "- H1 accepted")) << r.out;
}

TEST(StatsCli, JsonIsAStatsReport) {
  const CliRun r = Arbiter(
      "--penta 871,26175,55983,26678,821 --elo0 0 --elo1 2 --model logistic "
      "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  v1::StatsReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok()) << r.out;
  EXPECT_EQ(report.penta().ll(), 871u);
  EXPECT_EQ(report.penta().d(), 55983u);
  EXPECT_EQ(report.penta().ww(), 821u);
  EXPECT_EQ(report.pairs(), 110528u);
  EXPECT_EQ(report.games(), 221056u);
  EXPECT_FALSE(report.has_wdl());
  EXPECT_NEAR(report.score(), 0.5 + (26678 - 26175 + 2.0 * (821 - 871)) / 4.0 / 110528, 1e-12);
  EXPECT_EQ(report.sprt().model(), v1::SPRT_MODEL_LOGISTIC);
  EXPECT_NEAR(report.sprt().llr(), -4.98, 0.025);
  EXPECT_EQ(report.sprt().decision(), v1::SPRT_DECISION_ACCEPT_H0);
  EXPECT_NEAR(report.los(), 0.5 + (report.elo() > 0 ? 0.1 : -0.1), 0.5);
  // Field names follow the proto (preserve_proto_field_names).
  EXPECT_TRUE(Contains(r.out, "\"elo_error95\"")) << r.out;
}

TEST(StatsCli, JsonWithoutSprtHasNoSprtReport) {
  const CliRun r = Arbiter("--wdl 136,111,96 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  v1::StatsReport report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok()) << r.out;
  EXPECT_EQ(report.wdl().wins(), 136u);
  EXPECT_EQ(report.wdl().draws(), 111u);
  EXPECT_EQ(report.wdl().losses(), 96u);
  EXPECT_NEAR(report.elo(), 40.70, 0.2);
  EXPECT_NEAR(report.nelo(), 49.77, 0.25);
  EXPECT_NEAR(report.los(), 0.9960, 0.0005);
  EXPECT_FALSE(report.has_sprt());
}

struct BadInput {
  std::string args, message;
};

class StatsCliErrorTest : public testing::TestWithParam<BadInput> {};

TEST_P(StatsCliErrorTest, ClearErrorAndNonZeroExit) {
  const CliRun r = Arbiter(GetParam().args);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, GetParam().message)) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, StatsCliErrorTest,
    testing::Values(
        BadInput{"--wdl 1,2", "error: --wdl needs 3 counts W,D,L separated by commas, got 2"},
        BadInput{"--wdl 5,-1,3", "error: --wdl count 2 ('-1') is negative"},
        BadInput{"--penta 1,2,x,4,5", "error: --penta count 3 ('x') is not a whole number"},
        BadInput{"--penta 1,2,3,4", "error: --penta needs 5 counts LL,LD,D,WD,WW"},
        BadInput{"--wdl 0,0,0", "error: --wdl: no games"},
        BadInput{"--wdl 18446744073709551615,0,1",
                 "error: --wdl count 1 ('18446744073709551615') is too large"},
        BadInput{"--wdl 10,5,3 --elo0 2 --elo1 2", "elo0 (2) must be less than elo1 (2)"},
        BadInput{"--wdl 10,5,3 --elo0 5 --elo1 0", "elo0 (5) must be less than elo1 (0)"},
        BadInput{"--wdl 10,5,3 --elo0 0", "the SPRT needs both --elo0 and --elo1"},
        BadInput{"--wdl 10,5,3 --elo0 0 --elo1 5 --alpha 1.5", "alpha (1.5) must be in (0, 1)"},
        BadInput{"--wdl 10,5,3 --elo0 0 --elo1 5 --model bayesian", "unknown SPRT model"},
        BadInput{"--penta 1,2,3,4,5 --elo0 0 --elo1 5 --model bayeselo", "needs game counts"},
        BadInput{"--penta 1,2,3,4,5 --wdl 1,2,3", "give exactly one of"},
        BadInput{"", "give exactly one of"}));

}  // namespace
}  // namespace arbiter

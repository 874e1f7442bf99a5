// Deep suite verification (label "slow"): standard.epd to D6, fischer960.epd to D6.
#include "engine/perft.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"

namespace arbiter {
namespace {

void CheckAll(const std::string& name) {
  for (const auto& line : testing::LoadSuite(name)) {
    auto pos = Position::FromFen(line.fen);
    ASSERT_TRUE(pos.ok()) << line.fen;
    for (auto [depth, expected] : line.expected) {
      auto r = Perft(*pos, {.depth = depth, .threads = 0, .hash_mb = 256});
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->nodes, expected) << line.fen << " depth " << depth;
    }
  }
}

TEST(PerftDeep, StandardToD6) { CheckAll("standard.epd"); }
TEST(PerftDeep, Chess960ToD6) { CheckAll("fischer960.epd"); }

}  // namespace
}  // namespace arbiter

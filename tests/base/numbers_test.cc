#include "base/numbers.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace arbiter {
namespace {

TEST(ParseNumber, WholeStringOnly) {
  int v = 0;
  EXPECT_TRUE(ParseNumber("42", v));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(ParseNumber("-7", v));
  EXPECT_EQ(v, -7);
  for (const char* bad : {"", " 1", "1 ", "+1", "1x", "0x10", "abc"})
    EXPECT_FALSE(ParseNumber(bad, v)) << "'" << bad << "'";
}

TEST(ParseNumber, RangeOfTheType) {
  uint8_t small = 0;
  EXPECT_TRUE(ParseNumber("255", small));
  EXPECT_EQ(small, 255);
  EXPECT_FALSE(ParseNumber("256", small));
  EXPECT_FALSE(ParseNumber("-1", small));
  uint64_t big = 0;
  EXPECT_TRUE(ParseNumber("18446744073709551615", big));
  EXPECT_EQ(big, std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(ParseNumber("18446744073709551616", big));
}

TEST(ParseNumber, Floating) {
  double d = 0;
  EXPECT_TRUE(ParseNumber("0.25", d));
  EXPECT_EQ(d, 0.25);
  EXPECT_TRUE(ParseNumber("-3", d));
  EXPECT_EQ(d, -3);
  EXPECT_FALSE(ParseNumber("1.5.", d));
}

}  // namespace
}  // namespace arbiter

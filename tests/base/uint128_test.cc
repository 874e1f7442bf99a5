#include "base/uint128.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace arbiter {
namespace {

TEST(Uint128Text, Decimal) {
  EXPECT_EQ(Uint128ToString(0), "0");
  EXPECT_EQ(Uint128ToString(uint64_t(18446744073709551615u)), "18446744073709551615");
  EXPECT_EQ(Uint128ToString(Uint128FromParts(1, 0) * 1000), "18446744073709551616000");
  EXPECT_EQ(Uint128ToString(~Uint128(0)), "340282366920938463463374607431768211455");
}

TEST(Uint128Text, ParseRoundTrip) {
  for (Uint128 v : {Uint128(0), Uint128(7), Uint128FromParts(3, 5), ~Uint128(0)}) {
    Uint128 back = 1;
    ASSERT_TRUE(ParseUint128(Uint128ToString(v), back));
    EXPECT_TRUE(back == v) << Uint128ToString(v);
  }
  Uint128 v = 0;
  EXPECT_FALSE(ParseUint128("", v));
  EXPECT_FALSE(ParseUint128("12a", v));
  EXPECT_FALSE(ParseUint128("-1", v));
  EXPECT_FALSE(ParseUint128("340282366920938463463374607431768211456", v));  // 2^128
}

}  // namespace
}  // namespace arbiter

// proto/wire_enums.h: the wire's enums spelled as the sandbox and the perft core name
// themselves, both ways, and what an unknown spelling or value becomes.
#include "proto/wire_enums.h"

#include "engine/perft_path.h"
#include "gtest/gtest.h"
#include "match/sandbox.h"

namespace arbiter {
namespace {

TEST(WireEnums, IsolationSpellingsRoundTrip) {
  for (match::Isolation i : {match::Isolation::kNone, match::Isolation::kLimits,
                             match::Isolation::kLandlock, match::Isolation::kNamespaces}) {
    const std::string_view name = match::IsolationName(i);
    const v1::Isolation wire = IsolationFromString(name);
    EXPECT_NE(wire, v1::ISOLATION_UNSPECIFIED) << name;
    EXPECT_EQ(IsolationString(wire), name);
    EXPECT_EQ(IsolationConfines(wire), match::Confines(i)) << name;
  }
  EXPECT_EQ(IsolationFromString("namespaces"), v1::ISOLATION_NAMESPACES);
  EXPECT_EQ(IsolationFromString("landlock"), v1::ISOLATION_LANDLOCK);
  EXPECT_EQ(IsolationFromString("limits"), v1::ISOLATION_LIMITS);
  EXPECT_EQ(IsolationFromString("none"), v1::ISOLATION_NONE);
  EXPECT_EQ(IsolationFromString("off"), v1::ISOLATION_NONE);
}

// Unknown spellings and values confine nothing, so they never open uploaded engines.
TEST(WireEnums, UnknownIsolationIsUnspecifiedAndConfinesNothing) {
  for (const char* text : {"", "Namespaces", "bwrap", "unknown", "landlock "})
    EXPECT_EQ(IsolationFromString(text), v1::ISOLATION_UNSPECIFIED) << text;
  EXPECT_EQ(IsolationString(v1::ISOLATION_UNSPECIFIED), "unknown");
  EXPECT_EQ(IsolationString(v1::Isolation(9)), "unknown");
  EXPECT_FALSE(IsolationConfines(v1::ISOLATION_UNSPECIFIED));
  EXPECT_FALSE(IsolationConfines(v1::Isolation(9)));
}

TEST(WireEnums, PerftPathSpellingsRoundTrip) {
  for (const char* name : {"v2", "v3", "v4"}) {
    const v1::PerftPath wire = PerftPathFromString(name);
    EXPECT_NE(wire, v1::PERFT_PATH_UNSPECIFIED) << name;
    EXPECT_EQ(PerftPathString(wire), name);
  }
  for (const PerftPath* p : BuiltPerftPaths())
    EXPECT_EQ(PerftPathString(PerftPathFromString(p->name)), p->name);
  for (const char* text : {"", "v1", "V3", "native", "unknown"})
    EXPECT_EQ(PerftPathFromString(text), v1::PERFT_PATH_UNSPECIFIED) << text;
  EXPECT_EQ(PerftPathString(v1::PERFT_PATH_UNSPECIFIED), "unknown");
  EXPECT_EQ(PerftPathString(v1::PerftPath(7)), "unknown");
}

}  // namespace
}  // namespace arbiter

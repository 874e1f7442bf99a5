// Every listener's address: the forms the manifests and the README use, and what is refused.
#include "base/listen_address.h"

#include <gtest/gtest.h>

namespace arbiter {
namespace {

std::string Parsed(std::string_view text) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress(text);
  return a.ok() ? a->ToString() : std::string("error: ") + std::string(a.status().message());
}

TEST(ListenAddress, PortAloneMeansEveryIpv4Interface) {
  EXPECT_EQ(Parsed(":8080"), "0.0.0.0:8080");
  EXPECT_EQ(Parsed("8080"), "0.0.0.0:8080");
  EXPECT_EQ(Parsed(":0"), "0.0.0.0:0");
}

TEST(ListenAddress, HostsAndIpv6InBrackets) {
  EXPECT_EQ(Parsed("127.0.0.1:50051"), "127.0.0.1:50051");
  EXPECT_EQ(Parsed("localhost:9090"), "127.0.0.1:9090");
  EXPECT_EQ(Parsed("[::1]:8080"), "[::1]:8080");
  EXPECT_EQ(Parsed("[::]:8080"), "[::]:8080");
  EXPECT_EQ(Parsed("coordinator.example:1"), "coordinator.example:1");
  EXPECT_TRUE(ParseListenAddress("[::1]:1")->v6());
  EXPECT_TRUE(ParseListenAddress("[::1]:1")->loopback());
  EXPECT_FALSE(ParseListenAddress(":1")->loopback());
}

TEST(ListenAddress, RefusesWhatNoServerCouldListenOn) {
  for (std::string_view bad : {"", ":", "no-port-here", "host:", ":65536", ":-1", ":80x",
                               "::1:8080", "[::1]8080", "[::1", "a b:80", "host:123456"}) {
    EXPECT_NE(Parsed(bad).find("error: listen address"), std::string::npos) << bad;
  }
  EXPECT_NE(Parsed("::1:80").find("brackets"), std::string::npos);
}

}  // namespace
}  // namespace arbiter

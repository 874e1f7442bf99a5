#include "net/status.h"

#include "gtest/gtest.h"

namespace arbiter::net {
namespace {

TEST(Status, CodesCarryOverBothWays) {
  EXPECT_TRUE(ToGrpc(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpc(grpc::Status::OK, "ignored").ok());
  for (int c = 1; c <= 16; ++c) {
    const absl::Status s(static_cast<absl::StatusCode>(c), "why");
    const grpc::Status g = ToGrpc(s);
    EXPECT_EQ(int(g.error_code()), c);
    EXPECT_EQ(g.error_message(), "why");
    EXPECT_EQ(FromGrpc(g), s);
  }
}

TEST(Status, ContextGoesBeforeTheMessage) {
  const absl::Status s =
      FromGrpc(grpc::Status(grpc::StatusCode::NOT_FOUND, "no run 7"), "watch run 7");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "watch run 7: no run 7");
}

}  // namespace
}  // namespace arbiter::net

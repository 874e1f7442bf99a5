// absl::Status <-> grpc::Status at the service edge. Both use the canonical codes (0..16), so a
// code carries over unchanged.
//
//   reactor->Finish(net::ToGrpc(coordinator.CancelRun(id, reason)));
//   if (!s.ok()) return net::FromGrpc(s, Cat("submit to ", address));
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace arbiter::net {

grpc::Status ToGrpc(const absl::Status& status);

// With a `context`, the message reads "<context>: <gRPC message>".
absl::Status FromGrpc(const grpc::Status& status, std::string_view context = {});

}  // namespace arbiter::net

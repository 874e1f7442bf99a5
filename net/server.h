// gRPC server helpers: listen addresses, health and reflection on every arbiter server.
#pragma once

#include <string>

namespace arbiter::net {

// ":50051" -> "0.0.0.0:50051", "[::1]:50051" as is (base/listen_address.h); what does not parse
// is returned as is, for the server to refuse with its own message.
std::string NormalizeAddress(const std::string& address);

// Turns on grpc.health.v1.Health and grpc.reflection.v1alpha for servers built afterwards.
void EnableHealthAndReflection();

}  // namespace arbiter::net

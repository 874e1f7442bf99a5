#include "net/server.h"

#include "base/listen_address.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"

namespace arbiter::net {

std::string NormalizeAddress(const std::string& address) {
  absl::StatusOr<ListenAddress> a = ParseListenAddress(address);
  return a.ok() ? a->ToString() : address;
}

void EnableHealthAndReflection() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
}

}  // namespace arbiter::net

#include "net/server.h"

#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"

namespace arbiter::net {

std::string NormalizeAddress(const std::string& address) {
  if (!address.empty() && address[0] == ':') return "0.0.0.0" + address;
  if (address.find(':') == std::string::npos) return "0.0.0.0:" + address;
  return address;
}

void EnableHealthAndReflection() {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
}

}  // namespace arbiter::net

#include "net/status.h"

#include <string>

#include "base/strings.h"

namespace arbiter::net {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpc(const grpc::Status& status, std::string_view context) {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  if (context.empty()) return absl::Status(code, status.error_message());
  return absl::Status(code, Cat(context, ": ", status.error_message()));
}

}  // namespace arbiter::net

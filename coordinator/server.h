// The coordinator process: the Coordinator behind RunService, WorkService and AdminService (gRPC
// callback API; every call authenticated by a bearer token, optionally over TLS), health and
// reflection, and the metrics endpoint. `arbiter coordinator` and `arbiter local` both run one of
// these.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"

namespace arbiter::coordinator {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free port
  std::string metrics;                     // empty = no metrics endpoint
  CoordinatorOptions coordinator;
  // Authentication is on unless `no_auth` (accepted only on a loopback address). The first admin
  // token comes from `admin_token_file` or is made once into DATA/admin.token.
  bool no_auth = false;
  std::string admin_token_file;
  // Tokens to install with known secrets (name, role, secret): `arbiter local`'s own.
  std::vector<std::tuple<std::string, v1::Role, std::string>> tokens;
  // TLS on the gRPC port (PEM files); with `tls_client_ca` clients must present a certificate
  // signed by it (mutual TLS).
  std::string tls_cert, tls_key, tls_client_ca;
  // The gRPC server's memory for messages being read and written (its resource quota).
  size_t grpc_memory_bytes = size_t(128) << 20;
};

class Server {
 public:
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();
  int port() const { return port_; }
  int metrics_port() const { return metrics_port_; }
  Coordinator& coordinator() { return *coordinator_; }
  // Stops taking calls, ends waiting long polls and watches, waits briefly for the rest.
  void Shutdown();

 private:
  struct Impl;
  Server() = default;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<Coordinator> coordinator_;
  int port_ = 0, metrics_port_ = 0;
};

}  // namespace arbiter::coordinator

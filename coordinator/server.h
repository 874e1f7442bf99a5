// The coordinator process: the Coordinator behind RunService and WorkService (gRPC callback
// API), health and reflection, and the metrics endpoint. `arbiter coordinator` and
// `arbiter local` both run one of these.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"

namespace arbiter::coordinator {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free port
  std::string metrics;                     // empty = no metrics endpoint
  CoordinatorOptions coordinator;
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

// `arbiter health ADDRESS`: asks a server's gRPC health service (grpc.health.v1.Health/Check, the
// service every arbiter server runs) whether it is SERVING; exit 0 if so, 1 if not or
// unreachable. For probes where the kubelet's own gRPC probe is not available (an exec probe,
// podman's health checks) and for operators checking a port by hand.
#include <condition_variable>
#include <iostream>
#include <mutex>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"

namespace arbiter::cli {
namespace {

int CheckHealth(const std::string& address, double timeout_s) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(int64_t(timeout_s * 1000)));
  // HealthCheckRequest{service: ""} is the empty message; the answer HealthCheckResponse has one
  // field, status = 1 (tag 0x08), SERVING = 1.
  grpc::ByteBuffer request, response;
  grpc::Slice empty("", 0);
  request = grpc::ByteBuffer(&empty, 1);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = std::move(s);
                   done = true;
                   cv.notify_one();
                 });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (!status.ok()) {
    std::cerr << "health " << address << ": " << status.error_message() << "\n";
    return 1;
  }
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (response.Dump(&slices).ok())
    for (const grpc::Slice& s : slices)
      bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (bytes != std::string("\x08\x01", 2)) {
    std::cout << "NOT_SERVING\n";
    return 1;
  }
  std::cout << "SERVING\n";
  return 0;
}

}  // namespace

void AddHealthCommand(CLI::App& app, int& exit_code) {
  auto address = std::make_shared<std::string>();
  auto timeout = std::make_shared<double>(5);
  CLI::App* cmd = app.add_subcommand(
      "health", "Ask a server's gRPC health service (plaintext) whether it is serving: exit 0/1");
  cmd->add_option("address", *address, "HOST:PORT, e.g. 127.0.0.1:8081")->required();
  cmd->add_option("--timeout-s", *timeout, "Seconds to wait for the answer")
      ->check(CLI::Range(0.1, 600.0));
  cmd->callback([address, timeout, &exit_code] { exit_code = CheckHealth(*address, *timeout); });
}

}  // namespace arbiter::cli

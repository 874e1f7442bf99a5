// Test helpers for a coordinator with authentication: token secrets in files, tokens created
// through the AdminService with the admin's secret; the run a CLI child submitted.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "coordinator/auth.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "proto/arbiter/v1/admin_service.grpc.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"

namespace arbiter::testing {

// A new secret written to `path` (mode 0600); returns the secret.
inline std::string WriteTokenFile(const std::filesystem::path& path) {
  const std::string secret = *coordinator::NewTokenSecret();
  std::ofstream(path) << secret << "\n";
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return secret;
}

// The admin secret of a test's coordinator in DIR/admin.token (made once; `secret` keeps it), and
// ARBITER_TOKEN_FILE pointing there so that the test's own calls and its CLI children use it.
inline std::string AdminTokenFile(const std::filesystem::path& dir, std::string& secret) {
  const auto path = dir / "admin.token";
  if (secret.empty()) secret = WriteTokenFile(path);
  setenv("ARBITER_TOKEN_FILE", path.c_str(), 1);
  return path.string();
}

// Creates token `name` with `role` on the coordinator at `address` (as the admin `admin_secret`)
// and writes its secret to `path`; returns the gRPC status of the call.
inline grpc::Status CreateTokenFile(const std::string& address, const std::string& admin_secret,
                                    const std::string& name, v1::Role role,
                                    const std::filesystem::path& path) {
  auto stub = v1::AdminService::NewStub(
      net::Dial(address, net::ClientCredentials{admin_secret, "", "", ""}));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::CreateTokenRequest req;
  req.set_name(name);
  req.set_role(role);
  v1::CreateTokenResponse resp;
  grpc::Status s = stub->CreateToken(&ctx, req, &resp);
  if (s.ok()) std::ofstream(path) << resp.secret() << "\n";
  return s;
}

// The one run on the coordinator (a test whose CLI child submitted it does not know its id):
// NOT_FOUND while there is none, FAILED_PRECONDITION when there are several.
inline grpc::Status OnlyRun(v1::RunService::Stub& stub, v1::Run& run) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::ListRunsRequest req;
  v1::ListRunsResponse resp;
  grpc::Status s = stub.ListRuns(&ctx, req, &resp);
  if (!s.ok()) return s;
  if (resp.runs_size() == 0) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no run yet");
  if (resp.runs_size() > 1)
    return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "more than one run");
  run = resp.runs(0);
  return grpc::Status::OK;
}

}  // namespace arbiter::testing

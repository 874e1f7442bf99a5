// `arbiter tokens` (admin: create, list, revoke API tokens), `arbiter whoami`, `arbiter engines`
// (list and delete uploaded engines) and `arbiter workers` (who plays, and how isolated).
#include <iostream>
#include <memory>

#include "absl/strings/str_format.h"
#include "cli/cluster_client.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "net/metrics.h"
#include "proto/arbiter/v1/cluster.grpc.pb.h"
#include "proto/roles.h"

namespace arbiter::cli {
namespace {

std::string When(double unix) {
  if (unix <= 0) return "never";
  char buf[32];
  const time_t t = time_t(unix);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::gmtime(&t));
  return buf;
}

// A call with a deadline on a fresh channel to `address`.
template <typename Service, typename Stub, typename Request, typename Response>
grpc::Status Call(const std::string& address,
                  grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Response*),
                  const Request& request, Response* response) {
  auto stub = Service::NewStub(net::Dial(address));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return (stub.get()->*method)(&ctx, request, response);
}

}  // namespace

void AddAccessCommands(CLI::App& app, int& exit_code) {
  auto address = std::make_shared<std::string>("127.0.0.1:50051");
  auto json = std::make_shared<bool>(false);
  {
    CLI::App* tokens = app.add_subcommand("tokens", "API tokens (admin): create, list, revoke");
    tokens->require_subcommand(1);
    tokens->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    tokens->add_flag("--json", *json, "Print JSON");
    auto name = std::make_shared<std::string>();
    auto role = std::make_shared<std::string>();
    CLI::App* create = tokens->add_subcommand("create", "A new token; its secret is shown once");
    create->add_option("--name", *name, "Unique name (the owner of the runs it submits)")
        ->required();
    create->add_option("--role", *role, "viewer, submitter, worker or admin")->required();
    create->callback([=, &exit_code] {
      absl::StatusOr<v1::Role> r = ParseRole(*role);
      if (!r.ok()) {
        std::cerr << "error: " << r.status().message() << "\n";
        return void(exit_code = 2);
      }
      v1::CreateTokenRequest req;
      req.set_name(*name);
      req.set_role(*r);
      v1::CreateTokenResponse resp;
      grpc::Status s =
          Call<v1::AdminService>(*address, &v1::AdminService::Stub::CreateToken, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      std::cout << resp.secret() << "\n";
      std::cerr << "token '" << *name << "' (" << *role
                << "): the secret above is shown only now; keep it in a file (--token-file)\n";
    });
    CLI::App* list = tokens->add_subcommand("list", "Tokens: name, role, created, last used");
    list->callback([=, &exit_code] {
      v1::ListTokensResponse resp;
      grpc::Status s = Call<v1::AdminService>(*address, &v1::AdminService::Stub::ListTokens,
                                              v1::ListTokensRequest(), &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      for (const v1::Token& t : resp.tokens())
        std::cout << absl::StrFormat("%-24s %-10s created %s  last used %s\n", t.name(),
                                     RoleName(t.role()), When(t.created_unix()),
                                     When(t.last_used_unix()));
    });
    CLI::App* revoke = tokens->add_subcommand("revoke", "Revoke a token (from its next call on)");
    revoke->add_option("name", *name, "Token name")->required();
    revoke->callback([=, &exit_code] {
      v1::RevokeTokenRequest req;
      req.set_name(*name);
      v1::RevokeTokenResponse resp;
      grpc::Status s =
          Call<v1::AdminService>(*address, &v1::AdminService::Stub::RevokeToken, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << "revoked " << *name << "\n";
    });
  }
  {
    CLI::App* whoami = app.add_subcommand("whoami", "The token this client uses: name and role");
    whoami->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    whoami->callback([=, &exit_code] {
      v1::WhoAmIResponse resp;
      grpc::Status s = Call<v1::AdminService>(*address, &v1::AdminService::Stub::WhoAmI,
                                              v1::WhoAmIRequest(), &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << resp.token().name() << " (" << RoleName(resp.token().role()) << ")\n";
    });
  }
  {
    CLI::App* engines = app.add_subcommand("engines", "Uploaded engines: list, delete");
    engines->require_subcommand(1);
    engines->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    engines->add_flag("--json", *json, "Print JSON");
    CLI::App* list = engines->add_subcommand("list", "Uploaded engines, oldest first");
    list->callback([=, &exit_code] {
      v1::ListEnginesResponse resp;
      grpc::Status s = Call<v1::RunService>(*address, &v1::RunService::Stub::ListEngines,
                                            v1::ListEnginesRequest(), &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      for (const v1::Engine& e : resp.engines())
        std::cout << absl::StrFormat("%s  %-20s %10d bytes  by %s\n", e.sha256(), e.name(),
                                     e.size_bytes(), e.owner().empty() ? "-" : e.owner());
    });
    auto sha = std::make_shared<std::string>();
    CLI::App* del = engines->add_subcommand("delete", "Delete an upload (its uploader or admin)");
    del->add_option("sha256", *sha, "The engine's sha256")->required();
    del->callback([=, &exit_code] {
      v1::DeleteEngineRequest req;
      req.set_sha256(*sha);
      v1::DeleteEngineResponse resp;
      grpc::Status s =
          Call<v1::RunService>(*address, &v1::RunService::Stub::DeleteEngine, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << "deleted " << *sha << "\n";
    });
  }
  {
    auto all = std::make_shared<bool>(false);
    CLI::App* workers = app.add_subcommand(
        "workers", "Workers: threads, engine isolation, engine directories, leases, last seen");
    workers->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    workers->add_flag("--json", *json, "Print JSON");
    workers->add_flag("--all", *all, "Also workers no longer connected");
    auto drain_name = std::make_shared<std::string>();
    auto undo = std::make_shared<bool>(false);
    CLI::App* drain = workers->add_subcommand(
        "drain", "Lease no new jobs to a worker (admin); the jobs it holds finish");
    drain->add_option("name", *drain_name, "The worker's --name")->required();
    drain->add_flag("--undo", *undo, "Lease to it again");
    drain->callback([=, &exit_code] {
      v1::DrainWorkersRequest req;
      req.set_name(*drain_name);
      req.set_undo(*undo);
      v1::ListWorkersResponse resp;
      grpc::Status s =
          Call<v1::RunService>(*address, &v1::RunService::Stub::DrainWorkers, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << (*undo ? "leasing to " : "draining ") << *drain_name << "\n";
    });
    workers->callback([=, &exit_code] {
      if (drain->parsed()) return;
      v1::ListWorkersRequest req;
      req.set_include_disconnected(*all);
      v1::ListWorkersResponse resp;
      grpc::Status s =
          Call<v1::RunService>(*address, &v1::RunService::Stub::ListWorkers, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      std::cout << absl::StrFormat("%-20s %-12s %7s %6s %-10s %5s %9s  %s\n", "NAME", "TOKEN",
                                   "THREADS", "LEASES", "ISOLATION", "MEM", "SEEN",
                                   "ENGINE DIRS, RUNS");
      for (const v1::WorkerStatus& w : resp.workers()) {
        std::string dirs;
        for (const std::string& d : w.engine_dirs()) dirs += (dirs.empty() ? "" : ",") + d;
        const uint64_t mem = w.engine_limits().memory_mb();
        std::string runs;
        for (uint64_t r : w.leased_runs())
          if (runs.find(absl::StrFormat(" %d,", r)) == std::string::npos)
            runs += absl::StrFormat(" %d,", r);
        if (!runs.empty()) runs = "  runs" + runs.substr(0, runs.size() - 1);
        std::cout << absl::StrFormat(
            "%-20s %-12s %7d %6d %-10s %5s %8.0fs  %s%s%s%s\n", w.name(), w.token(), w.threads(),
            w.leases(), w.isolation().empty() ? "?" : w.isolation(),
            mem ? absl::StrFormat("%dM", mem) : "-", w.last_seen_seconds_ago(),
            dirs.empty() ? "(any path)" : dirs, runs, w.draining() ? "  [draining]" : "",
            w.connected() ? "" : "  [disconnected]");
      }
    });
  }
}

}  // namespace arbiter::cli

// `arbiter tokens` (admin: create, list, revoke API tokens), `arbiter whoami`, `arbiter engines`
// (list and delete uploaded engines) and `arbiter workers` (who plays, and how isolated).
#include <iostream>
#include <map>
#include <memory>

#include "absl/strings/str_format.h"
#include "base/cpu.h"
#include "cli/cluster_client.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "net/metrics.h"
#include "proto/arbiter/v1/admin_service.grpc.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/worker.pb.h"
#include "proto/roles.h"
#include "proto/wire_enums.h"

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

void AddResidualsCommand(CLI::App& runs, std::shared_ptr<std::string> address,
                         std::shared_ptr<bool> json, int& exit_code) {
  CLI::App* cmd = runs.add_subcommand(
      "residuals",
      "A match run's residual check: the workers whose games it set aside, or (admin) accept "
      "a worker's games back into the count or void them for good");
  auto id = std::make_shared<uint64_t>(0);
  auto accept = std::make_shared<std::string>();
  auto voided = std::make_shared<std::string>();
  cmd->add_option("id", *id, "Run id")->required();
  CLI::Option* accept_opt =
      cmd->add_option("--accept", *accept, "Count this worker's set-aside games (worker id)");
  cmd->add_option("--void", *voided, "Void this worker's set-aside games for good (worker id)")
      ->excludes(accept_opt);
  cmd->callback([=, &exit_code] {
    v1::Run run;
    grpc::Status s;
    if (accept->empty() && voided->empty()) {
      v1::GetRunRequest req;
      req.set_run_id(*id);
      s = Call<v1::RunService>(*address, &v1::RunService::Stub::GetRun, req, &run);
    } else {
      v1::DecideResidualRequest req;
      req.set_run_id(*id);
      req.set_worker_id(accept->empty() ? *voided : *accept);
      req.set_decision(accept->empty() ? v1::RESIDUAL_STATE_VOIDED : v1::RESIDUAL_STATE_ACCEPTED);
      v1::DecideResidualResponse resp;
      s = Call<v1::AdminService>(*address, &v1::AdminService::Stub::DecideResidual, req, &resp);
      run = resp.run();
    }
    if (!s.ok()) return void(exit_code = Failed(s));
    if (*json) return void(std::cout << ToJson(run.match()) << "\n");
    if (run.match().residuals().empty()) std::cout << "no worker's games set aside\n";
    for (const v1::WorkerResidual& v : run.match().residuals()) {
      std::string pentanomial;
      for (uint64_t c : v.pentanomial()) pentanomial += absl::StrFormat(" %d", c);
      std::cout << absl::StrFormat(
          "%s  %s  token %s  %s  residual %.2f (bound %.2f)  pentanomial [%s ]  since %s\n",
          v.worker_id(), v.worker_name(), v.token().empty() ? "-" : v.token(),
          v.state() == v1::RESIDUAL_STATE_SET_ASIDE  ? "set aside"
          : v.state() == v1::RESIDUAL_STATE_ACCEPTED ? "accepted"
                                                     : "voided",
          v.residual(), v.threshold(), pentanomial, When(v.flagged_unix()));
    }
  });
}

void AddAccessCommands(CLI::App& app, int& exit_code) {
  auto address = std::make_shared<std::string>("127.0.0.1:50051");
  auto json = std::make_shared<bool>(false);
  {
    CLI::App* tokens =
        app.add_subcommand("tokens", "API tokens (admin): create, list, revoke, lift a quarantine");
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
      for (const v1::Token& t : resp.tokens()) {
        std::cout << absl::StrFormat("%-24s %-10s created %s  last used %s\n", t.name(),
                                     RoleName(t.role()), When(t.created_unix()),
                                     When(t.last_used_unix()));
        if (!t.quarantine().empty())
          std::cout << "    [quarantined " << When(t.quarantined_unix()) << "] " << t.quarantine()
                    << "\n";
      }
    });
    CLI::App* revoke = tokens->add_subcommand(
        "revoke", "Revoke a token: its next call fails, its open streams and long polls end");
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
    CLI::App* lift = tokens->add_subcommand(
        "lift",
        "Lift a worker token's quarantine (one of its workers lost a vote on a perft count): its "
        "workers take leases again; the results it voided stay voided");
    lift->add_option("name", *name, "Token name")->required();
    lift->callback([=, &exit_code] {
      v1::LiftQuarantineRequest req;
      req.set_name(*name);
      v1::LiftQuarantineResponse resp;
      grpc::Status s =
          Call<v1::AdminService>(*address, &v1::AdminService::Stub::LiftQuarantine, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << "lifted the quarantine of " << *name << "\n";
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
        "workers",
        "Workers: host, CPU level, threads, engine isolation, engine directories, labels, "
        "leases, last seen");
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
      std::cout << absl::StrFormat("%-20s %-12s %-16s %3s %7s %6s %-10s %5s %9s  %s\n", "NAME",
                                   "TOKEN", "HOST", "CPU", "THREADS", "LEASES", "ISOLATION", "MEM",
                                   "SEEN", "ENGINE DIRS, LABELS, RUNS");
      for (const v1::WorkerStatus& w : resp.workers()) {
        std::string dirs;
        for (const std::string& d : w.worker().engine_dirs()) dirs += (dirs.empty() ? "" : ",") + d;
        const uint64_t mem = w.worker().engine_limits().memory_mb();
        std::string runs;
        for (uint64_t r : w.leased_runs())
          if (runs.find(absl::StrFormat(" %d,", r)) == std::string::npos)
            runs += absl::StrFormat(" %d,", r);
        if (!runs.empty()) runs = "  runs" + runs.substr(0, runs.size() - 1);
        const std::map<std::string, std::string> sorted(w.worker().labels().begin(),
                                                        w.worker().labels().end());
        std::string labels;
        for (const auto& [k, v] : sorted) labels += absl::StrFormat(" %s=%s", k, v);
        if (!labels.empty()) labels = "  labels" + labels;
        if (w.worker().perft_core_path() != v1::PERFT_PATH_UNSPECIFIED)
          labels += "  perft " + PerftPathString(w.worker().perft_core_path());
        labels += w.worker().build_toolchain().empty() ? "  builds: no" : "  builds: yes";
        std::cout << absl::StrFormat(
            "%-20s %-12s %-16s %3s %7d %6d %-10s %5s %8.0fs  %s%s%s%s%s\n", w.worker().name(),
            w.token(), w.worker().hostname().empty() ? "-" : w.worker().hostname(),
            CpuLevelName(int(w.worker().cpu_level())), w.worker().threads(), w.leases(),
            w.worker().engine_isolation() == v1::ISOLATION_UNSPECIFIED
                ? "?"
                : IsolationString(w.worker().engine_isolation()),
            mem ? absl::StrFormat("%dM", mem) : "-", w.last_seen_seconds_ago(),
            dirs.empty() ? "(any path)" : dirs, labels, runs, w.draining() ? "  [draining]" : "",
            w.connected() ? "" : "  [disconnected]");
        for (const std::string& flag : w.flags()) std::cout << "    [flagged] " << flag << "\n";
        if (!w.quarantine().empty())
          std::cout << "    [quarantined] token '" << w.token() << "': " << w.quarantine()
                    << " (takes no leases; `arbiter tokens lift " << w.token() << "`)\n";
      }
    });
  }
  {
    auto address = std::make_shared<std::string>("127.0.0.1:50051");
    auto json = std::make_shared<bool>(false);
    auto request = std::make_shared<v1::GetRatingsRequest>();
    auto engines = std::make_shared<std::vector<std::string>>();
    auto runs = std::make_shared<std::vector<uint64_t>>();
    auto pgn = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd = app.add_subcommand(
        "ratings",
        "One rating list over the games of many runs: engines by name across match and "
        "tournament runs (or PGN files); one name run with different binaries or options is "
        "rated apart as NAME#1, NAME#2 with a warning");
    cmd->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    cmd->add_option("--engines", *engines,
                    "Engines to rate (names as in the runs); their games in any run count");
    cmd->add_option("--runs", *runs, "Only these runs (all their engines unless --engines)");
    cmd->add_option("--pgn", *pgn,
                    "Rate the results of these PGN files here instead of a coordinator's runs "
                    "(all their engines unless --engines)")
        ->excludes("--runs");
    cmd->add_option_function<std::string>(
        "--anchor", [request](const std::string& a) { request->set_anchor(a); },
        "Engine at Elo 0 (default: the first of --engines, else the oldest run's first)");
    cmd->add_flag("--json", *json, "Print JSON");
    cmd->callback([=, &exit_code] {
      for (const std::string& e : *engines) request->add_engines(e);
      for (uint64_t r : *runs) request->add_run_ids(r);
      v1::GetRatingsResponse resp;
      if (!pgn->empty()) {
        absl::StatusOr<v1::GetRatingsResponse> rated = RatePgnFiles(*pgn, *request);
        if (!rated.ok()) {
          std::cerr << "error: " << rated.status().message() << "\n";
          return void(exit_code =
                          rated.status().code() == absl::StatusCode::kFailedPrecondition ? 1 : 2);
        }
        resp = *std::move(rated);
      } else {
        grpc::Status s =
            Call<v1::RunService>(*address, &v1::RunService::Stub::GetRatings, *request, &resp);
        if (!s.ok()) return void(exit_code = Failed(s));
      }
      // On stderr too with --json: a script reading the table should still be told.
      for (const std::string& w : resp.warnings()) std::cerr << "warning: " << w << "\n";
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      std::cout << absl::StrFormat("%d games in %d %s, anchor %s (Elo 0)\n", resp.games(),
                                   resp.run_ids_size(), pgn->empty() ? "runs" : "PGN files",
                                   resp.anchor());
      std::cout << absl::StrFormat("%4s %-24s %8s %8s %7s %8s %6s\n", "RANK", "ENGINE", "ELO",
                                   "+/-95%", "GAMES", "POINTS", "SCORE");
      int rank = 0;
      for (const v1::TournamentStanding& st : resp.standings())
        std::cout << absl::StrFormat("%4d %-24s %8.1f %8.1f %7d %8.1f %5.1f%%\n", ++rank, st.name(),
                                     st.elo(), st.elo_error95(), st.games(), st.points(),
                                     100 * st.score());
    });
  }
}

}  // namespace arbiter::cli

// `arbiter coordinator`, `arbiter worker`, `arbiter local` and `arbiter runs`: the cluster's
// processes and the client commands that look at runs.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/cpu.h"
#include "base/host.h"
#include "base/listen_address.h"
#include "cli/cluster_client.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "coordinator/server.h"
#include "engine/perft_hash.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "net/metrics.h"
#include "net/server.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "spdlog/spdlog.h"
#include "web/dashboard.h"
#include "worker/worker.h"

namespace arbiter::cli {
namespace {

struct CoordinatorFlags {
  std::string listen = ":50051";
  std::string metrics;
  std::string http;    // the dashboard and JSON API; empty = none
  std::string health;  // plaintext gRPC health for probes; empty = none
  uint32_t max_live_pages = 256;
  uint32_t max_live_pages_per_token = 64;
  std::string data;
  double lease_seconds = 15;
  double lease_progress_seconds = 300;
  double heartbeat_seconds = 3;
  uint64_t max_upload_mb = 256;
  bool no_auth = false;
  std::string admin_token_file;
  std::string tls_cert, tls_key, tls_client_ca;
  uint32_t max_active_runs = 20;
  uint32_t max_submissions_per_minute = 60;
  uint64_t upload_quota_mb = 4096;
  uint64_t max_uploading_mb = 1024;
  uint64_t max_queued_jobs = 1'000'000;
};

struct WorkerFlags {
  std::string coordinator = "127.0.0.1:50051";
  int threads = 1;
  int hash_mb = 0;
  std::string metrics;
  std::string listen = "127.0.0.1:0";
  std::string cache;
  std::string name;
  double grace_seconds = 30;
  double wait_seconds = 20;
  double bench_timeout_seconds = 120;
  bool no_build = false;
  uint64_t engine_cache_mb = 4096;
  uint64_t build_cache_mb = 4096;
  double build_timeout_seconds = 900;
  uint64_t build_disk_mb = 4096;
  uint64_t measured_nps = 0;
  SandboxFlags sandbox{.mode = "auto"};
  std::vector<std::string> engine_dirs = {"/usr/games"};
  std::vector<std::string> labels;  // KEY=VALUE
  std::string cpu_level;            // empty: the CPU's own
};

void AddCoordinatorOptions(CLI::App* cmd, CoordinatorFlags& f) {
  cmd->add_option("--metrics", f.metrics, "Serve Prometheus metrics on [HOST]:PORT");
  cmd->add_option("--http", f.http,
                  "Serve the dashboard and the JSON API on [HOST]:PORT (port 0 = any free port)");
  cmd->add_option("--max-live-pages", f.max_live_pages,
                  "Dashboard pages following runs live at once (each holds a connection)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--max-live-pages-per-token", f.max_live_pages_per_token,
                  "Of those, the pages one token may hold (one address with --no-auth)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--lease-s", f.lease_seconds,
                  "Seconds a job's lease lasts (heartbeats extend it)")
      ->check(CLI::Range(0.5, 3600.0));
  cmd->add_option("--lease-progress-s", f.lease_progress_seconds,
                  "Seconds a lease is kept while its heartbeats report no progress (perft: nodes "
                  "counted; match: moves played; movegen check: positions checked); then it is "
                  "taken back and its job queued again (0: never)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--heartbeat-s", f.heartbeat_seconds,
                  "Seconds between heartbeats asked of workers")
      ->check(CLI::Range(0.1, 600.0));
  cmd->add_option("--max-upload-mb", f.max_upload_mb, "Largest engine upload in MiB")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--upload-quota-mb", f.upload_quota_mb,
                  "Uploads kept and in progress per token, MiB")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--max-uploading-mb", f.max_uploading_mb,
                  "Uploads in progress at once from everyone, MiB (their temporary files)")
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--max-active-runs", f.max_active_runs, "Unfinished runs per token")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-submissions-per-minute", f.max_submissions_per_minute,
                  "Submissions per token and minute")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--max-queued-jobs", f.max_queued_jobs,
                  "Jobs not yet done in one token's unfinished runs (admins: unbounded); about "
                  "250 bytes of coordinator memory each")
      ->check(CLI::Range(uint64_t(1), uint64_t(100'000'000)));
  cmd->add_flag("--no-auth", f.no_auth,
                "No authentication (accepted only when listening on a loopback address)");
  cmd->add_option("--admin-token-file", f.admin_token_file,
                  "Secret of the 'admin' token (default: made once into DATA/admin.token)");
  cmd->add_option("--tls-cert", f.tls_cert, "Server certificate (PEM) for TLS on the gRPC port");
  cmd->add_option("--tls-key", f.tls_key, "Server key (PEM)");
  cmd->add_option("--tls-client-ca", f.tls_client_ca,
                  "CA (PEM) that must have signed every client's certificate (mutual TLS)");
}

coordinator::ServerOptions ToServerOptions(const CoordinatorFlags& f) {
  coordinator::ServerOptions o;
  o.listen = f.listen;
  o.metrics = f.metrics;
  o.coordinator.data_dir = f.data;
  o.coordinator.lease_seconds = f.lease_seconds;
  o.coordinator.lease_progress_seconds = f.lease_progress_seconds;
  o.coordinator.heartbeat_seconds = std::min(f.heartbeat_seconds, f.lease_seconds / 3);
  o.coordinator.max_upload_bytes = f.max_upload_mb << 20;
  o.coordinator.upload_quota_bytes = f.upload_quota_mb << 20;
  o.coordinator.max_uploading_bytes = f.max_uploading_mb << 20;
  o.coordinator.max_active_runs = f.max_active_runs;
  o.coordinator.max_queued_jobs = f.max_queued_jobs;
  o.coordinator.max_submissions_per_minute = f.max_submissions_per_minute;
  o.coordinator.host = HostName();
  o.no_auth = f.no_auth;
  o.admin_token_file = f.admin_token_file;
  o.tls_cert = f.tls_cert;
  o.tls_key = f.tls_key;
  o.tls_client_ca = f.tls_client_ca;
  return o;
}

// The dashboard of `server` when --http was given (null otherwise, or on error: `ok` false).
std::unique_ptr<web::Dashboard> StartDashboard(const CoordinatorFlags& f,
                                               coordinator::Server& server, bool& ok) {
  ok = true;
  if (f.http.empty()) return nullptr;
  web::DashboardOptions o;
  o.listen = f.http;
  o.no_auth = f.no_auth;
  o.max_live_pages = f.max_live_pages;
  o.max_live_pages_per_token = f.max_live_pages_per_token;
  if (f.no_auth && !net::IsLoopbackAddress(f.http)) {
    std::cerr << "error: --no-auth serves the dashboard only on a loopback address, not '" << f.http
              << "'\n";
    ok = false;
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<web::Dashboard>> d =
      web::Dashboard::Start(o, &server.coordinator());
  if (!d.ok()) {
    std::cerr << "error: " << d.status().message() << "\n";
    ok = false;
    return nullptr;
  }
  return std::move(*d);
}

// The gRPC health service (and reflection) alone, in plaintext: the worker's only server, and
// the coordinator's port for the kubelet's probes (its main port may speak TLS).
std::unique_ptr<grpc::Server> StartHealthServer(const std::string& listen, int& port) {
  net::EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(net::NormalizeAddress(listen), grpc::InsecureServerCredentials(), &port);
  return builder.BuildAndStart();
}

int RunCoordinator(const CoordinatorFlags& f) {
  BlockTerminationSignals();
  absl::StatusOr<std::unique_ptr<coordinator::Server>> server =
      coordinator::Server::Start(ToServerOptions(f));
  if (!server.ok()) {
    std::cerr << "error: " << server.status().message() << "\n";
    return 2;
  }
  bool ok = true;
  std::unique_ptr<web::Dashboard> dashboard = StartDashboard(f, **server, ok);
  if (!ok) {
    (*server)->Shutdown();
    return 2;
  }
  // Started last: it answers once the store is open and every run resumed (a startup probe).
  int health_port = 0;
  std::unique_ptr<grpc::Server> health;
  if (!f.health.empty()) {
    health = StartHealthServer(f.health, health_port);
    if (!health || health_port == 0) {
      std::cerr << "error: cannot serve gRPC health on '" << f.health << "'\n";
      if (dashboard) dashboard->Stop();
      (*server)->Shutdown();
      return 2;
    }
  }
  std::cout << "coordinator listening on port " << (*server)->port();
  if (!f.metrics.empty()) std::cout << ", metrics on port " << (*server)->metrics_port();
  if (dashboard) std::cout << ", dashboard on port " << dashboard->port();
  if (health) std::cout << ", health on port " << health_port;
  std::cout << std::endl;
  int sig = WaitForTerminationSignal();
  spdlog::info("signal {}: shutting down", sig);
  if (health) health->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  if (dashboard) dashboard->Stop();
  (*server)->Shutdown();
  return 0;
}

int RunWorker(const WorkerFlags& f) {
  BlockTerminationSignals();
  // A worker whose token or TLS files cannot be read must not run without them (in a pod: a
  // crash loop that names the Secret, not a worker dialling in plaintext).
  if (absl::StatusOr<net::ClientCredentials> creds = net::CredentialsFromEnvironment(f.coordinator);
      !creds.ok()) {
    std::cerr << "error: " << creds.status().message() << "\n";
    return 2;
  }
  std::unique_ptr<net::MetricsEndpoint> metrics;
  if (!f.metrics.empty()) {
    absl::StatusOr<std::unique_ptr<net::MetricsEndpoint>> m =
        net::MetricsEndpoint::Start(f.metrics);
    if (!m.ok()) {
      std::cerr << "error: " << m.status().message() << "\n";
      return 2;
    }
    metrics = std::move(*m);
  }
  int port = 0;
  std::unique_ptr<grpc::Server> health = StartHealthServer(f.listen, port);
  if (!health || port == 0) {
    std::cerr << "error: cannot listen on '" << f.listen << "'\n";
    return 2;
  }
  absl::StatusOr<match::SandboxOptions> sandbox = ResolveSandbox(f.sandbox);
  if (!sandbox.ok()) {
    std::cerr << "error: " << sandbox.status().message() << "\n";
    return 2;
  }
  spdlog::info("engine isolation: {}", match::IsolationName(sandbox->isolation));
  std::map<std::string, std::string> labels;
  for (const std::string& item : f.labels) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "error: --label '" << item << "' is not KEY=VALUE\n";
      return 2;
    }
    labels[item.substr(0, eq)] = item.substr(eq + 1);
  }
  int cpu_level = DetectedCpuLevel();
  if (!f.cpu_level.empty()) {
    int declared = 0;
    if (!ParseCpuLevel(f.cpu_level, declared) || declared > cpu_level) {
      std::cerr << "error: --cpu-level '" << f.cpu_level << "' must be a level from v1 to "
                << CpuLevelName(cpu_level) << ", this CPU's\n";
      return 2;
    }
    cpu_level = declared;
  }
  worker::Worker w({.coordinator = f.coordinator,
                    .threads = f.threads,
                    .hash_mb = f.hash_mb,
                    .name = f.name,
                    .cache_dir = f.cache,
                    .engine_cache_mb = f.engine_cache_mb,
                    .sandbox = *sandbox,
                    .engine_dirs = f.engine_dirs,
                    .labels = std::move(labels),
                    .cpu_level = cpu_level,
                    .build_sources = !f.no_build,
                    .build_cache_mb = f.build_cache_mb,
                    .build_timeout_seconds = f.build_timeout_seconds,
                    .build_disk_mb = f.build_disk_mb,
                    .bench_timeout_seconds = f.bench_timeout_seconds,
                    .measured_nps = f.measured_nps,
                    .wait_seconds = f.wait_seconds,
                    .grace_seconds = f.grace_seconds},
                   metrics ? &metrics->registry() : nullptr);
  std::cout << "worker health on port " << port;
  if (metrics) std::cout << ", metrics on port " << metrics->port();
  std::cout << std::endl;
  absl::Status result;
  std::thread runner([&] { result = w.Run(); });
  std::thread waiter([&] {
    int sig = WaitForTerminationSignal();
    spdlog::info("signal {}: draining (grace {} s)", sig, f.grace_seconds);
    w.Drain();
  });
  runner.join();
  if (!result.ok()) {
    std::cerr << "error: " << result.message() << "\n";
    kill(getpid(), SIGTERM);  // wakes the waiter
    waiter.join();
    return 2;
  }
  waiter.join();  // the runner only ends once the waiter has called Drain()
  health->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return 0;
}

// arbiter local runs other people's engines only in the box, and serves beyond this machine only
// over TLS with that box: an error message, or "" when the flags are safe.
std::string LocalExposure(const CoordinatorFlags& f, match::Isolation isolation) {
  // (An address that does not parse is left to the server, which names the cause.)
  if (!f.http.empty() && ParseListenAddress(f.http).ok() && !net::IsLoopbackAddress(f.http))
    return Cat("arbiter local serves its dashboard on loopback only (--http ", f.http,
               "): its HTTP has no TLS; run `arbiter coordinator` behind a TLS proxy for a team");
  if (!ParseListenAddress(f.listen).ok() || net::IsLoopbackAddress(f.listen)) return "";
  if (f.tls_cert.empty() || f.tls_key.empty())
    return Cat("arbiter local listens beyond loopback (--listen ", f.listen,
               ") only with TLS: give --tls-cert and --tls-key");
  if (!match::Confines(isolation))
    return Cat("arbiter local listens beyond loopback (--listen ", f.listen,
               ") only with engines boxed, and this machine's box is '",
               match::IsolationName(isolation),
               "' (no namespaces or Landlock): the submitters it serves would run programs as you");
  return "";
}

int RunLocal(const CoordinatorFlags& cf, const SandboxFlags& sandbox_flags, int workers,
             int threads, int hash_mb) {
  BlockTerminationSignals();
  CoordinatorFlags f = cf;
  // On loopback only this user (who alone can read the token) submits: engines run as they do
  // for `arbiter match`. Serving others, the box is the default and required below.
  SandboxFlags sandbox = sandbox_flags;
  if (sandbox.mode.empty())
    sandbox.mode =
        ParseListenAddress(f.listen).ok() && !net::IsLoopbackAddress(f.listen) ? "auto" : "off";
  absl::StatusOr<match::SandboxOptions> box = ResolveSandbox(sandbox);
  if (!box.ok()) {
    std::cerr << "error: " << box.status().message() << "\n";
    return 2;
  }
  if (std::string unsafe = LocalExposure(f, box->isolation); !unsafe.empty()) {
    std::cerr << "error: " << unsafe << "\n";
    return 2;
  }
  // With TLS, the in-process workers dial it too: they trust $ARBITER_TLS_CA, or the server's
  // own certificate when none is set (a self-signed one).
  if (!f.tls_cert.empty()) setenv("ARBITER_TLS_CA", f.tls_cert.c_str(), /*overwrite=*/0);
  std::string temp;
  if (f.data.empty()) {
    char tmpl[] = "/tmp/arbiter-local-XXXXXX";
    if (!mkdtemp(tmpl)) {
      std::cerr << "error: cannot create a temporary data directory\n";
      return 2;
    }
    temp = f.data = tmpl;
  }
  // The in-process tokens: an admin one for the client commands of this user (written where they
  // look for it), one worker token per worker (so that --verify sees different workers).
  coordinator::ServerOptions options = ToServerOptions(f);
  absl::StatusOr<std::string> admin_secret = coordinator::NewTokenSecret();
  if (!admin_secret.ok()) {
    std::cerr << "error: " << admin_secret.status().message() << "\n";
    return 2;
  }
  std::vector<std::string> worker_secrets;
  if (!f.no_auth) {
    options.tokens.emplace_back("local-admin", v1::ROLE_ADMIN, *admin_secret);
    for (int i = 0; i < workers; ++i) {
      absl::StatusOr<std::string> secret = coordinator::NewTokenSecret();
      if (!secret.ok()) {
        std::cerr << "error: " << secret.status().message() << "\n";
        return 2;
      }
      worker_secrets.push_back(*secret);
      options.tokens.emplace_back(absl::StrFormat("local-worker-%d", i + 1), v1::ROLE_WORKER,
                                  *secret);
    }
  }
  absl::StatusOr<std::unique_ptr<coordinator::Server>> server = coordinator::Server::Start(options);
  if (!server.ok()) {
    std::cerr << "error: " << server.status().message() << "\n";
    return 2;
  }
  std::string token_file;
  if (!f.no_auth) {
    token_file = net::LocalTokenPath((*server)->port());
    if (absl::Status written = net::WriteLocalToken((*server)->port(), *admin_secret);
        !written.ok()) {
      std::cerr << "error: the token for this machine's clients: " << written.message() << "\n";
      (*server)->Shutdown();
      return 2;
    }
  }
  bool dashboard_ok = true;
  std::unique_ptr<web::Dashboard> dashboard = StartDashboard(f, **server, dashboard_ok);
  if (!dashboard_ok) {
    (*server)->Shutdown();
    return 2;
  }
  const std::string address = absl::StrFormat("127.0.0.1:%d", (*server)->port());
  // The workers share one perft hash of their combined size, as the threads of one process do
  // (a position one of them counted is found by the others).
  auto hash = std::make_shared<PerftHash>(hash_mb * workers, threads * workers, workers);
  if (!hash->ok()) {
    std::cerr << "error: cannot allocate the perft hash of " << hash_mb * workers << " MB\n";
    return 2;
  }
  std::vector<std::unique_ptr<worker::Worker>> pool;
  std::vector<std::thread> threads_of;
  for (int i = 0; i < workers; ++i) {
    worker::WorkerOptions wo;
    wo.coordinator = address;
    wo.threads = threads;
    wo.hash_mb = hash_mb;
    wo.shared_hash = hash;
    wo.hash_group = absl::StrFormat("local-%d", getpid());
    wo.name = absl::StrFormat("local-%d", i + 1);
    wo.sandbox = *box;
    if (!worker_secrets.empty()) wo.token = worker_secrets[size_t(i)];
    pool.push_back(std::make_unique<worker::Worker>(wo, nullptr));
    threads_of.emplace_back([w = pool.back().get()] { (void)w->Run(); });
  }
  std::cout << "arbiter local: coordinator on " << address << " with " << workers << " worker"
            << (workers == 1 ? "" : "s") << " (data in " << f.data << ")";
  if (!token_file.empty()) std::cout << ", token for its clients in " << token_file;
  if (!f.metrics.empty()) std::cout << ", metrics on port " << (*server)->metrics_port();
  std::cout << std::endl;
  if (dashboard) {
    // The browser of this user signs in once with the in-process admin token.
    std::cout << "dashboard: http://127.0.0.1:" << dashboard->port()
              << (f.no_auth ? std::string("/") : dashboard->OneTimeLink(*admin_secret))
              << (f.no_auth ? "" : "  (a one-time sign-in link)") << std::endl;
  }
  WaitForTerminationSignal();
  if (dashboard) dashboard->Stop();
  for (auto& w : pool) w->Drain();
  for (auto& t : threads_of) t.join();
  (*server)->Shutdown();
  server->reset();
  if (!token_file.empty()) {
    std::error_code ec;
    std::filesystem::remove(token_file, ec);
  }
  if (!temp.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(temp, ec);
  }
  return 0;
}

std::unique_ptr<v1::RunService::Stub> RunStub(const std::string& address) {
  return v1::RunService::NewStub(net::Dial(address));
}

std::chrono::system_clock::time_point In(int seconds) {
  return std::chrono::system_clock::now() + std::chrono::seconds(seconds);
}

// Calls a RunService method on `address` with a deadline `seconds` from now.
template <typename Request, typename Response>
grpc::Status CallRunService(const std::string& address,
                            grpc::Status (v1::RunService::Stub::*method)(grpc::ClientContext*,
                                                                         const Request&, Response*),
                            const Request& request, Response* response, int seconds = 30) {
  grpc::ClientContext ctx;
  ctx.set_deadline(In(seconds));
  return (RunStub(address).get()->*method)(&ctx, request, response);
}

}  // namespace

void AddClusterCommands(CLI::App& app, int& exit_code) {
  {
    auto f = std::make_shared<CoordinatorFlags>();
    CLI::App* cmd = app.add_subcommand("coordinator", "Run the coordinator (gRPC, SQLite state)");
    cmd->add_option("--listen", f->listen, "gRPC address [HOST]:PORT (port 0 = any free port)");
    cmd->add_option("--data", f->data, "Directory for the SQLite store and engines")->required();
    cmd->add_option("--health", f->health,
                    "Serve the gRPC health service in plaintext on [HOST]:PORT, once the store "
                    "is open (for probes: the main port may speak TLS)");
    AddCoordinatorOptions(cmd, *f);
    cmd->callback([f, &exit_code] { exit_code = RunCoordinator(*f); });
  }
  {
    auto f = std::make_shared<WorkerFlags>();
    CLI::App* cmd = app.add_subcommand("worker", "Run a stateless worker");
    cmd->add_option("--coordinator", f->coordinator, "Coordinator address HOST:PORT");
    cmd->add_option("--threads", f->threads,
                    "CPU threads this worker uses: perft threads, and game slots times the "
                    "engines' Threads")
        ->check(CLI::Range(1, 256));
    cmd->add_option("--hash", f->hash_mb,
                    "Perft hash in MB, kept across jobs (0 = the size each run asks for)")
        ->check(CLI::Range(0, 1 << 20));
    cmd->add_option("--metrics", f->metrics, "Serve Prometheus metrics on [HOST]:PORT");
    cmd->add_option("--listen", f->listen, "Health/reflection gRPC address [HOST]:PORT");
    cmd->add_option("--cache", f->cache, "Engine artifact cache directory");
    cmd->add_option("--engine-cache-mb", f->engine_cache_mb,
                    "Fetched engines and sources kept in --cache, MiB (least recently used go; "
                    "builds have --build-cache-mb)")
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 24));
    cmd->add_option("--name", f->name, "Name shown by the coordinator (default: host name)");
    cmd->add_option("--grace-s", f->grace_seconds,
                    "On SIGTERM: seconds to finish the current job before releasing it")
        ->check(CLI::Range(0.0, 86400.0));
    cmd->add_option("--wait-s", f->wait_seconds, "Seconds of each long poll for work")
        ->check(CLI::Range(0.1, 60.0));
    AddSandboxOptions(cmd, f->sandbox);
    cmd->add_option("--engine-dir", f->engine_dirs,
                    "Directory that `path` engines may come from (repeatable; default /usr/games)");
    cmd->add_option("--label", f->labels,
                    "KEY=VALUE labels that runs may require (--require KEY=VALUE), e.g. "
                    "--label zone=a,gpu=none")
        ->delimiter(',');
    cmd->add_option("--cpu-level", f->cpu_level,
                    "x86-64 level to declare (v1..v4; default: this CPU's). Lower keeps runs "
                    "that require more away");
    cmd->add_option("--bench-timeout-s", f->bench_timeout_seconds,
                    "Seconds an engine's bench may take (declared signatures, scaled clocks)")
        ->check(CLI::Range(0.1, 3600.0));
    cmd->add_flag("--no-build", f->no_build,
                  "Build no engines from source (otherwise: when cc and make are installed)");
    cmd->add_option("--build-cache-mb", f->build_cache_mb,
                    "Engines built from source kept in --cache, MiB (least recently used go)")
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 24));
    cmd->add_option("--build-timeout-s", f->build_timeout_seconds,
                    "Seconds a build from source may take, wall clock")
        ->check(CLI::Range(1.0, 86400.0));
    cmd->add_option("--build-disk-mb", f->build_disk_mb,
                    "Disk a build's tree may use (sources, objects, temporaries), MiB")
        ->check(CLI::Range(uint64_t(1), uint64_t(1) << 24));
    // Tests: this worker's speed for scaled clocks instead of measuring it.
    cmd->add_option("--measured-nps", f->measured_nps)
        ->check(CLI::Range(uint64_t(1), uint64_t(1'000'000'000'000)))
        ->group("");
    cmd->callback([f, &exit_code] { exit_code = RunWorker(*f); });
  }
  {
    auto f = std::make_shared<CoordinatorFlags>();
    f->listen = "127.0.0.1:50051";
    auto workers = std::make_shared<int>(2);
    auto threads = std::make_shared<int>(1);
    auto hash_mb = std::make_shared<int>(0);
    // No --sandbox: off on loopback, auto beyond it (RunLocal).
    auto sandbox = std::make_shared<SandboxFlags>(SandboxFlags{.mode = ""});
    CLI::App* cmd =
        app.add_subcommand("local", "Embedded coordinator and N workers on loopback until Ctrl-C");
    cmd->add_option("--workers", *workers, "Number of workers")->check(CLI::Range(1, 256));
    cmd->add_option("--threads", *threads, "CPU threads each worker uses (as worker --threads)")
        ->check(CLI::Range(1, 256));
    cmd->add_option(
           "--hash", *hash_mb,
           "Perft hash per worker in MB, kept across jobs (0 = the size each run asks for)")
        ->check(CLI::Range(0, 1 << 20));
    cmd->add_option("--listen", f->listen, "gRPC address (port 0 = any free port)");
    cmd->add_option("--data", f->data,
                    "Data directory (default: a temporary one, removed at exit)");
    AddCoordinatorOptions(cmd, *f);
    AddSandboxOptions(cmd, *sandbox);
    cmd->callback([f, sandbox, workers, threads, hash_mb, &exit_code] {
      exit_code = RunLocal(*f, *sandbox, *workers, *threads, *hash_mb);
    });
  }
  {
    auto address = std::make_shared<std::string>("127.0.0.1:50051");
    auto json = std::make_shared<bool>(false);
    auto id = std::make_shared<uint64_t>(0);
    auto reason = std::make_shared<std::string>();
    CLI::App* runs =
        app.add_subcommand("runs", "List, show, watch, cancel runs or set their scheduling");
    runs->require_subcommand(1);
    runs->fallthrough();
    runs->add_option("--coordinator", *address, "Coordinator address HOST:PORT");
    runs->add_flag("--json", *json, "Print runs as JSON");
    // The answer of show and cancel: the run (or JSON), or the error.
    auto print_run = [=, &exit_code](const grpc::Status& s, const v1::Run& run) {
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(run) << "\n");
      PrintRun(run, std::cout);
    };
    CLI::App* list = runs->add_subcommand("list", "Runs, newest first");
    auto owner = std::make_shared<std::string>();
    auto page = std::make_shared<std::string>();
    auto page_size = std::make_shared<uint32_t>(0);
    list->add_option("--owner", *owner, "Only runs of this token name");
    list->add_option("--page-size", *page_size, "Runs per page (default 100, at most 1000)");
    list->add_option("--page-token", *page, "Next page (printed after a full page)");
    list->callback([=, &exit_code] {
      v1::ListRunsRequest req;
      req.set_owner(*owner);
      req.set_page_size(*page_size);
      req.set_page_token(*page);
      v1::ListRunsResponse resp;
      grpc::Status s = CallRunService(*address, &v1::RunService::Stub::ListRuns, req, &resp);
      if (!s.ok()) return void(exit_code = Failed(s));
      if (*json) return void(std::cout << ToJson(resp) << "\n");
      for (const v1::Run& r : resp.runs()) PrintRunLine(r, std::cout);
      if (!resp.next_page_token().empty())
        std::cout << "more: --page-token " << resp.next_page_token() << "\n";
    });
    CLI::App* show = runs->add_subcommand("show", "One run in detail");
    show->add_option("id", *id, "Run id")->required();
    show->callback([=] {
      v1::GetRunRequest req;
      req.set_run_id(*id);
      v1::Run run;
      print_run(CallRunService(*address, &v1::RunService::Stub::GetRun, req, &run), run);
    });
    CLI::App* watch = runs->add_subcommand("watch", "Follow a run until it finishes");
    watch->add_option("id", *id, "Run id")->required();
    watch->callback([=, &exit_code] { exit_code = WatchRemoteRun(*address, *id, *json); });
    CLI::App* pgn = runs->add_subcommand("pgn", "PGN of a match run's counted games");
    pgn->add_option("id", *id, "Run id")->required();
    pgn->callback([=, &exit_code] {
      v1::GetPgnRequest req;
      req.set_run_id(*id);
      v1::GetPgnResponse resp;
      grpc::Status s = CallRunService(*address, &v1::RunService::Stub::GetPgn, req, &resp, 60);
      if (!s.ok()) return void(exit_code = Failed(s));
      std::cout << resp.pgn();
    });
    CLI::App* cancel = runs->add_subcommand("cancel", "Cancel a run");
    cancel->add_option("id", *id, "Run id")->required();
    cancel->add_option("--reason", *reason, "Why (recorded with the run)");
    cancel->callback([=] {
      v1::CancelRunRequest req;
      req.set_run_id(*id);
      req.set_reason(*reason);
      v1::Run run;
      print_run(CallRunService(*address, &v1::RunService::Stub::CancelRun, req, &run), run);
    });
    AddResidualsCommand(*runs, address, json, exit_code);
    CLI::App* set = runs->add_subcommand("set",
                                         "Change a run's priority or throughput (its owner; an "
                                         "admin for priority > 0 or throughput > 100)");
    set->add_option("id", *id, "Run id")->required();
    auto priority = std::make_shared<int>(0);
    auto throughput = std::make_shared<uint32_t>(100);
    set->add_option("--priority", *priority, "Higher first, -100..100 (default 0)");
    set->add_option("--throughput", *throughput,
                    "Share among runs of its priority, percent 1..1000 (default 100)");
    set->callback([=] {
      v1::SetSchedulingRequest req;
      req.set_run_id(*id);
      if (set->count("--priority")) req.set_priority(*priority);
      if (set->count("--throughput")) req.set_throughput(*throughput);
      v1::Run run;
      print_run(CallRunService(*address, &v1::RunService::Stub::SetScheduling, req, &run), run);
    });
  }
}

}  // namespace arbiter::cli

#include "coordinator/server.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/strings.h"
#include "coordinator/match_run.h"
#include "coordinator/reactors.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/resource_quota.h"
#include "net/client.h"
#include "net/metrics.h"
#include "net/server.h"
#include "net/status.h"
#include "proto/arbiter/v1/admin_service.grpc.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.grpc.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "proto/arbiter/v1/worker.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

absl::Status AnswerRun(absl::StatusOr<v1::Run> run, v1::SubmitRunResponse* response) {
  return Answer(std::move(run), response->mutable_run());
}

// "ipv4:10.1.2.3:5000" -> "10.1.2.3", "ipv6:[::1]:5000" -> "::1"; gRPC's peer URI.
std::string PeerHost(const std::string& peer) {
  std::string_view p = peer;
  const size_t scheme = p.find(':');
  if (scheme == std::string_view::npos) return std::string(p);
  const std::string_view kind = p.substr(0, scheme);
  p.remove_prefix(scheme + 1);
  if (kind != "ipv4" && kind != "ipv6") return std::string(p);
  const size_t port = p.rfind(':');
  if (port != std::string_view::npos) p = p.substr(0, port);
  if (p.size() >= 2 && p.front() == '[' && p.back() == ']') p = p.substr(1, p.size() - 2);
  return std::string(p);
}

// The caller of every call: its bearer token checked against the role the method needs. One
// place for every method of every service (the callback API has no interceptor that can refuse
// a call, so each method asks the gate first).
class Gate {
 public:
  explicit Gate(TokenRegistry* tokens) : tokens_(tokens) {}
  absl::StatusOr<Caller> Check(grpc::CallbackServerContext* ctx, v1::Role needed) const {
    if (!tokens_) return Caller{"anonymous", v1::ROLE_ADMIN, PeerHost(ctx->peer())};
    const auto& md = ctx->client_metadata();
    auto it = md.find("authorization");
    const std::string_view header = it == md.end()
                                        ? std::string_view()
                                        : std::string_view(it->second.data(), it->second.size());
    absl::StatusOr<Caller> caller = tokens_->Authenticate(header);
    if (!caller.ok()) return caller.status();
    if (absl::Status st = Permit(*caller, needed); !st.ok()) return st;
    caller->peer = PeerHost(ctx->peer());
    return caller;
  }

 private:
  TokenRegistry* tokens_;  // null: no authentication (--no-auth, loopback only)
};

// A unary method: the gate, then `call(caller)` answered at once or on `pool`.
#define ARBITER_GATE(ctx, role)                           \
  absl::StatusOr<Caller> caller = gate_.Check(ctx, role); \
  if (!caller.ok()) return Finish(ctx, caller.status());  \
  const Caller who = *caller

class RunServiceImpl final : public v1::RunService::CallbackService {
 public:
  RunServiceImpl(Coordinator* c, TaskPool* pool, Gate gate) : c_(c), pool_(pool), gate_(gate) {}

  grpc::ServerUnaryReactor* SubmitPerft(grpc::CallbackServerContext* ctx,
                                        const v1::SubmitPerftRequest* req,
                                        v1::SubmitRunResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kSubmit));
    return FinishOnPool(
        ctx, pool_, [this, req, resp, who] { return AnswerRun(c_->SubmitPerft(*req, who), resp); });
  }
  grpc::ServerUnaryReactor* SubmitMatch(grpc::CallbackServerContext* ctx,
                                        const v1::SubmitMatchRequest* req,
                                        v1::SubmitRunResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kSubmit));
    return FinishOnPool(
        ctx, pool_, [this, req, resp, who] { return AnswerRun(c_->SubmitMatch(*req, who), resp); });
  }
  grpc::ServerUnaryReactor* SubmitTournament(grpc::CallbackServerContext* ctx,
                                             const v1::SubmitTournamentRequest* req,
                                             v1::SubmitRunResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kSubmit));
    return FinishOnPool(ctx, pool_, [this, req, resp, who] {
      return AnswerRun(c_->SubmitTournament(*req, who), resp);
    });
  }
  grpc::ServerUnaryReactor* SubmitMovegenCheck(grpc::CallbackServerContext* ctx,
                                               const v1::SubmitMovegenCheckRequest* req,
                                               v1::SubmitRunResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kSubmit));
    return FinishOnPool(ctx, pool_, [this, req, resp, who] {
      return AnswerRun(c_->SubmitMovegenCheck(*req, who), resp);
    });
  }
  grpc::ServerUnaryReactor* GetPgn(grpc::CallbackServerContext* ctx, const v1::GetPgnRequest* req,
                                   v1::GetPgnResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return Answer(c_->GetPgn(req->run_id()), resp); });
  }
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext* ctx, const v1::GetRunRequest* req,
                                   v1::Run* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    return Finish(ctx, Answer(c_->GetRun(req->run_id()), resp));
  }
  grpc::ServerWriteReactor<v1::Run>* WatchRun(grpc::CallbackServerContext* ctx,
                                              const v1::WatchRunRequest* req) override {
    absl::StatusOr<Caller> caller = gate_.Check(ctx, RoleFor(RunCall::kView));
    if (!caller.ok()) return new RefusedWrite<v1::Run>(caller.status());
    return NewWatchReactor(c_, req->run_id(), caller->token_hash.empty() ? "" : caller->name);
  }
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext* ctx,
                                     const v1::ListRunsRequest* req,
                                     v1::ListRunsResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    return Finish(ctx, Answer(c_->ListRuns(*req), resp));
  }
  grpc::ServerUnaryReactor* CancelRun(grpc::CallbackServerContext* ctx,
                                      const v1::CancelRunRequest* req, v1::Run* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kCancel));
    return FinishOnPool(ctx, pool_, [this, req, resp, who] {
      return Answer(c_->CancelRun(req->run_id(), req->reason().substr(0, 1024), who), resp);
    });
  }
  grpc::ServerUnaryReactor* SetScheduling(grpc::CallbackServerContext* ctx,
                                          const v1::SetSchedulingRequest* req,
                                          v1::Run* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kSetScheduling));
    return FinishOnPool(
        ctx, pool_, [this, req, resp, who] { return Answer(c_->SetScheduling(*req, who), resp); });
  }
  grpc::ServerReadReactor<v1::UploadEngineRequest>* UploadEngine(
      grpc::CallbackServerContext* ctx, v1::UploadEngineResponse* resp) override {
    absl::StatusOr<Caller> caller = gate_.Check(ctx, RoleFor(RunCall::kUploadEngine));
    if (!caller.ok()) return new RefusedRead<v1::UploadEngineRequest>(caller.status());
    return NewUploadReactor(c_, pool_, resp, *caller);
  }
  grpc::ServerUnaryReactor* ListEngines(grpc::CallbackServerContext* ctx,
                                        const v1::ListEnginesRequest*,
                                        v1::ListEnginesResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    *resp = c_->engines().List();
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* GetRatings(grpc::CallbackServerContext* ctx,
                                       const v1::GetRatingsRequest* req,
                                       v1::GetRatingsResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return Answer(c_->GetRatings(*req), resp); });
  }
  grpc::ServerUnaryReactor* ListWorkers(grpc::CallbackServerContext* ctx,
                                        const v1::ListWorkersRequest* req,
                                        v1::ListWorkersResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kView));
    *resp = c_->ListWorkers(*req);
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* DrainWorkers(grpc::CallbackServerContext* ctx,
                                         const v1::DrainWorkersRequest* req,
                                         v1::ListWorkersResponse* resp) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kDrainWorkers));
    return Finish(ctx, Answer(c_->DrainWorkers(*req, who), resp));
  }
  grpc::ServerUnaryReactor* DeleteEngine(grpc::CallbackServerContext* ctx,
                                         const v1::DeleteEngineRequest* req,
                                         v1::DeleteEngineResponse*) override {
    ARBITER_GATE(ctx, RoleFor(RunCall::kDeleteEngine));
    return FinishOnPool(ctx, pool_,
                        [this, req, who] { return c_->DeleteEngine(req->sha256(), who); });
  }

 private:
  Coordinator* c_;
  TaskPool* pool_;
  const Gate gate_;
};

class WorkServiceImpl final : public v1::WorkService::CallbackService {
 public:
  WorkServiceImpl(Coordinator* c, TaskPool* replay_pool, Gate gate)
      : c_(c), replay_pool_(replay_pool), gate_(gate) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const v1::RegisterRequest* req,
                                     v1::RegisterResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_WORKER);
    return Finish(ctx, Answer(c_->Register(*req, who), resp));
  }
  grpc::ServerUnaryReactor* AcquireJob(grpc::CallbackServerContext* ctx,
                                       const v1::AcquireJobRequest* req,
                                       v1::AcquireJobResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_WORKER);
    return NewAcquireReactor(c_, req, resp, who);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_WORKER);
    return Finish(ctx, Answer(c_->Heartbeat(*req, who), resp));
  }
  grpc::ServerUnaryReactor* CompleteJob(grpc::CallbackServerContext* ctx,
                                        const v1::CompleteJobRequest* req,
                                        v1::CompleteJobResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_WORKER);
    auto* reactor = ctx->DefaultReactor();
    auto complete = [this, reactor, req, resp, who] {
      c_->CompleteJob(
          *req,
          [reactor, resp](absl::StatusOr<v1::CompleteJobResponse> r) {
            reactor->Finish(ToGrpc(Answer(std::move(r), resp)));
          },
          who);
    };
    // Match results are replayed game by game (about a millisecond a job): not in the reaction.
    if (req->has_match())
      replay_pool_->Post(complete);
    else
      complete();
    return reactor;
  }
  grpc::ServerUnaryReactor* ReleaseJob(grpc::CallbackServerContext* ctx,
                                       const v1::ReleaseJobRequest* req,
                                       v1::ReleaseJobResponse*) override {
    ARBITER_GATE(ctx, v1::ROLE_WORKER);
    return Finish(ctx, c_->ReleaseJob(*req, who));
  }
  grpc::ServerWriteReactor<v1::EngineChunk>* FetchEngine(
      grpc::CallbackServerContext* ctx, const v1::FetchEngineRequest* req) override {
    absl::StatusOr<Caller> caller = gate_.Check(ctx, v1::ROLE_WORKER);
    if (!caller.ok()) return new RefusedWrite<v1::EngineChunk>(caller.status());
    // A worker fetches an engine only for a job it holds; an admin needs no lease.
    if (!caller->admin() || !req->worker_id().empty()) {
      absl::Status may = c_->CheckEngineFetch(req->worker_id(), req->sha256(), *caller);
      if (!may.ok()) return new RefusedWrite<v1::EngineChunk>(may);
    }
    return NewFetchReactor(c_, req->sha256());
  }

 private:
  Coordinator* c_;
  TaskPool* replay_pool_;
  const Gate gate_;
};

class AdminServiceImpl final : public v1::AdminService::CallbackService {
 public:
  AdminServiceImpl(Coordinator* c, Gate gate, bool auth) : c_(c), gate_(gate), auth_(auth) {}

  grpc::ServerUnaryReactor* CreateToken(grpc::CallbackServerContext* ctx,
                                        const v1::CreateTokenRequest* req,
                                        v1::CreateTokenResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_ADMIN);
    if (!auth_) return Finish(ctx, NoAuth());
    absl::StatusOr<std::string> secret = c_->tokens().Create(req->name(), req->role());
    if (!secret.ok()) return Finish(ctx, secret.status());
    for (const v1::Token& t : c_->tokens().List())
      if (t.name() == req->name()) *resp->mutable_token() = t;
    resp->set_secret(*secret);
    spdlog::info("token '{}' ({}) created by '{}'", req->name(), RoleName(req->role()), who.name);
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* ListTokens(grpc::CallbackServerContext* ctx,
                                       const v1::ListTokensRequest*,
                                       v1::ListTokensResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_ADMIN);
    if (!auth_) return Finish(ctx, NoAuth());
    for (const v1::Token& t : c_->tokens().List()) *resp->add_tokens() = t;
    for (const StoredQuarantine& q : c_->Quarantines())
      for (v1::Token& t : *resp->mutable_tokens())
        if (t.name() == q.name) {
          t.set_quarantine(q.reason);
          t.set_quarantined_unix(q.since_unix);
        }
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* LiftQuarantine(grpc::CallbackServerContext* ctx,
                                           const v1::LiftQuarantineRequest* req,
                                           v1::LiftQuarantineResponse*) override {
    ARBITER_GATE(ctx, v1::ROLE_ADMIN);
    if (req->name().size() > 64)
      return Finish(ctx, absl::InvalidArgumentError("token names have at most 64 bytes"));
    absl::Status st = c_->LiftQuarantine(req->name());
    if (st.ok()) spdlog::info("token '{}': quarantine lifted by '{}'", req->name(), who.name);
    return Finish(ctx, st);
  }
  grpc::ServerUnaryReactor* DecideResidual(grpc::CallbackServerContext* ctx,
                                           const v1::DecideResidualRequest* req,
                                           v1::DecideResidualResponse* resp) override {
    ARBITER_GATE(ctx, v1::ROLE_ADMIN);
    if (req->worker_id().size() > 256)
      return Finish(ctx, absl::InvalidArgumentError("worker ids have at most 256 bytes"));
    absl::StatusOr<v1::Run> run =
        c_->DecideResidual(req->run_id(), req->worker_id(), req->decision());
    if (!run.ok()) return Finish(ctx, run.status());
    spdlog::info("run {}: worker {}'s set-aside games {} by '{}'", req->run_id(), req->worker_id(),
                 req->decision() == v1::RESIDUAL_STATE_ACCEPTED ? "accepted" : "voided", who.name);
    *resp->mutable_run() = std::move(*run);
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* RevokeToken(grpc::CallbackServerContext* ctx,
                                        const v1::RevokeTokenRequest* req,
                                        v1::RevokeTokenResponse*) override {
    ARBITER_GATE(ctx, v1::ROLE_ADMIN);
    if (!auth_) return Finish(ctx, NoAuth());
    absl::Status st = c_->RevokeToken(req->name());
    if (st.ok()) spdlog::info("token '{}' revoked by '{}'", req->name(), who.name);
    return Finish(ctx, st);
  }
  grpc::ServerUnaryReactor* WhoAmI(grpc::CallbackServerContext* ctx, const v1::WhoAmIRequest*,
                                   v1::WhoAmIResponse* resp) override {
    absl::StatusOr<Caller> caller = gate_.Check(ctx, v1::ROLE_UNSPECIFIED);
    // Any valid token may ask who it is: only UNAUTHENTICATED stops it.
    if (!caller.ok() && caller.status().code() == absl::StatusCode::kUnauthenticated)
      return Finish(ctx, caller.status());
    for (const v1::Token& t : c_->tokens().List()) {
      if (caller.ok() ? t.name() == caller->name : false) *resp->mutable_token() = t;
    }
    if (!resp->has_token()) {
      // Permission denied for ROLE_UNSPECIFIED names the token: find it by the message's name.
      const auto& md = ctx->client_metadata();
      auto it = md.find("authorization");
      absl::StatusOr<Caller> me = c_->tokens().Authenticate(
          it == md.end() ? std::string_view()
                         : std::string_view(it->second.data(), it->second.size()));
      if (me.ok()) {
        resp->mutable_token()->set_name(me->name);
        resp->mutable_token()->set_role(me->role);
      } else if (!auth_) {
        resp->mutable_token()->set_name("anonymous");
        resp->mutable_token()->set_role(v1::ROLE_ADMIN);
      }
    }
    return Finish(ctx, absl::OkStatus());
  }

 private:
  static absl::Status NoAuth() {
    return absl::FailedPreconditionError(
        "this coordinator runs without authentication (--no-auth)");
  }
  Coordinator* c_;
  const Gate gate_;
  const bool auth_;
};

#undef ARBITER_GATE

// The first admin token: from --admin-token-file, or made once into DATA/admin.token (0600).
absl::Status BootstrapAdmin(const ServerOptions& options, TokenRegistry& tokens) {
  if (!options.admin_token_file.empty()) {
    absl::StatusOr<std::string> secret =
        net::ReadSecret(options.admin_token_file, "--admin-token-file");
    if (!secret.ok()) return secret.status();
    return tokens.Put("admin", v1::ROLE_ADMIN, *secret);
  }
  for (const v1::Token& t : tokens.List())
    if (t.role() == v1::ROLE_ADMIN) return absl::OkStatus();
  absl::StatusOr<std::string> secret = NewTokenSecret();
  if (!secret.ok()) return secret.status();
  const std::string path =
      (std::filesystem::path(options.coordinator.data_dir) / "admin.token").string();
  {
    const mode_t old = umask(077);
    std::ofstream out(path, std::ios::trunc);
    out << *secret << "\n";
    out.close();
    umask(old);
    if (!out) return absl::PermissionDeniedError(Cat("cannot write '", path, "'"));
  }
  if (absl::Status st = tokens.Put("admin", v1::ROLE_ADMIN, *secret); !st.ok()) return st;
  spdlog::info("first admin token written to {} (mode 0600): `arbiter tokens create` with it",
               path);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const ServerOptions& o) {
  if (o.tls_cert.empty() != o.tls_key.empty())
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  if (o.tls_cert.empty()) {
    if (!o.tls_client_ca.empty())
      return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions ssl;
  absl::StatusOr<std::string> cert = net::ReadSecret(o.tls_cert, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = net::ReadSecret(o.tls_key, "--tls-key");
  if (!key.ok()) return key.status();
  ssl.pem_key_cert_pairs.push_back({*key + "\n", *cert + "\n"});
  if (!o.tls_client_ca.empty()) {
    absl::StatusOr<std::string> ca = net::ReadSecret(o.tls_client_ca, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca + "\n";
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

struct Server::Impl {
  std::unique_ptr<net::MetricsEndpoint> metrics;
  std::unique_ptr<net::GrpcRequestMetrics> grpc_metrics;
  std::unique_ptr<TaskPool> pool;
  std::unique_ptr<TaskPool> replay_pool;  // match results: replayed before they are committed
  std::unique_ptr<RunServiceImpl> run_service;
  std::unique_ptr<WorkServiceImpl> work_service;
  std::unique_ptr<AdminServiceImpl> admin_service;
  std::unique_ptr<grpc::Server> server;
  bool shut_down = false;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  if (options.no_auth && !net::IsLoopbackAddress(options.listen))
    return absl::InvalidArgumentError(
        Cat("--no-auth is accepted only on a loopback address (127.0.0.1:PORT), not on '",
            options.listen, "': anyone who reaches the port could run code on every worker"));
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = ServerCredentials(options);
  if (!creds.ok()) return creds.status();
  std::unique_ptr<Server> s(new Server);
  s->impl_ = std::make_unique<Impl>();
  Impl& impl = *s->impl_;
  prometheus::Registry* registry = nullptr;
  if (!options.metrics.empty()) {
    absl::StatusOr<std::unique_ptr<net::MetricsEndpoint>> m =
        net::MetricsEndpoint::Start(options.metrics);
    if (!m.ok()) return m.status();
    impl.metrics = std::move(*m);
    registry = &impl.metrics->registry();
    impl.grpc_metrics = std::make_unique<net::GrpcRequestMetrics>(*registry);
    s->metrics_port_ = impl.metrics->port();
  }
  absl::StatusOr<std::unique_ptr<Coordinator>> c = Coordinator::Open(options.coordinator, registry);
  if (!c.ok()) return c.status();
  s->coordinator_ = std::move(*c);
  TokenRegistry* tokens = nullptr;
  if (!options.no_auth) {
    tokens = &s->coordinator_->tokens();
    if (absl::Status st = BootstrapAdmin(options, *tokens); !st.ok()) return st;
    for (const auto& [name, role, secret] : options.tokens)
      if (absl::Status st = tokens->Put(name, role, secret); !st.ok()) return st;
  }
  const Gate gate(tokens);
  impl.pool = std::make_unique<TaskPool>(2);
  impl.run_service = std::make_unique<RunServiceImpl>(s->coordinator_.get(), impl.pool.get(), gate);
  impl.replay_pool =
      std::make_unique<TaskPool>(int(std::max(2u, std::thread::hardware_concurrency())));
  impl.work_service =
      std::make_unique<WorkServiceImpl>(s->coordinator_.get(), impl.replay_pool.get(), gate);
  impl.admin_service =
      std::make_unique<AdminServiceImpl>(s->coordinator_.get(), gate, tokens != nullptr);
  net::EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(net::NormalizeAddress(options.listen), *creds, &s->port_);
  builder.RegisterService(impl.run_service.get());
  builder.RegisterService(impl.work_service.get());
  builder.RegisterService(impl.admin_service.get());
  // The largest call is a submission with its opening book (kMaxOpeningsBytes); engines arrive
  // as streams of chunks. gRPC reads a message whole before the token can be looked at, so what
  // strangers can make the server hold is bounded by this size times the calls in flight, and
  // those by the memory quota: past it, reads wait (and idle connections are closed) instead of
  // the process growing.
  builder.SetMaxReceiveMessageSize(int(kMaxOpeningsBytes) + (1 << 20));
  builder.SetMaxSendMessageSize(64 << 20);
  grpc::ResourceQuota quota("arbiter-coordinator");
  quota.Resize(options.grpc_memory_bytes);
  builder.SetResourceQuota(quota);
  // One coordinator per port: a second one must fail, not share the port's clients.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Workers ping every 5 s to find a dead link fast (worker/worker.cc); without this the server
  // would count their pings as abuse and close the connection (GOAWAY "too_many_pings").
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 4000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
  // And the coordinator pings its clients: a worker that vanished (its node gone, or it dialled
  // again after a partition, its old connection's FIN lost) leaves a connection no one closes.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  if (impl.grpc_metrics)
    builder.experimental().SetInterceptorCreators(impl.grpc_metrics->InterceptorFactories());
  impl.server = builder.BuildAndStart();
  if (!impl.server || s->port_ == 0)
    return absl::UnavailableError(
        Cat("cannot listen on '", options.listen, "' (in use, or not an address of this host)"));
  spdlog::info("coordinator listening on port {}{}{}{}", s->port_,
               impl.metrics ? Cat(", metrics on port ", s->metrics_port_) : std::string(),
               options.tls_cert.empty() ? "" : ", TLS",
               options.no_auth ? ", WITHOUT authentication (--no-auth)" : "");
  return s;
}

void Server::Shutdown() {
  if (!impl_ || impl_->shut_down) return;
  impl_->shut_down = true;
  if (coordinator_) coordinator_->Shutdown();
  if (impl_->server)
    impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->pool.reset();
  impl_->replay_pool.reset();
}

Server::~Server() {
  Shutdown();
  coordinator_.reset();
}

}  // namespace arbiter::coordinator

#include "coordinator/server.h"

#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/strings.h"
#include "grpcpp/grpcpp.h"
#include "net/metrics.h"
#include "net/server.h"
#include "net/status.h"
#include "proto/arbiter/v1/cluster.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

using net::ToGrpc;

// Moves a call's value into its response, if it has one; returns the call's status.
template <typename T>
absl::Status Answer(absl::StatusOr<T> result, T* response) {
  if (result.ok()) *response = std::move(*result);
  return result.status();
}
absl::Status AnswerRun(absl::StatusOr<v1::Run> run, v1::SubmitRunResponse* response) {
  return Answer(std::move(run), response->mutable_run());
}

// A unary call answered at once.
grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, const absl::Status& status) {
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

// A few threads for calls that do real work (splitting a perft, disk writes), so that no
// gRPC reaction runs long.
class TaskPool {
 public:
  explicit TaskPool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~TaskPool() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    for (auto& t : threads_) t.join();
  }
  void Post(std::function<void()> f) {
    absl::MutexLock lock(&mu_);
    tasks_.push_back(std::move(f));
  }

 private:
  void Loop() {
    for (;;) {
      std::function<void()> f;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this]()
                         ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !tasks_.empty(); };
        mu_.Await(absl::Condition(&ready));
        if (tasks_.empty()) return;
        f = std::move(tasks_.front());
        tasks_.pop_front();
      }
      f();
    }
  }
  absl::Mutex mu_;
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

// A unary call answered from `pool` with the status that `call` returns.
template <typename Call>
grpc::ServerUnaryReactor* FinishOnPool(grpc::CallbackServerContext* ctx, TaskPool* pool,
                                       Call call) {
  auto* reactor = ctx->DefaultReactor();
  pool->Post([reactor, call = std::move(call)] { reactor->Finish(ToGrpc(call())); });
  return reactor;
}

// Long poll: finished by the coordinator's callback, or by a client cancel.
class AcquireReactor : public grpc::ServerUnaryReactor {
 public:
  AcquireReactor(Coordinator* c, const v1::AcquireJobRequest* req, v1::AcquireJobResponse* resp)
      : coordinator_(c), response_(resp) {
    uint64_t id = c->AcquireJob(*req, [this](absl::StatusOr<v1::AcquireJobResponse> r) {
      if (r.ok()) *response_ = std::move(*r);
      FinishOnce(r.ok() ? grpc::Status::OK : ToGrpc(r.status()));
    });
    absl::MutexLock lock(&mu_);
    waiter_ = id;
  }
  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      id = waiter_;
    }
    if (id != 0 && coordinator_->CancelAcquire(id))
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "long poll cancelled"));
  }
  void OnDone() override { delete this; }

 private:
  void FinishOnce(const grpc::Status& s) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      finished_ = true;
    }
    Finish(s);
  }
  Coordinator* coordinator_;
  v1::AcquireJobResponse* response_;
  absl::Mutex mu_;
  uint64_t waiter_ ABSL_GUARDED_BY(mu_) = 0;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Server stream of a run: the run now, then each new version, until it is finished.
class WatchReactor : public grpc::ServerWriteReactor<v1::Run> {
 public:
  WatchReactor(Coordinator* c, uint64_t run_id) : coordinator_(c), run_id_(run_id) { Next(0); }
  void OnWriteDone(bool ok) override {
    bool terminal;
    uint64_t version;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      terminal = terminal_;
      version = version_;
      if (cancelled_) return FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
    }
    if (!ok) return FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "stream broken"));
    if (terminal) return FinishOnce(grpc::Status::OK);
    Next(version);
  }
  void OnCancel() override {
    uint64_t id;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      id = watch_;
      if (writing_) return;  // OnWriteDone finishes
    }
    if (id != 0 && coordinator_->CancelWatch(id))
      FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled"));
  }
  void OnDone() override { delete this; }

 private:
  void Next(uint64_t seen) {
    uint64_t id = coordinator_->WatchRun(run_id_, seen,
                                         [this](absl::StatusOr<v1::Run> run, uint64_t version) {
                                           if (!run.ok()) return FinishOnce(ToGrpc(run.status()));
                                           {
                                             absl::MutexLock lock(&mu_);
                                             if (finished_ || cancelled_) return;
                                             run_ = std::move(*run);
                                             version_ = version;
                                             terminal_ = run_.state() == v1::RUN_STATE_SUCCEEDED ||
                                                         run_.state() == v1::RUN_STATE_FAILED ||
                                                         run_.state() == v1::RUN_STATE_CANCELLED;
                                             writing_ = true;
                                             watch_ = 0;
                                           }
                                           StartWrite(&run_);
                                         });
    absl::MutexLock lock(&mu_);
    if (id != 0) watch_ = id;
  }
  void FinishLocked(const grpc::Status& s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    Finish(s);
  }
  void FinishOnce(const grpc::Status& s) {
    absl::MutexLock lock(&mu_);
    FinishLocked(s);
  }
  Coordinator* coordinator_;
  const uint64_t run_id_;
  absl::Mutex mu_;
  v1::Run run_;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t watch_ ABSL_GUARDED_BY(mu_) = 0;
  bool terminal_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Client stream of engine bytes into a temp file; stored by sha256 at the end.
class UploadReactor : public grpc::ServerReadReactor<v1::UploadEngineRequest> {
 public:
  UploadReactor(Coordinator* c, TaskPool* pool, v1::UploadEngineResponse* resp)
      : coordinator_(c), pool_(pool), response_(resp) {
    char name[64];
    std::snprintf(name, sizeof name, "upload-%d-%p", getpid(), static_cast<void*>(this));
    path_ = (std::filesystem::path(c->UploadDir()) / name).string();
    out_.open(path_, std::ios::binary | std::ios::trunc);
    if (!out_) {
      Fail(grpc::StatusCode::INTERNAL, "cannot create an upload file");
      return;
    }
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {  // client finished sending
      out_.close();
      if (name_.empty())
        return Fail(grpc::StatusCode::INVALID_ARGUMENT, "upload had no name message");
      if (size_ == 0) return Fail(grpc::StatusCode::INVALID_ARGUMENT, "upload had no bytes");
      pool_->Post([this] {
        absl::StatusOr<v1::Engine> e = coordinator_->AddEngine(name_, path_);
        if (e.ok()) *response_->mutable_engine() = *e;
        std::error_code ec;
        std::filesystem::remove(path_, ec);
        Finish(ToGrpc(e.status()));
      });
      return;
    }
    if (request_.has_name()) {
      if (!name_.empty() || size_ > 0)
        return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "the name must come once, in the first message");
      if (request_.name().empty())
        return Fail(grpc::StatusCode::INVALID_ARGUMENT, "engine name is empty");
      name_ = request_.name();
    } else {
      if (name_.empty())
        return Fail(grpc::StatusCode::INVALID_ARGUMENT, "the first message must carry the name");
      size_ += request_.chunk().size();
      if (size_ > coordinator_->max_upload_bytes())
        return Fail(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            Cat("upload exceeds the limit of ", coordinator_->max_upload_bytes(), " bytes"));
      out_.write(request_.chunk().data(), std::streamsize(request_.chunk().size()));
    }
    StartRead(&request_);
  }
  void OnDone() override { delete this; }

 private:
  void Fail(grpc::StatusCode code, const std::string& message) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    Finish(grpc::Status(code, message));
  }
  Coordinator* coordinator_;
  TaskPool* pool_;
  v1::UploadEngineResponse* response_;
  v1::UploadEngineRequest request_;
  std::string path_, name_;
  std::ofstream out_;
  uint64_t size_ = 0;
};

// Server stream of an artifact's bytes.
class FetchReactor : public grpc::ServerWriteReactor<v1::EngineChunk> {
 public:
  FetchReactor(Coordinator* c, const std::string& sha256) : sha_(sha256) {
    absl::StatusOr<std::string> path = c->EnginePath(sha256);
    if (!path.ok()) {
      Finish(ToGrpc(path.status()));
      return;
    }
    in_.open(*path, std::ios::binary);
    std::error_code ec;
    total_ = std::filesystem::file_size(*path, ec);
    if (!in_ || ec) {
      Finish(grpc::Status(grpc::StatusCode::INTERNAL, "engine artifact unreadable"));
      return;
    }
    WriteNext();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "stream broken"));
    WriteNext();
  }
  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    std::string buf(1 << 20, '\0');
    in_.read(buf.data(), std::streamsize(buf.size()));
    buf.resize(size_t(in_.gcount()));
    if (buf.empty()) return Finish(grpc::Status::OK);
    chunk_.set_data(std::move(buf));
    chunk_.set_offset(offset_);
    chunk_.set_total_size(total_);
    chunk_.set_sha256(sha_);
    offset_ += chunk_.data().size();
    StartWrite(&chunk_);
  }
  std::string sha_;
  std::ifstream in_;
  v1::EngineChunk chunk_;
  uint64_t total_ = 0, offset_ = 0;
};

class RunServiceImpl final : public v1::RunService::CallbackService {
 public:
  RunServiceImpl(Coordinator* c, TaskPool* pool) : c_(c), pool_(pool) {}

  grpc::ServerUnaryReactor* SubmitPerft(grpc::CallbackServerContext* ctx,
                                        const v1::SubmitPerftRequest* req,
                                        v1::SubmitRunResponse* resp) override {
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return AnswerRun(c_->SubmitPerft(*req), resp); });
  }
  grpc::ServerUnaryReactor* SubmitMatch(grpc::CallbackServerContext* ctx,
                                        const v1::SubmitMatchRequest* req,
                                        v1::SubmitRunResponse* resp) override {
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return AnswerRun(c_->SubmitMatch(*req), resp); });
  }
  grpc::ServerUnaryReactor* GetPgn(grpc::CallbackServerContext* ctx, const v1::GetPgnRequest* req,
                                   v1::GetPgnResponse* resp) override {
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return Answer(c_->GetPgn(req->run_id()), resp); });
  }
  grpc::ServerUnaryReactor* SubmitTournament(grpc::CallbackServerContext* ctx,
                                             const v1::SubmitTournamentRequest* req,
                                             v1::SubmitRunResponse* resp) override {
    return FinishOnPool(ctx, pool_,
                        [this, req, resp] { return AnswerRun(c_->SubmitTournament(*req), resp); });
  }
  grpc::ServerUnaryReactor* GetRun(grpc::CallbackServerContext* ctx, const v1::GetRunRequest* req,
                                   v1::Run* resp) override {
    return Finish(ctx, Answer(c_->GetRun(req->run_id()), resp));
  }
  grpc::ServerWriteReactor<v1::Run>* WatchRun(grpc::CallbackServerContext*,
                                              const v1::WatchRunRequest* req) override {
    return new WatchReactor(c_, req->run_id());
  }
  grpc::ServerUnaryReactor* ListRuns(grpc::CallbackServerContext* ctx,
                                     const v1::ListRunsRequest* req,
                                     v1::ListRunsResponse* resp) override {
    *resp = c_->ListRuns(*req);
    return Finish(ctx, absl::OkStatus());
  }
  grpc::ServerUnaryReactor* CancelRun(grpc::CallbackServerContext* ctx,
                                      const v1::CancelRunRequest* req, v1::Run* resp) override {
    return FinishOnPool(ctx, pool_, [this, req, resp] {
      return Answer(c_->CancelRun(req->run_id(), req->reason()), resp);
    });
  }
  grpc::ServerReadReactor<v1::UploadEngineRequest>* UploadEngine(
      grpc::CallbackServerContext*, v1::UploadEngineResponse* resp) override {
    return new UploadReactor(c_, pool_, resp);
  }
  grpc::ServerUnaryReactor* ListEngines(grpc::CallbackServerContext* ctx,
                                        const v1::ListEnginesRequest*,
                                        v1::ListEnginesResponse* resp) override {
    *resp = c_->ListEngines();
    return Finish(ctx, absl::OkStatus());
  }

 private:
  Coordinator* c_;
  TaskPool* pool_;
};

class WorkServiceImpl final : public v1::WorkService::CallbackService {
 public:
  WorkServiceImpl(Coordinator* c, TaskPool* replay_pool) : c_(c), replay_pool_(replay_pool) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx,
                                     const v1::RegisterRequest* req,
                                     v1::RegisterResponse* resp) override {
    return Finish(ctx, Answer(c_->Register(*req), resp));
  }
  grpc::ServerUnaryReactor* AcquireJob(grpc::CallbackServerContext*,
                                       const v1::AcquireJobRequest* req,
                                       v1::AcquireJobResponse* resp) override {
    return new AcquireReactor(c_, req, resp);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) override {
    return Finish(ctx, Answer(c_->Heartbeat(*req), resp));
  }
  grpc::ServerUnaryReactor* CompleteJob(grpc::CallbackServerContext* ctx,
                                        const v1::CompleteJobRequest* req,
                                        v1::CompleteJobResponse* resp) override {
    auto* reactor = ctx->DefaultReactor();
    auto complete = [this, reactor, req, resp] {
      c_->CompleteJob(*req, [reactor, resp](absl::StatusOr<v1::CompleteJobResponse> r) {
        reactor->Finish(ToGrpc(Answer(std::move(r), resp)));
      });
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
    return Finish(ctx, c_->ReleaseJob(*req));
  }
  grpc::ServerWriteReactor<v1::EngineChunk>* FetchEngine(
      grpc::CallbackServerContext*, const v1::FetchEngineRequest* req) override {
    return new FetchReactor(c_, req->sha256());
  }

 private:
  Coordinator* c_;
  TaskPool* replay_pool_;
};

}  // namespace

struct Server::Impl {
  std::unique_ptr<net::MetricsEndpoint> metrics;
  std::unique_ptr<net::GrpcRequestMetrics> grpc_metrics;
  std::unique_ptr<TaskPool> pool;
  std::unique_ptr<TaskPool> replay_pool;  // match results: replayed before they are committed
  std::unique_ptr<RunServiceImpl> run_service;
  std::unique_ptr<WorkServiceImpl> work_service;
  std::unique_ptr<grpc::Server> server;
  bool shut_down = false;
};

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
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
  impl.pool = std::make_unique<TaskPool>(2);
  impl.run_service = std::make_unique<RunServiceImpl>(s->coordinator_.get(), impl.pool.get());
  impl.replay_pool =
      std::make_unique<TaskPool>(int(std::max(2u, std::thread::hardware_concurrency())));
  impl.work_service =
      std::make_unique<WorkServiceImpl>(s->coordinator_.get(), impl.replay_pool.get());
  net::EnableHealthAndReflection();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(net::NormalizeAddress(options.listen), grpc::InsecureServerCredentials(),
                           &s->port_);
  builder.RegisterService(impl.run_service.get());
  builder.RegisterService(impl.work_service.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.SetMaxSendMessageSize(64 << 20);
  if (impl.grpc_metrics)
    builder.experimental().SetInterceptorCreators(impl.grpc_metrics->InterceptorFactories());
  impl.server = builder.BuildAndStart();
  if (!impl.server || s->port_ == 0)
    return absl::UnavailableError(Cat("cannot listen on '", options.listen, "'"));
  spdlog::info("coordinator listening on port {}{}", s->port_,
               impl.metrics ? Cat(", metrics on port ", s->metrics_port_) : std::string());
  return s;
}

void Server::Shutdown() {
  if (!impl_ || impl_->shut_down) return;
  impl_->shut_down = true;
  coordinator_->Shutdown();
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->pool.reset();
  impl_->replay_pool.reset();
}

Server::~Server() {
  Shutdown();
  coordinator_.reset();
}

}  // namespace arbiter::coordinator

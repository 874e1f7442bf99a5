// The coordinator's gRPC reactors (callback API) for calls that outlive their method: the long
// poll (AcquireJob), the run stream (WatchRun), uploads and artifact downloads; and the small task
// pool that keeps slow work (splits, replays, disk writes) out of gRPC's reactions.
#pragma once

#include <deque>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "grpcpp/grpcpp.h"
#include "net/status.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/run_service.pb.h"
#include "proto/arbiter/v1/work_service.pb.h"

namespace arbiter::coordinator {

using net::ToGrpc;

// Moves a call's value into its response, if it has one; returns the call's status.
template <typename T>
absl::Status Answer(absl::StatusOr<T> result, T* response) {
  if (result.ok()) *response = std::move(*result);
  return result.status();
}

// A unary call answered at once.
grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, const absl::Status& status);

// A few threads for calls that do real work (splitting a perft, disk writes), so that no
// gRPC reaction runs long.
class TaskPool {
 public:
  explicit TaskPool(int threads);
  ~TaskPool();
  void Post(std::function<void()> f);

 private:
  void Loop();
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

// Streaming calls refused before they start (authentication, permission).
template <typename T>
class RefusedWrite : public grpc::ServerWriteReactor<T> {
 public:
  explicit RefusedWrite(const absl::Status& status) { this->Finish(ToGrpc(status)); }
  void OnDone() override { delete this; }
};
template <typename T>
class RefusedRead : public grpc::ServerReadReactor<T> {
 public:
  explicit RefusedRead(const absl::Status& status) { this->Finish(ToGrpc(status)); }
  void OnDone() override { delete this; }
};

grpc::ServerUnaryReactor* NewAcquireReactor(Coordinator* c, const v1::AcquireJobRequest* req,
                                            v1::AcquireJobResponse* resp, const Caller& caller);
grpc::ServerWriteReactor<v1::Run>* NewWatchReactor(Coordinator* c, uint64_t run_id,
                                                   const std::string& owner);
grpc::ServerReadReactor<v1::UploadEngineRequest>* NewUploadReactor(Coordinator* c, TaskPool* pool,
                                                                   v1::UploadEngineResponse* resp,
                                                                   const Caller& caller);
grpc::ServerWriteReactor<v1::EngineChunk>* NewFetchReactor(Coordinator* c,
                                                           const std::string& sha256);

}  // namespace arbiter::coordinator

#include "coordinator/reactors.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "base/strings.h"
#include "net/sha256.h"

namespace arbiter::coordinator {

// A unary call answered at once.
grpc::ServerUnaryReactor* Finish(grpc::CallbackServerContext* ctx, const absl::Status& status) {
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(ToGrpc(status));
  return reactor;
}

TaskPool::TaskPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Loop(); });
}

TaskPool::~TaskPool() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  for (auto& t : threads_) t.join();
}

void TaskPool::Post(std::function<void()> f) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(f));
}

void TaskPool::Loop() {
  for (;;) {
    std::function<void()> f;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !tasks_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (tasks_.empty()) return;
      f = std::move(tasks_.front());
      tasks_.pop_front();
    }
    f();
  }
}

namespace {

// Long poll: finished by the coordinator's callback, or by a client cancel.
class AcquireReactor : public grpc::ServerUnaryReactor {
 public:
  AcquireReactor(Coordinator* c, const v1::AcquireJobRequest* req, v1::AcquireJobResponse* resp,
                 const Caller& caller)
      : coordinator_(c), response_(resp) {
    uint64_t id = c->AcquireJob(
        *req,
        [this](absl::StatusOr<v1::AcquireJobResponse> r) {
          if (r.ok()) *response_ = std::move(*r);
          FinishOnce(r.ok() ? grpc::Status::OK : ToGrpc(r.status()));
        },
        caller);
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
  WatchReactor(Coordinator* c, uint64_t run_id, std::string owner)
      : coordinator_(c), run_id_(run_id), owner_(std::move(owner)) {
    Next(0);
  }
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
    uint64_t id = coordinator_->WatchRun(
        run_id_, seen,
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
        },
        owner_);
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
  const std::string owner_;  // the token whose revocation ends the stream
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
  UploadReactor(Coordinator* c, TaskPool* pool, v1::UploadEngineResponse* resp,
                const Caller& caller)
      : coordinator_(c), pool_(pool), response_(resp), caller_(caller) {
    char name[64];
    std::snprintf(name, sizeof name, "upload-%d-%p", getpid(), static_cast<void*>(this));
    path_ = (std::filesystem::path(c->engines().UploadDir()) / name).string();
    out_.open(path_, std::ios::binary | std::ios::trunc);
    if (!out_) {
      Fail(grpc::StatusCode::INTERNAL, "cannot create an upload file");
      return;
    }
    StartRead(&request_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {  // client finished sending
      out_.flush();
      const bool written = bool(out_);
      out_.close();
      if (!written || out_.fail())
        return Fail(grpc::StatusCode::INTERNAL, "cannot write the upload to disk");
      if (name_.empty())
        return Fail(grpc::StatusCode::INVALID_ARGUMENT, "upload had no name message");
      if (size_ == 0) return Fail(grpc::StatusCode::INVALID_ARGUMENT, "upload had no bytes");
      pool_->Post([this] {
        // A cancelled call also ends its reads: what arrived is not the whole upload.
        if (cancelled_) return Fail(grpc::StatusCode::CANCELLED, "upload cancelled; not kept");
        // What is stored must be what the client sent: size and hash of the file on disk.
        std::error_code ec;
        const uint64_t on_disk = std::filesystem::file_size(path_, ec);
        absl::StatusOr<std::string> sha = net::Sha256OfFile(path_);
        if (ec || on_disk != size_ || !sha.ok())
          return Fail(grpc::StatusCode::INTERNAL,
                      Cat("upload stored ", on_disk, " of ", size_, " bytes; not kept"));
        if (*sha != expected_sha_)
          return Fail(grpc::StatusCode::DATA_LOSS,
                      Cat("upload's sha256 is ", *sha, " but the client sent ", expected_sha_,
                          "; not kept"));
        absl::StatusOr<v1::Engine> e = coordinator_->AddEngine(name_, path_, caller_);
        if (e.ok()) *response_->mutable_engine() = *e;
        std::filesystem::remove(path_, ec);
        Finish(ToGrpc(e.status()));
      });
      return;
    }
    if (request_.has_name()) {
      if (!name_.empty() || size_ > 0)
        return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "the name must come once, in the first message");
      if (request_.name().empty() || request_.name().size() > 64 || HasControl(request_.name()))
        return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "engine name must have 1..64 bytes and no control characters");
      // Required: without it an upload cut short could not be told from a whole one.
      if (!net::IsSha256Hex(request_.sha256()))
        return Fail(grpc::StatusCode::INVALID_ARGUMENT,
                    "the first message needs the sha256 of the upload (64 lowercase hex digits)");
      name_ = request_.name();
      expected_sha_ = request_.sha256();
    } else {
      if (name_.empty())
        return Fail(grpc::StatusCode::INVALID_ARGUMENT, "the first message must carry the name");
      size_ += request_.chunk().size();
      if (size_ > coordinator_->max_upload_bytes())
        return Fail(
            grpc::StatusCode::RESOURCE_EXHAUSTED,
            Cat("upload exceeds the limit of ", coordinator_->max_upload_bytes(), " bytes"));
      // The temporary file counts against the quotas before a byte of it is written.
      if (absl::Status st = coordinator_->ReserveUpload(caller_, request_.chunk().size()); !st.ok())
        return Fail(grpc::StatusCode::RESOURCE_EXHAUSTED, std::string(st.message()));
      reserved_ += request_.chunk().size();
      out_.write(request_.chunk().data(), std::streamsize(request_.chunk().size()));
      if (!out_) return Fail(grpc::StatusCode::INTERNAL, "cannot write the upload to disk");
    }
    StartRead(&request_);
  }
  void OnCancel() override { cancelled_ = true; }
  void OnDone() override {
    coordinator_->ReleaseUpload(caller_, reserved_);
    std::error_code ec;
    std::filesystem::remove(path_, ec);  // kept uploads were moved away
    delete this;
  }

 private:
  void Fail(grpc::StatusCode code, const std::string& message) {
    out_.close();
    // The room before the file: whoever sees the temporary file gone finds its room free (the
    // call itself ends, and OnDone runs, only later).
    coordinator_->ReleaseUpload(caller_, reserved_);
    reserved_ = 0;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    Finish(grpc::Status(code, message));
  }
  Coordinator* coordinator_;
  TaskPool* pool_;
  v1::UploadEngineResponse* response_;
  v1::UploadEngineRequest request_;
  const Caller caller_;
  std::string path_, name_, expected_sha_;
  std::ofstream out_;
  uint64_t size_ = 0;
  uint64_t reserved_ = 0;  // bytes counted against the quotas (EngineStore::Reserve)
  std::atomic<bool> cancelled_ = false;
};

// Server stream of an artifact's bytes.
class FetchReactor : public grpc::ServerWriteReactor<v1::EngineChunk> {
 public:
  FetchReactor(Coordinator* c, const std::string& sha256) : sha_(sha256) {
    absl::StatusOr<std::string> path = c->engines().Path(sha256);
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

}  // namespace

grpc::ServerUnaryReactor* NewAcquireReactor(Coordinator* c, const v1::AcquireJobRequest* req,
                                            v1::AcquireJobResponse* resp, const Caller& caller) {
  return new AcquireReactor(c, req, resp, caller);
}

grpc::ServerWriteReactor<v1::Run>* NewWatchReactor(Coordinator* c, uint64_t run_id,
                                                   const std::string& owner) {
  return new WatchReactor(c, run_id, owner);
}

grpc::ServerReadReactor<v1::UploadEngineRequest>* NewUploadReactor(Coordinator* c, TaskPool* pool,
                                                                   v1::UploadEngineResponse* resp,
                                                                   const Caller& caller) {
  return new UploadReactor(c, pool, resp, caller);
}

grpc::ServerWriteReactor<v1::EngineChunk>* NewFetchReactor(Coordinator* c,
                                                           const std::string& sha256) {
  return new FetchReactor(c, sha256);
}

}  // namespace arbiter::coordinator

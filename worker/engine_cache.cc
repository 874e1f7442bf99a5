#include "worker/engine_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "grpcpp/grpcpp.h"
#include "net/sha256.h"
#include "net/status.h"
#include "proto/arbiter/v1/cluster.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::worker {

EngineCache::EngineCache(std::string dir, std::shared_ptr<grpc::Channel> channel)
    : dir_(std::move(dir)), channel_(std::move(channel)) {}

absl::StatusOr<std::string> EngineCache::Get(const std::string& sha256) {
  if (!net::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(
        Cat("engine sha256 must be 64 lowercase hex digits, got '", sha256, "'"));
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::InternalError(Cat("cannot create cache dir '", dir_, "': ", ec.message()));
  const std::string path = (std::filesystem::path(dir_) / sha256).string();
  if (std::filesystem::exists(path)) {
    absl::StatusOr<std::string> have = net::Sha256OfFile(path);
    if (have.ok() && *have == sha256) return path;
    spdlog::warn("cached engine {} is corrupt; fetching it again", sha256);
    std::filesystem::remove(path, ec);
  }
  absl::Status st = Fetch(sha256, path);
  if (!st.ok()) return st;
  return path;
}

absl::Status EngineCache::Fetch(const std::string& sha256, const std::string& path) {
  const std::string temp = Cat(path, ".part.", getpid());
  auto stub = v1::WorkService::NewStub(channel_);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  v1::FetchEngineRequest req;
  req.set_sha256(sha256);
  auto reader = stub->FetchEngine(&ctx, req);
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  if (!out) return absl::InternalError(Cat("cannot write '", temp, "'"));
  net::Sha256 hash;
  uint64_t size = 0;
  v1::EngineChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.offset() != size) {
      ctx.TryCancel();
      reader->Finish();
      return absl::DataLossError(
          Cat("engine ", sha256, ": chunk at offset ", chunk.offset(), ", expected ", size));
    }
    out.write(chunk.data().data(), std::streamsize(chunk.data().size()));
    hash.Update(chunk.data());
    size += chunk.data().size();
  }
  out.close();
  grpc::Status s = reader->Finish();
  std::error_code ec;
  if (!s.ok()) {
    std::filesystem::remove(temp, ec);
    return net::FromGrpc(s, Cat("fetch engine ", sha256));
  }
  const std::string got = hash.Hex();
  if (got != sha256) {
    std::filesystem::remove(temp, ec);
    return absl::DataLossError(Cat("engine ", sha256, " arrived with sha256 ", got));
  }
  std::filesystem::permissions(
      temp, std::filesystem::perms::owner_exec | std::filesystem::perms::owner_read,
      std::filesystem::perm_options::add, ec);
  std::filesystem::rename(temp, path, ec);
  if (ec) return absl::InternalError(Cat("cannot store engine ", sha256, ": ", ec.message()));
  spdlog::info("engine {} fetched ({} bytes)", sha256, size);
  return absl::OkStatus();
}

}  // namespace arbiter::worker

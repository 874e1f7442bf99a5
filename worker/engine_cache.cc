#include "worker/engine_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/numbers.h"
#include "base/strings.h"
#include "grpcpp/grpcpp.h"
#include "match/sandbox.h"
#include "net/sha256.h"
#include "net/status.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::worker {

namespace {

// An artifact is stored under its sha256; anything else in the directory (the builds, the
// temporary files of fetches) is not one.
bool IsArtifact(const std::filesystem::directory_entry& e) {
  std::error_code ec;
  return net::IsSha256Hex(e.path().filename().string()) && e.is_regular_file(ec);
}

}  // namespace

EngineCache::EngineCache(std::string dir, std::shared_ptr<grpc::Channel> channel, int engine_gid,
                         uint64_t cache_bytes)
    : dir_(std::move(dir)),
      engine_gid_(engine_gid),
      cache_bytes_(cache_bytes),
      channel_(std::move(channel)) {
  // SHA.part.PID.N: a fetch of a worker that was killed (up to an engine's size each).
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    const size_t part = name.find(".part.");
    long pid = 0;
    if (part == std::string::npos) continue;
    const std::string_view rest = std::string_view(name).substr(part + 6);
    if (!ParseNumber(rest.substr(0, rest.find('.')), pid) || pid <= 0) continue;
    if (!match::LeftByGoneProcess(pid_t(pid), e.path().string())) continue;
    std::error_code rm;
    if (std::filesystem::remove(e.path(), rm)) spdlog::info("removed a fetch left: {}", name);
  }
}

void EngineCache::Evict(const std::string& keep) {
  struct Entry {
    std::filesystem::file_time_type used;
    uint64_t size;
    std::filesystem::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    if (!IsArtifact(e)) continue;
    std::error_code sec;
    const Entry entry{e.last_write_time(sec), e.file_size(sec), e.path()};
    if (sec) continue;
    total += entry.size;
    entries.push_back(entry);
  }
  if (total <= cache_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  const auto recent = std::filesystem::file_time_type::clock::now() - std::chrono::minutes(10);
  for (const Entry& e : entries) {
    if (total <= cache_bytes_ || e.used >= recent) break;
    if (e.path == keep) continue;
    std::error_code rm;
    if (!std::filesystem::remove(e.path, rm)) continue;
    total -= e.size;
    spdlog::info("engine cache: evicted {} ({} bytes)", e.path.filename().string(), e.size);
  }
}

void EngineCache::Protect(const std::string& path, bool directory) const {
  if (engine_gid_ >= 0 && chown(path.c_str(), uid_t(-1), gid_t(engine_gid_)) != 0)
    spdlog::warn("cannot give '{}' to group {}: {}", path, engine_gid_, strerror(errno));
  const mode_t mode =
      directory ? (engine_gid_ >= 0 ? 0710 : 0700) : (engine_gid_ >= 0 ? 0550 : 0500);
  if (chmod(path.c_str(), mode) != 0)
    spdlog::warn("cannot set the mode of '{}': {}", path, strerror(errno));
}

absl::StatusOr<std::string> EngineCache::Get(const std::string& sha256) {
  if (!net::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(
        Cat("engine sha256 must be 64 lowercase hex digits, got '", sha256, "'"));
  absl::MutexLock lock(&mu_);
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::InternalError(Cat("cannot create cache dir '", dir_, "': ", ec.message()));
  Protect(dir_, true);
  const std::string path = (std::filesystem::path(dir_) / sha256).string();
  if (std::filesystem::exists(path)) {
    absl::StatusOr<std::string> have = net::Sha256OfFile(path);
    if (have.ok() && *have == sha256) {
      Protect(path, false);
      utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used: evicted last
      return path;
    }
    spdlog::warn("cached engine {} is corrupt; fetching it again", sha256);
    std::filesystem::remove(path, ec);
  }
  absl::Status st = Fetch(sha256, path);
  if (!st.ok()) return st;
  Evict(path);
  return path;
}

void EngineCache::SetWorkerId(const std::string& worker_id) {
  absl::MutexLock lock(&id_mu_);
  worker_id_ = worker_id;
}

absl::Status EngineCache::Fetch(const std::string& sha256, const std::string& path) {
  // Unique per fetch, not only per process: the workers of `arbiter local` share one process and
  // one cache directory, and may fetch the same engine at once.
  static std::atomic<uint64_t> fetches{0};
  const std::string temp = Cat(path, ".part.", getpid(), ".", fetches.fetch_add(1));
  auto stub = v1::WorkService::NewStub(channel_);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
  v1::FetchEngineRequest req;
  req.set_sha256(sha256);
  {
    absl::MutexLock lock(&id_mu_);
    req.set_worker_id(worker_id_);
  }
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
  Protect(temp, false);
  std::filesystem::rename(temp, path, ec);
  if (ec) return absl::InternalError(Cat("cannot store engine ", sha256, ": ", ec.message()));
  spdlog::info("engine {} fetched ({} bytes)", sha256, size);
  return absl::OkStatus();
}

}  // namespace arbiter::worker

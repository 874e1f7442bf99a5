#include "coordinator/engine_store.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "net/sha256.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

v1::Engine EngineOf(const StoredEngine& e) {
  v1::Engine out;
  out.set_sha256(e.sha256);
  out.set_name(e.name);
  out.set_size_bytes(e.size_bytes);
  out.set_uploaded_unix(e.uploaded_unix);
  out.set_owner(e.owner);
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EngineStore>> EngineStore::Open(const std::string& data_dir,
                                                               Store* store) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(data_dir) / "engines" / "tmp", ec);
  if (ec) return absl::InternalError(Cat("cannot create engine store: ", ec.message()));
  ASSIGN_OR_RETURN(std::vector<StoredEngine> engines, store->LoadEngines());
  std::unique_ptr<EngineStore> out(new EngineStore(data_dir, store));
  absl::MutexLock lock(&out->mu_);
  for (const StoredEngine& e : engines) out->engines_[e.sha256] = EngineOf(e);
  return out;
}

std::string EngineStore::UploadDir() const {
  return (std::filesystem::path(dir_) / "engines" / "tmp").string();
}

absl::StatusOr<v1::Engine> EngineStore::Add(const std::string& name, const std::string& temp_path,
                                            const std::string& owner, uint64_t quota_bytes) {
  ASSIGN_OR_RETURN(std::string sha, net::Sha256OfFile(temp_path));
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(temp_path, ec);
  if (ec) return absl::InternalError(Cat("cannot read upload size: ", ec.message()));
  {
    absl::MutexLock lock(&mu_);
    auto it = engines_.find(sha);
    if (it != engines_.end()) {
      std::filesystem::remove(temp_path, ec);
      return it->second;
    }
    const uint64_t used = KeptByLocked(owner);
    if (used + size > quota_bytes)
      return absl::ResourceExhaustedError(Cat("upload quota of '", owner, "' exceeded: ", used,
                                              " bytes kept + ", size, " new > ", quota_bytes,
                                              " (delete engines with `arbiter engines delete`)"));
  }
  const auto final_path = std::filesystem::path(dir_) / "engines" / sha;
  std::filesystem::rename(temp_path, final_path, ec);
  if (ec) return absl::InternalError(Cat("cannot store engine ", sha, ": ", ec.message()));
  std::filesystem::permissions(final_path, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add, ec);
  StoredEngine e{sha, name, size, UnixNow(), owner};
  RETURN_IF_ERROR(store_->PutEngine(e));
  absl::MutexLock lock(&mu_);
  const v1::Engine& out = engines_[sha] = EngineOf(e);
  spdlog::info("engine '{}' stored as {} ({} bytes)", name, sha, size);
  return out;
}

uint64_t EngineStore::KeptByLocked(const std::string& owner) {
  uint64_t used = 0;
  for (const auto& [s, e] : engines_)
    if (e.owner() == owner) used += e.size_bytes();
  return used;
}

absl::Status EngineStore::Reserve(const std::string& owner, uint64_t bytes, uint64_t quota_bytes,
                                  uint64_t max_in_flight) {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(owner);
  const uint64_t mine = it == in_flight_.end() ? 0 : it->second;
  const uint64_t kept = KeptByLocked(owner);
  if (kept + mine + bytes > quota_bytes)
    return absl::ResourceExhaustedError(
        Cat("upload quota of '", owner, "' exceeded: ", kept, " bytes kept + ", mine + bytes,
            " uploading > ", quota_bytes, " (delete engines with `arbiter engines delete`)"));
  if (in_flight_total_ + bytes > max_in_flight)
    return absl::ResourceExhaustedError(Cat("uploads in progress hold ", in_flight_total_,
                                            " bytes, the coordinator's limit is ", max_in_flight,
                                            "; retry when they are done"));
  in_flight_[owner] += bytes;
  in_flight_total_ += bytes;
  return absl::OkStatus();
}

void EngineStore::Release(const std::string& owner, uint64_t bytes) {
  absl::MutexLock lock(&mu_);
  auto it = in_flight_.find(owner);
  if (it == in_flight_.end()) return;
  bytes = std::min(bytes, it->second);
  it->second -= bytes;
  in_flight_total_ -= std::min(bytes, in_flight_total_);
  if (it->second == 0) in_flight_.erase(it);
}

v1::ListEnginesResponse EngineStore::List() {
  v1::ListEnginesResponse out;
  absl::MutexLock lock(&mu_);
  for (const auto& [sha, e] : engines_) *out.add_engines() = e;
  std::sort(out.mutable_engines()->begin(), out.mutable_engines()->end(),
            [](const v1::Engine& a, const v1::Engine& b) {
              return a.uploaded_unix() < b.uploaded_unix();
            });
  return out;
}

absl::StatusOr<std::string> EngineStore::Path(const std::string& sha256) {
  if (!net::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(
        Cat("engine sha256 must be 64 lowercase hex digits, got '", sha256, "'"));
  absl::MutexLock lock(&mu_);
  if (!engines_.contains(sha256)) return absl::NotFoundError(Cat("no engine with sha256 ", sha256));
  return (std::filesystem::path(dir_) / "engines" / sha256).string();
}

absl::StatusOr<v1::Engine> EngineStore::Get(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  auto it = engines_.find(sha256);
  if (it == engines_.end()) return absl::NotFoundError(Cat("no engine with sha256 ", sha256));
  return it->second;
}

absl::Status EngineStore::Delete(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  if (!engines_.contains(sha256)) return absl::NotFoundError(Cat("no engine with sha256 ", sha256));
  RETURN_IF_ERROR(store_->DeleteEngine(sha256));
  engines_.erase(sha256);
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(dir_) / "engines" / sha256, ec);
  spdlog::info("engine {} deleted", sha256);
  return absl::OkStatus();
}

bool EngineStore::Known(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  return engines_.contains(sha256);
}

}  // namespace arbiter::coordinator

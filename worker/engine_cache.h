// Engine artifacts on a worker: fetched from the coordinator by sha256 (FetchEngine stream),
// kept in a cache directory under their hash, and verified before every use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace grpc {
class Channel;
}

namespace arbiter::worker {

class EngineCache {
 public:
  // `engine_gid` >= 0: engines run as that group (a worker running as root drops them to
  // nobody): the directory is then 0710 and each engine 0550 with that group, so that the
  // engines' user can run them and no other user can list or read them. Otherwise 0700 / 0500.
  // `cache_bytes`: the fetched artifacts kept together (least recently used go first; see
  // Evict). Temporary files of fetches that a killed worker left are removed here.
  EngineCache(std::string dir, std::shared_ptr<grpc::Channel> channel, int engine_gid = -1,
              uint64_t cache_bytes = 4ull << 30);
  // Path of a verified, executable copy of the artifact: from the cache when its hash matches,
  // otherwise downloaded (a corrupt cached copy is replaced).
  absl::StatusOr<std::string> Get(const std::string& sha256);
  // The worker id the coordinator knows this worker by (after each registration): a fetch names
  // it, and is served only while that worker holds a lease of a job that runs the engine.
  void SetWorkerId(const std::string& worker_id);

 private:
  absl::Status Fetch(const std::string& sha256, const std::string& path);
  // Removes the least recently used artifacts while they pass cache_bytes_, never `keep` and
  // never one used in the last ten minutes: an engine of a running job may be started again,
  // and the workers of `arbiter local` share the directory (the bound is then passed for a
  // while rather than a path handed out being deleted).
  void Evict(const std::string& keep);
  // Owner, group and mode of the directory or of an engine file as the class comment says.
  void Protect(const std::string& path, bool directory) const;
  const std::string dir_;
  const int engine_gid_;
  const uint64_t cache_bytes_;
  std::shared_ptr<grpc::Channel> channel_;
  absl::Mutex mu_;  // one download at a time
  mutable absl::Mutex id_mu_;
  std::string worker_id_ ABSL_GUARDED_BY(id_mu_);
};

}  // namespace arbiter::worker

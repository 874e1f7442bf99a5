// Engine artifacts on a worker: fetched from the coordinator by sha256 (FetchEngine stream),
// kept in a cache directory under their hash, and verified before every use.
#pragma once

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
  EngineCache(std::string dir, std::shared_ptr<grpc::Channel> channel);
  // Path of a verified, executable copy of the artifact: from the cache when its hash matches,
  // otherwise downloaded (a corrupt cached copy is replaced).
  absl::StatusOr<std::string> Get(const std::string& sha256);

 private:
  absl::Status Fetch(const std::string& sha256, const std::string& path);
  const std::string dir_;
  std::shared_ptr<grpc::Channel> channel_;
  absl::Mutex mu_;  // one download at a time
};

}  // namespace arbiter::worker

// The workers that registered with the coordinator: their declared threads and hash group, when
// each was last seen, and which count as connected. Not thread-safe: the Coordinator calls it
// under its lock. The clock is injectable.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "coordinator/run_handler.h"

namespace arbiter::coordinator {

struct WorkerInfo {
  std::string name;
  uint32_t threads = 0;
  std::string hash_group;  // empty: its own hash
  std::string token;       // name of the token it registered with
  uint32_t leases = 0;     // live leases it holds
  bool isolated = false;   // runs engines in namespaces (RegisterRequest.isolation)
  SteadyClock::time_point last_seen;
};

class WorkerRegistry {
 public:
  using NowFn = std::function<SteadyClock::time_point()>;
  // A worker counts as connected while it was seen within `connected_window`.
  WorkerRegistry(SteadyClock::duration connected_window, NowFn now);

  // A new worker id for `info` (last_seen set to now).
  std::string Register(WorkerInfo info);
  WorkerInfo* Find(const std::string& worker_id);
  void Touch(WorkerInfo& worker) { worker.last_seen = now_(); }
  bool Connected(const WorkerInfo& worker) const;
  bool Connected(const std::string& worker_id) const;

  size_t ConnectedWorkers() const;
  // Perft hash tables among the connected workers (workers of one hash group share one).
  size_t ConnectedHashTables() const;
  // The largest --threads among connected workers (0 when none is connected).
  uint32_t MaxThreads() const;
  // Connected workers, counting those in `waiting` (long polls) as connected.
  size_t CountConnected(const absl::flat_hash_set<std::string>& waiting) const;

 private:
  const SteadyClock::duration window_;
  const NowFn now_;
  std::mt19937_64 rng_;
  absl::flat_hash_map<std::string, WorkerInfo> workers_;
};

}  // namespace arbiter::coordinator

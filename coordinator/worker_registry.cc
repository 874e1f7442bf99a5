#include "coordinator/worker_registry.h"

#include <algorithm>
#include <cstdio>

namespace arbiter::coordinator {

WorkerRegistry::WorkerRegistry(SteadyClock::duration connected_window, NowFn now)
    : window_(connected_window), now_(std::move(now)), rng_(std::random_device{}()) {}

std::string WorkerRegistry::Register(WorkerInfo info) {
  char id[24];
  do {
    std::snprintf(id, sizeof id, "w-%016llx", static_cast<unsigned long long>(rng_()));
  } while (workers_.contains(id));
  if (info.name.empty()) info.name = id;
  info.last_seen = now_();
  workers_[id] = std::move(info);
  return id;
}

WorkerInfo* WorkerRegistry::Find(const std::string& worker_id) {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second;
}

bool WorkerRegistry::Connected(const WorkerInfo& worker) const {
  return now_() - worker.last_seen < window_;
}

bool WorkerRegistry::Connected(const std::string& worker_id) const {
  auto it = workers_.find(worker_id);
  return it != workers_.end() && Connected(it->second);
}

size_t WorkerRegistry::ConnectedWorkers() const {
  size_t n = 0;
  for (const auto& [id, w] : workers_) n += Connected(w);
  return n;
}

size_t WorkerRegistry::ConnectedHashTables() const {
  size_t own = 0;
  absl::flat_hash_set<std::string> groups;
  for (const auto& [id, w] : workers_) {
    if (!Connected(w)) continue;
    if (w.hash_group.empty())
      ++own;
    else
      groups.insert(w.hash_group);
  }
  return own + groups.size();
}

uint32_t WorkerRegistry::MaxThreads() const {
  uint32_t most = 0;
  for (const auto& [id, w] : workers_)
    if (Connected(w)) most = std::max(most, w.threads);
  return most;
}

size_t WorkerRegistry::CountConnected(const absl::flat_hash_set<std::string>& waiting) const {
  size_t n = 0;
  for (const auto& [id, w] : workers_) n += waiting.contains(id) || Connected(w);
  return n;
}

}  // namespace arbiter::coordinator

#include "coordinator/worker_registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>

#include "base/strings.h"

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

bool AllowsEnginePaths(const WorkerInfo& worker, const std::vector<std::string>& paths) {
  if (worker.engine_dirs.empty()) return true;
  for (const std::string& path : paths) {
    bool inside = false;
    for (const std::string& dir : worker.engine_dirs) {
      std::string_view d = dir;
      while (d.size() > 1 && d.back() == '/') d.remove_suffix(1);
      inside |= path.size() > d.size() && path.compare(0, d.size(), d) == 0 &&
                (d == "/" || path[d.size()] == '/');
    }
    if (!inside) return false;
  }
  return true;
}

absl::Status WorkerRegistry::CheckEnginePaths(const std::vector<std::string>& paths) const {
  if (paths.empty()) return absl::OkStatus();
  std::string dirs;
  size_t connected = 0;
  for (const auto& [id, w] : workers_) {
    if (!Connected(w)) continue;
    ++connected;
    if (AllowsEnginePaths(w, paths)) return absl::OkStatus();
    for (const std::string& d : w.engine_dirs)
      if (dirs.find(Cat(" ", d, ",")) == std::string::npos && dirs.size() < 2000)
        dirs += Cat(" ", d, ",");
  }
  if (connected == 0) return absl::OkStatus();
  if (!dirs.empty()) dirs.pop_back();
  std::string listed;
  for (const std::string& p : paths) listed += Cat(listed.empty() ? "" : ", ", p);
  return absl::FailedPreconditionError(
      Cat("no connected worker (", connected, ") allows engine path", paths.size() > 1 ? "s " : " ",
          listed, ": their --engine-dir:", dirs,
          "; upload the engine instead, or start a worker with --engine-dir"));
}

v1::ListWorkersResponse WorkerRegistry::List(bool all) const {
  v1::ListWorkersResponse out;
  std::vector<std::pair<const std::string*, const WorkerInfo*>> chosen;
  for (const auto& [id, w] : workers_)
    if (all || Connected(w)) chosen.push_back({&id, &w});
  std::sort(chosen.begin(), chosen.end(), [this](const auto& a, const auto& b) {
    const bool ca = Connected(*a.second), cb = Connected(*b.second);
    if (ca != cb) return ca;
    return std::tie(a.second->name, *a.first) < std::tie(b.second->name, *b.first);
  });
  const auto now = now_();
  for (const auto& [id, w] : chosen) {
    v1::WorkerStatus& s = *out.add_workers();
    s.set_worker_id(*id);
    s.set_name(w->name);
    s.set_token(w->token);
    s.set_version(w->version);
    s.set_threads(w->threads);
    s.set_cores(w->cores);
    s.set_isolation(w->isolation);
    for (const std::string& d : w->engine_dirs) s.add_engine_dirs(d);
    *s.mutable_engine_limits() = w->engine_limits;
    s.set_connected(Connected(*w));
    s.set_leases(w->leases);
    s.set_last_seen_seconds_ago(std::chrono::duration<double>(now - w->last_seen).count());
    s.set_hash_group(w->hash_group);
    s.set_draining(w->draining);
    for (const std::string& f : w->flags) s.add_flags(f);
  }
  return out;
}

absl::Status WorkerRegistry::Drain(const std::string& name, const std::string& worker_id,
                                   bool draining) {
  if (name.empty() == worker_id.empty())
    return absl::InvalidArgumentError("give a worker name or a worker id (one of them)");
  int matched = 0;
  for (auto& [id, w] : workers_) {
    if (worker_id.empty() ? w.name != name : id != worker_id) continue;
    w.draining = draining;
    ++matched;
  }
  if (matched == 0)
    return absl::NotFoundError(Cat("no worker ", worker_id.empty() ? "named '" : "with id '",
                                   worker_id.empty() ? name : worker_id, "'"));
  return absl::OkStatus();
}

size_t WorkerRegistry::CountConnected(const absl::flat_hash_set<std::string>& waiting) const {
  size_t n = 0;
  for (const auto& [id, w] : workers_) n += waiting.contains(id) || Connected(w);
  return n;
}

}  // namespace arbiter::coordinator

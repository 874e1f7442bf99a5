#include "coordinator/worker_registry.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>

#include "base/cpu.h"
#include "base/strings.h"
#include "proto/wire_enums.h"

namespace arbiter::coordinator {

WorkerRegistry::WorkerRegistry(SteadyClock::duration connected_window, NowFn now)
    : window_(connected_window), now_(std::move(now)), rng_(std::random_device{}()) {}

std::string WorkerRegistry::Register(WorkerInfo info) {
  char id[24];
  do {
    std::snprintf(id, sizeof id, "w-%016llx", static_cast<unsigned long long>(rng_()));
  } while (workers_.contains(id));
  if (info.name.empty()) info.name = id;
  info.last_seen = info.registered = now_();
  workers_[id] = std::move(info);
  return id;
}

bool WorkerRegistry::MakeRoom(const std::string& token, size_t cap) {
  size_t known = 0;
  for (const auto& [id, w] : workers_) known += w.token == token;
  if (known < cap) return true;
  for (auto it = workers_.begin(); it != workers_.end() && known >= cap;) {
    const WorkerInfo& w = it->second;
    if (w.token == token && w.leases == 0 && !Connected(w)) {
      workers_.erase(it++);
      --known;
    } else {
      ++it;
    }
  }
  return known < cap;
}

bool WorkerRegistry::IndependentWorkerConnected(
    const absl::flat_hash_set<std::string>& identities,
    const absl::flat_hash_set<std::string>& hash_groups,
    const std::function<bool(const std::string&, const WorkerInfo&)>& may_take) const {
  for (const auto& [id, w] : workers_) {
    if (w.draining || w.identity.empty() || identities.contains(w.identity) || !Connected(w))
      continue;
    if (!w.hash_group.empty() && hash_groups.contains(w.hash_group)) continue;
    if (may_take(id, w)) return true;
  }
  return false;
}

WorkerInfo* WorkerRegistry::Find(const std::string& worker_id) {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second;
}

void WorkerRegistry::NoteWork(WorkerInfo& worker, double nodes, double seconds, uint32_t games) {
  const auto now = now_();
  if (nodes > 0 && seconds > 0) {
    worker.recent_perft.emplace_back(now, nodes, seconds);
    while (worker.recent_perft.size() > 1024 ||
           now - std::get<0>(worker.recent_perft.front()) > kRateWindow)
      worker.recent_perft.pop_front();
  }
  if (games == 0) return;
  worker.recent_games.emplace_back(now, games);
  while (worker.recent_games.size() > 1024 || now - worker.recent_games.front().first > kRateWindow)
    worker.recent_games.pop_front();
}

double WorkerInfo::PerftNodesPerSecond() const {
  double nodes = 0, seconds = 0;
  for (const auto& [when, n, s] : recent_perft) {
    nodes += n;
    seconds += s;
  }
  return seconds > 0 ? nodes / seconds : 0;
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

bool WorkerRegistry::FillHost(const std::string& host, unsigned cores) const {
  if (host.empty()) return false;
  uint64_t threads = 0;
  for (const auto& [id, w] : workers_) {
    if (!Connected(w)) continue;
    if (w.hostname != host) return false;
    threads += w.threads;
  }
  return threads > 0 && threads >= cores;
}

bool WorkerRegistry::AllCountKeyLanes() const {
  for (const auto& [id, w] : workers_)
    if (Connected(w) && !w.perft_lanes) return false;
  return true;
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

absl::Status ValidateLabels(const google::protobuf::Map<std::string, std::string>& labels,
                            std::string_view what) {
  if (labels.size() > 16)
    return absl::InvalidArgumentError(Cat(what, ": at most 16 labels, got ", labels.size()));
  for (const auto& [key, value] : labels) {
    const bool key_ok =
        !key.empty() && key.size() <= 32 && std::all_of(key.begin(), key.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                 c == '-';
        });
    if (!key_ok)
      return absl::InvalidArgumentError(
          Cat(what, ": label key '", key.substr(0, 40), "' must be 1..32 of [a-z0-9_.-]"));
    if (value.size() > 64 || value.find_first_of(",=\n") != std::string::npos)
      return absl::InvalidArgumentError(Cat(what, ": the value of label '", key,
                                            "' must have at most 64 bytes and no ',', '=' or "
                                            "newline"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequirements(const v1::WorkerRequirements& r) {
  if (r.cpu_level() > uint32_t(kMaxCpuLevel))
    return absl::InvalidArgumentError(
        Cat("required cpu level must be 1..4 (v1..v4; 0 = any), got ", r.cpu_level()));
  if (r.threads() > 4096)
    return absl::InvalidArgumentError(
        Cat("required threads must be at most 4096, got ", r.threads()));
  return ValidateLabels(r.labels(), "required labels");
}

v1::WorkerRequirements WithEngineLevels(
    v1::WorkerRequirements requirements,
    const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines) {
  for (const v1::EngineSpec& e : engines)
    requirements.set_cpu_level(std::max(requirements.cpu_level(), e.cpu_level()));
  return requirements;
}

std::string UnmetRequirement(const WorkerInfo& w, const v1::WorkerRequirements& r) {
  if (int(r.cpu_level()) > w.cpu_level)
    return Cat("cpu level ", CpuLevelName(w.cpu_level), ", the run needs ",
               CpuLevelName(int(r.cpu_level())));
  if (r.memory_bytes() > w.memory_bytes)
    return Cat("memory ", w.memory_bytes >> 20, " MiB, the run needs ", r.memory_bytes() >> 20,
               " MiB");
  if (r.threads() > w.threads) return Cat(w.threads, " threads, the run needs ", r.threads());
  for (const auto& [key, value] : r.labels()) {
    auto it = w.labels.find(key);
    if (it == w.labels.end()) return Cat("no label ", key, ", the run needs ", key, "=", value);
    if (it->second != value)
      return Cat("label ", key, "=", it->second, ", the run needs ", key, "=", value);
  }
  return "";
}

std::string WorkerRegistry::WhyNoWorker(
    const std::function<std::string(const std::string& id, const WorkerInfo&)>& unmet) const {
  std::vector<std::pair<const std::string*, std::string>> reasons;
  size_t busy = 0;
  for (const auto& [id, w] : workers_) {
    if (!Connected(w)) continue;
    std::string why = w.draining ? std::string("draining") : unmet(id, w);
    if (why.empty() && w.leases < w.threads) return "";
    if (why.empty()) {
      ++busy;
      continue;
    }
    reasons.emplace_back(&w.name, std::move(why));
  }
  if (busy > 0)
    return Cat("the ", busy,
               busy == 1 ? " worker that can take its jobs is"
                         : " workers that can "
                           "take its jobs are",
               " busy");
  if (reasons.empty()) return "no worker is connected";
  std::sort(reasons.begin(), reasons.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  std::string out = Cat("no connected worker can take its jobs (", reasons.size(), "): ");
  const size_t named = std::min<size_t>(reasons.size(), 5);
  for (size_t i = 0; i < named; ++i)
    out += Cat(i ? "; " : "", "'", *reasons[i].first, "': ", reasons[i].second);
  if (reasons.size() > named) out += Cat("; and ", reasons.size() - named, " more");
  return out;
}

namespace {

// WorkerStatus's copies of its `worker` for readers older than it (the dashboard's scripts read
// either).
void SetDeprecatedWorkerFields(v1::WorkerStatus& s) {
  const v1::WorkerInfo& w = s.worker();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  s.set_name(w.name());
  s.set_version(w.version());
  s.set_threads(w.threads());
  s.set_cores(w.cores());
  s.set_isolation(w.engine_isolation() ? IsolationString(w.engine_isolation()) : "");
  *s.mutable_engine_dirs() = w.engine_dirs();
  *s.mutable_engine_limits() = w.engine_limits();
  s.set_hash_group(w.hash_group());
  s.set_cpu_level(w.cpu_level());
  *s.mutable_labels() = w.labels();
  s.set_hostname(w.hostname());
  s.set_memory_bytes(w.memory_bytes());
  *s.mutable_cpu_flags() = w.cpu_flags();
  s.set_perft_path(w.perft_core_path() ? PerftPathString(w.perft_core_path()) : "");
  s.set_build_toolchain(w.build_toolchain());
#pragma GCC diagnostic pop
}

}  // namespace

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
    v1::WorkerInfo& info = *s.mutable_worker();
    info.set_name(w->name);
    info.set_version(w->version);
    info.set_threads(w->threads);
    info.set_cores(w->cores);
    info.set_engine_isolation(w->isolation);
    for (const std::string& d : w->engine_dirs) info.add_engine_dirs(d);
    *info.mutable_engine_limits() = w->engine_limits;
    info.set_hash_group(w->hash_group);
    info.set_cpu_level(uint32_t(w->cpu_level));
    info.mutable_labels()->insert(w->labels.begin(), w->labels.end());
    info.set_hostname(w->hostname);
    info.set_perft_core_path(w->perft_path);
    info.set_build_toolchain(w->build_toolchain);
    info.set_memory_bytes(w->memory_bytes);
    for (const std::string& f : w->cpu_flags) info.add_cpu_flags(f);
    SetDeprecatedWorkerFields(s);
    s.set_token(w->token);
    s.set_connected(Connected(*w));
    s.set_leases(w->leases);
    s.set_last_seen_seconds_ago(std::chrono::duration<double>(now - w->last_seen).count());
    s.set_draining(w->draining);
    for (const std::string& f : w->flags) s.add_flags(f);
    s.set_nodes_per_second(w->PerftNodesPerSecond());
    // Games over the window, or over its time since registering when that is shorter.
    uint64_t games = 0;
    for (const auto& [at, n] : w->recent_games)
      if (now - at <= kRateWindow) games += n;
    const double minutes = std::min(std::chrono::duration<double>(kRateWindow).count(),
                                    std::chrono::duration<double>(now - w->registered).count()) /
                           60;
    s.set_games_per_minute(minutes > 0 ? double(games) / minutes : 0);
  }
  return out;
}

absl::flat_hash_set<std::string> WorkerRegistry::Disown(const std::string& token) {
  absl::flat_hash_set<std::string> ids;
  for (auto& [id, w] : workers_) {
    if (w.token != token) continue;
    w.token.clear();
    w.draining = true;
    ids.insert(id);
  }
  return ids;
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

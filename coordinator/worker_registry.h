// The workers that registered with the coordinator: their declared threads and hash group, when
// each was last seen, and which count as connected. Not thread-safe: the Coordinator calls it
// under its lock. The clock is injectable.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "coordinator/run_handler.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/worker.pb.h"

namespace arbiter::coordinator {

inline constexpr size_t kMaxWorkerFlags = 16;

struct WorkerInfo {
  std::string name;
  uint32_t threads = 0;
  std::string hash_group;  // empty: its own hash
  std::string token;       // name of the token it registered with
  // Its token and network host: workers that differ in either count as different workers for
  // verification, so that one token shared by a Deployment's pods verifies across pods while a
  // token's holder cannot pose as two workers from one host.
  std::string identity;
  uint32_t leases = 0;  // live leases it holds
  // 0 or 1: a result it reports while counting its next job (RegisterRequest.results_in_flight).
  uint32_t results_in_flight = 0;
  // Leases it may hold: one a thread, and one for the job whose result is on its way.
  uint32_t LeaseSlots() const { return threads + results_in_flight; }
  // Known values only (Register maps the rest to UNSPECIFIED); it confines engines when
  // IsolationConfines says so.
  v1::Isolation isolation = v1::ISOLATION_UNSPECIFIED;
  std::string version;
  uint32_t cores = 0;
  // `path` engines must lie in one of these (empty: any path).
  std::vector<std::string> engine_dirs;
  v1::EngineLimits engine_limits;
  bool draining = false;  // no new leases (DrainWorkers)
  // What runs may require of it (WorkerRequirements).
  int cpu_level = 1;
  uint64_t memory_bytes = 0;
  std::map<std::string, std::string> labels;
  std::string hostname;
  v1::PerftPath perft_path = v1::PERFT_PATH_UNSPECIFIED;
  bool perft_lanes = false;     // counts a perft job's lane of keys (RegisterRequest.perft_lanes)
  bool job_progress = false;    // heartbeats carry match and movegen progress (RegisterRequest)
  std::string build_toolchain;  // empty: it cannot build source engines
  std::vector<std::string> cpu_flags;
  // Why it is suspect (an engine's bench differed on it), newest last, at most kMaxWorkerFlags.
  std::vector<std::string> flags;
  SteadyClock::time_point last_seen;
  SteadyClock::time_point registered;
  // Its speed, from the results it delivered: the perft jobs of the last kRateWindow (time,
  // nodes it counted, its own work seconds) and the games it finished then (time, games), oldest
  // first. Its nodes per second are its summed nodes over its summed seconds, so one job that
  // its hash table answered at once does not stand for its speed.
  std::deque<std::tuple<SteadyClock::time_point, double, double>> recent_perft;
  std::deque<std::pair<SteadyClock::time_point, uint32_t>> recent_games;
  double PerftNodesPerSecond() const;
};

// How far back a worker's games per minute look.
inline constexpr std::chrono::minutes kRateWindow{5};

// Checks labels as workers declare them and runs require them (count, key and value bounds);
// `what` names the field in the error.
absl::Status ValidateLabels(const google::protobuf::Map<std::string, std::string>& labels,
                            std::string_view what);
// Checks a run's requirements (INVALID_ARGUMENT naming the bound).
absl::Status ValidateRequirements(const v1::WorkerRequirements& requirements);
// The requirements a run's engines add to the submitted ones (the highest EngineSpec.cpu_level).
v1::WorkerRequirements WithEngineLevels(
    v1::WorkerRequirements requirements,
    const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines);
// The first requirement `worker` does not meet, in words ("cpu level v2, the run needs v4"), or
// empty when it meets them all.
std::string UnmetRequirement(const WorkerInfo& worker, const v1::WorkerRequirements& requirements);

// Whether every one of `paths` lies in one of the worker's engine directories, read as text (the
// worker resolves symlinks itself before it starts an engine).
bool AllowsEnginePaths(const WorkerInfo& worker, const std::vector<std::string>& paths);

class WorkerRegistry {
 public:
  using NowFn = std::function<SteadyClock::time_point()>;
  // A worker counts as connected while it was seen within `connected_window`.
  WorkerRegistry(SteadyClock::duration connected_window, NowFn now);

  // A new worker id for `info` (last_seen set to now).
  std::string Register(WorkerInfo info);
  // Room for one more worker of `token`: forgets its disconnected workers that hold no lease
  // (a Deployment's restarted pods); false while `cap` of its workers remain known.
  bool MakeRoom(const std::string& token, size_t cap);
  WorkerInfo* Find(const std::string& worker_id);
  void Touch(WorkerInfo& worker) { worker.last_seen = now_(); }
  // A result of the worker was counted: `nodes` of perft in `seconds` of its work, or `games`.
  void NoteWork(WorkerInfo& worker, double nodes, double seconds, uint32_t games);
  bool Connected(const WorkerInfo& worker) const;
  // Whether a connected worker that is not draining could count a job independently of every
  // worker of `identities` (WorkerInfo::identity): another identity, and not sharing a perft hash
  // with one of `hash_groups` (a shared table would hand it their results).
  // `may_take` says whether that worker may take the job at all (the run's requirements).
  bool IndependentWorkerConnected(
      const absl::flat_hash_set<std::string>& identities,
      const absl::flat_hash_set<std::string>& hash_groups,
      const std::function<bool(const std::string&, const WorkerInfo&)>& may_take) const;
  bool Connected(const std::string& worker_id) const;

  size_t ConnectedWorkers() const;
  // Perft hash tables among the connected workers (workers of one hash group share one).
  size_t ConnectedHashTables() const;
  // Whether workers are connected, all report `host` (non-empty) and their threads add up to at
  // least `cores`.
  bool FillHost(const std::string& host, unsigned cores) const;
  // Whether every connected worker counts lanes of keys (RegisterRequest.perft_lanes).
  bool AllCountKeyLanes() const;
  // The largest --threads among connected workers (0 when none is connected).
  uint32_t MaxThreads() const;
  // Connected workers, counting those in `waiting` (long polls) as connected.
  size_t CountConnected(const absl::flat_hash_set<std::string>& waiting) const;
  // FAILED_PRECONDITION when workers are connected and none of them allows all of `paths`
  // (a run that none could play); OK when none is connected (the workers check again).
  absl::Status CheckEnginePaths(const std::vector<std::string>& paths) const;
  // The workers, connected ones first, each group by name; `all`: also the disconnected.
  v1::ListWorkersResponse List(bool all) const;
  // Why a run's jobs find no worker: `unmet(worker)` is empty for a worker that could take
  // them, else the reason it cannot. Empty when such a worker is connected and has a free
  // thread (it will ask soon); that they are all busy when they are; otherwise each connected
  // worker's reason (the first five named).
  std::string WhyNoWorker(
      const std::function<std::string(const std::string& id, const WorkerInfo&)>& unmet) const;
  // Sets `draining` on the workers of that name (or that id); NOT_FOUND when none matches.
  absl::Status Drain(const std::string& name, const std::string& worker_id, bool draining);
  // The workers of a revoked token: they belong to no token from now on (a token created again
  // under the name does not inherit them) and take no new leases. Returns their ids.
  absl::flat_hash_set<std::string> Disown(const std::string& token);

 private:
  const SteadyClock::duration window_;
  const NowFn now_;
  std::mt19937_64 rng_;
  absl::flat_hash_map<std::string, WorkerInfo> workers_;
};

}  // namespace arbiter::coordinator

// A stateless worker: registers with the coordinator, long-polls for jobs, runs perft jobs on
// its threads with its own hash, heartbeats while it works, and reports results (retrying until
// the coordinator acknowledges them). Drain() stops it gracefully.
//
//   Worker w({.coordinator = "127.0.0.1:50051", .threads = 2}, nullptr);
//   std::thread t([&] { w.Run(); });  ...  w.Drain(); t.join();
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "match/sandbox.h"

namespace grpc {
class ClientContext;
}
namespace prometheus {
class Registry;
}

namespace arbiter {
class PerftHash;  // engine/perft_hash.h
}  // namespace arbiter

namespace arbiter::worker {

struct WorkerOptions {
  std::string coordinator = "127.0.0.1:50051";
  int threads = 1;
  // Perft hash in MB, allocated at startup and kept across jobs; 0 = the size each job asks
  // for. A job that asks for no hash (hash_mb 0) runs without one either way.
  int hash_mb = 0;
  // A hash shared with the other workers of this process (arbiter local) instead of its own,
  // and the name of that sharing for the coordinator (RegisterRequest.hash_group).
  std::shared_ptr<PerftHash> shared_hash;
  std::string hash_group;
  std::string name;  // default: host name
  // The worker token's secret; empty = from the environment (net/client.h).
  std::string token;
  // Engine artifacts are cached here by sha256 (empty = a folder under the temp dir), up to
  // engine_cache_mb together (least recently used go).
  std::string cache_dir;
  uint64_t engine_cache_mb = 4096;
  // The box every engine process runs in (isolation already resolved: see ResolveIsolation).
  match::SandboxOptions sandbox;
  // `path` engines only from these directories (empty: any path; `arbiter local`).
  std::vector<std::string> engine_dirs;
  // What runs may require (RegisterRequest.labels and cpu_level; 0 = the CPU's own level).
  std::map<std::string, std::string> labels;
  int cpu_level = 0;
  // Source engines: built in the box under cache_dir/builds, kept up to build_cache_mb, each
  // build killed after build_timeout_seconds or when its tree passes build_disk_mb.
  // `build_sources` false, or no compiler found: the
  // worker registers without a toolchain and gets no job of a source engine.
  bool build_sources = true;
  uint64_t build_cache_mb = 4096;
  double build_timeout_seconds = 900;
  uint64_t build_disk_mb = 4096;
  // An engine's bench (declared signatures, the speed of scaled clocks) is killed after this.
  double bench_timeout_seconds = 120;
  // This worker's speed for scaled clocks instead of measuring it (tests; 0: measure).
  uint64_t measured_nps = 0;
  double wait_seconds = 20;   // long-poll time
  double grace_seconds = 30;  // after Drain(): time to finish the current job before releasing it
};

class WorkerMetrics;

class Worker {
 public:
  // `registry` may be null (no metrics).
  Worker(const WorkerOptions& options, prometheus::Registry* registry);
  ~Worker();
  // Works until Drain(); returns OK once drained.
  absl::Status Run();
  // Stop taking jobs; the current job gets the grace period, then is released.
  void Drain();
  uint64_t jobs_completed() const { return jobs_completed_.load(); }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<uint64_t> jobs_completed_{0};
};

}  // namespace arbiter::worker

// Group commit of accepted results: completions queue up while the previous group is being
// written, and each group is one SQLite transaction (fsync'd) before any of its callers hears
// OK. The queue is guarded by the Coordinator's lock (passed in), so that a completion is
// accepted, queued and found again (duplicates) in one critical section; the write itself runs on
// the log's own thread, outside the lock.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/run_handler.h"
#include "coordinator/store.h"

namespace arbiter::coordinator {

class CommitLog {
 public:
  using Callback = std::function<void(absl::StatusOr<v1::CompleteJobResponse>)>;
  struct Entry {
    uint64_t job_id = 0, run_id = 0;
    const RunHandler* handler = nullptr;  // serializes the result; lives as long as its run
    Result result;
    std::vector<Callback> callbacks;
  };
  using Deferred = std::vector<std::function<void()>>;
  struct Hooks {
    // Under the lock, before a group is written: run updates to write with it.
    std::function<std::vector<RunUpdate>(const std::vector<Entry>&)> before;
    // Under the lock, after the group was written (or failed with `status`): applies it, fills
    // run updates to write next and callbacks to call after the lock is released.
    std::function<void(std::vector<Entry>&, const absl::Status& status, double seconds,
                       std::vector<RunUpdate>& finished, Deferred& deferred)>
        after;
  };

  CommitLog(absl::Mutex& mu, Store& store, Hooks hooks);
  ~CommitLog();  // writes what is queued, then stops

  void Add(Entry entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { queue_.push_back(std::move(entry)); }
  // The queued entry for (job, lease), or null.
  Entry* Find(uint64_t job_id, uint64_t lease_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

 private:
  void Loop();
  absl::Mutex& mu_;
  Store& store_;
  const Hooks hooks_;
  std::vector<Entry> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace arbiter::coordinator

#include "coordinator/commit_log.h"

#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

CommitLog::CommitLog(absl::Mutex& mu, Store& store, Hooks hooks)
    : mu_(mu), store_(store), hooks_(std::move(hooks)) {
  thread_ = std::thread([this] { Loop(); });
}

CommitLog::~CommitLog() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

CommitLog::Entry* CommitLog::Find(uint64_t job_id, uint64_t lease_id) {
  for (Entry& e : queue_)
    if (e.job_id == job_id && e.result.lease_id == lease_id) return &e;
  return nullptr;
}

void CommitLog::Loop() {
  auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !queue_.empty(); };
  for (;;) {
    std::vector<Entry> batch;
    std::vector<RunUpdate> started;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work));
      if (queue_.empty() && stop_) return;
      batch.swap(queue_);
      started = hooks_.before(batch);
    }
    std::vector<StoredResult> rows;
    rows.reserve(batch.size());
    for (const Entry& e : batch)
      rows.push_back({e.job_id, e.run_id, e.result.worker_id, e.result.worker_name,
                      e.result.lease_id, e.result.seconds, e.handler->SerializeResult(e.result),
                      e.result.token_name});
    const auto t0 = SteadyClock::now();
    const absl::Status st = store_.Commit(rows, started);
    const double seconds = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    std::vector<RunUpdate> finished;
    std::vector<std::function<void()>> deferred;
    {
      absl::MutexLock lock(&mu_);
      hooks_.after(batch, st, seconds, finished, deferred);
    }
    if (!st.ok()) spdlog::error("commit of {} results failed: {}", batch.size(), st.ToString());
    if (!finished.empty()) {
      absl::Status fs = store_.Commit({}, finished);
      if (!fs.ok()) spdlog::error("recording finished runs failed: {}", fs.ToString());
    }
    for (auto& f : deferred) f();
  }
}

}  // namespace arbiter::coordinator

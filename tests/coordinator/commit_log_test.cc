// CommitLog on its own, on a real Store in a temporary directory: queued results are written in
// groups, each with the run updates its `before` hook asks for, `after` sees them written, the
// updates it returns are written next and its deferred calls run once the lock is released; a
// queued entry is found until it is written; the destructor writes what is still queued.
#include "coordinator/commit_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "coordinator/perft_run.h"

namespace arbiter::coordinator {
namespace {

namespace fs = std::filesystem;

class CommitLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "arbiter-commit-log-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    StoredRun run;
    run.kind = v1::RUN_KIND_PERFT;
    run.state = v1::RUN_STATE_QUEUED;
    std::vector<StoredJob> jobs = {{0, 0, "a"}, {0, 0, "b"}, {0, 0, "c"}};
    ASSERT_TRUE(store_->CreateRun(run, jobs).ok());
    run_id_ = run.id;
    // A perft run's handler serializes results as PerftJobResult.
    absl::StatusOr<std::unique_ptr<RunHandler>> handler = LoadPerftRun("");
    ASSERT_TRUE(handler.ok()) << handler.status();
    handler_ = std::move(*handler);
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  CommitLog::Entry Entry(uint64_t job_id, uint64_t lease_id, uint64_t count) {
    CommitLog::Entry e;
    e.job_id = job_id;
    e.run_id = run_id_;
    e.handler = handler_.get();
    e.result.worker_id = "w-1";
    e.result.worker_name = "pod";
    e.result.lease_id = lease_id;
    e.result.seconds = 0.5;
    e.result.counts = {count};
    return e;
  }

  std::string dir_;
  std::unique_ptr<Store> store_;
  uint64_t run_id_ = 0;
  std::unique_ptr<RunHandler> handler_;
};

TEST_F(CommitLogTest, AGroupIsWrittenWithItsRunUpdatesBeforeItsCallersHear) {
  absl::Mutex mu;
  std::vector<size_t> group_sizes;  // guarded by mu
  std::vector<uint64_t> written;    // jobs `after` saw, guarded by mu
  absl::Status after_status = absl::UnknownError("not called");
  absl::Notification deferred_ran;
  bool lock_free_in_deferred = false;
  CommitLog::Hooks hooks;
  hooks.before = [&](const std::vector<CommitLog::Entry>& batch) {
    group_sizes.push_back(batch.size());
    return std::vector<RunUpdate>{{run_id_, v1::RUN_STATE_RUNNING, 1234, 0, "", ""}};
  };
  hooks.after = [&](std::vector<CommitLog::Entry>& batch, const absl::Status& status, double,
                    std::vector<RunUpdate>& finished, CommitLog::Deferred& deferred) {
    after_status = status;
    // The results are in the store by now.
    absl::StatusOr<std::vector<StoredResult>> rows = store_->LoadResults(run_id_);
    for (const CommitLog::Entry& e : batch) {
      bool found = false;
      for (const StoredResult& r : *rows) found |= r.job_id == e.job_id;
      if (found) written.push_back(e.job_id);
      for (auto& callback : e.callbacks)
        deferred.push_back([callback] { callback(v1::CompleteJobResponse()); });
    }
    if (written.size() == 3)
      finished.push_back({run_id_, v1::RUN_STATE_SUCCEEDED, 0, 99, "done", "final"});
    const bool all_written = written.size() == 3;
    deferred.push_back([&, all_written] {
      lock_free_in_deferred = mu.TryLock();
      if (lock_free_in_deferred) mu.Unlock();
      if (all_written) deferred_ran.Notify();
    });
  };
  {
    CommitLog log(mu, *store_, hooks);
    int callbacks = 0;
    {
      absl::MutexLock lock(&mu);
      for (uint64_t job = 1; job <= 3; ++job) {
        CommitLog::Entry e = Entry(job, 10 + job, 1000 * job);
        e.callbacks.push_back([&](absl::StatusOr<v1::CompleteJobResponse>) { ++callbacks; });
        log.Add(std::move(e));
      }
      // Queued under the lock: the log's thread cannot have taken them yet.
      ASSERT_NE(log.Find(2, 12), nullptr);
      EXPECT_EQ(log.Find(2, 99), nullptr) << "another lease";
    }
    ASSERT_TRUE(deferred_ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
    absl::MutexLock lock(&mu);
    EXPECT_EQ(log.Find(2, 12), nullptr) << "written: no longer queued";
    EXPECT_EQ(callbacks, 3);
  }
  EXPECT_TRUE(after_status.ok()) << after_status;
  EXPECT_TRUE(lock_free_in_deferred) << "deferred calls run outside the lock";
  size_t total = 0;
  for (size_t n : group_sizes) total += n;
  EXPECT_EQ(total, 3u);
  EXPECT_EQ(group_sizes[0], 3u) << "all three were queued before the first group";

  absl::StatusOr<std::vector<StoredResult>> rows = store_->LoadResults(run_id_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  v1::PerftJobResult counts;
  ASSERT_TRUE(counts.ParseFromString((*rows)[2].result));
  ASSERT_EQ(counts.counts_size(), 1);
  EXPECT_EQ(counts.counts(0), 3000u);
  EXPECT_EQ((*rows)[2].lease_id, 13u);
  EXPECT_EQ((*rows)[2].worker_name, "pod");
  const StoredRun run = (*store_->LoadRuns())[0];
  EXPECT_EQ(run.state, v1::RUN_STATE_SUCCEEDED) << "the update `after` returned was written";
  EXPECT_DOUBLE_EQ(run.started_unix, 1234) << "the update `before` returned was written";
  EXPECT_DOUBLE_EQ(run.finished_unix, 99);
  EXPECT_EQ(run.result, "final");
}

TEST_F(CommitLogTest, TheDestructorWritesWhatIsStillQueued) {
  absl::Mutex mu;
  int groups = 0;
  CommitLog::Hooks hooks;
  hooks.before = [&](const std::vector<CommitLog::Entry>&) {
    ++groups;
    return std::vector<RunUpdate>{};
  };
  hooks.after = [](std::vector<CommitLog::Entry>&, const absl::Status&, double,
                   std::vector<RunUpdate>&, CommitLog::Deferred&) {};
  {
    CommitLog log(mu, *store_, hooks);
    absl::MutexLock lock(&mu);
    log.Add(Entry(1, 5, 42));
    log.Add(Entry(2, 6, 43));
  }  // the lock is released first, then the log is destroyed
  absl::StatusOr<std::vector<StoredResult>> rows = store_->LoadResults(run_id_);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].job_id, 1u);
  EXPECT_EQ((*rows)[1].job_id, 2u);
  EXPECT_GE(groups, 1);
}

}  // namespace
}  // namespace arbiter::coordinator

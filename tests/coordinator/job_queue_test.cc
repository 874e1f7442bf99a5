// JobQueue on its own: queue order, re-queues at the front, leases and their expiry on an
// injected clock, the choice of run by priority and owner load, lanes and stealing, and the
// rule that a verified job goes to different workers.
#include "coordinator/job_queue.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace arbiter::coordinator {
namespace {

// A clock the test moves by hand.
struct FakeClock {
  SteadyClock::time_point now{};
  JobQueue::NowFn Fn() {
    return [this] { return now; };
  }
};

std::unique_ptr<Job> MakeJob(uint64_t id, uint64_t run_id, int want = 1, uint32_t lane = kNoLane) {
  auto job = std::make_unique<Job>();
  job->id = id;
  job->run_id = run_id;
  job->want = want;
  job->lane = lane;
  return job;
}

// No lanes: the worker's lane is never asked for.
uint32_t NoLane(uint64_t) { return kNoLane; }

// The ids `worker` takes until the queue has nothing for it.
std::vector<uint64_t> TakeAll(JobQueue& q, const std::string& worker = "w1") {
  std::vector<uint64_t> ids;
  while (Job* job = q.Take(worker, "", NoLane)) ids.push_back(job->id);
  return ids;
}

TEST(JobQueueTest, JobsComeOutInOrderAndARequeuedJobComesFirst) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  for (uint64_t id = 1; id <= 3; ++id) q.Add(MakeJob(id, 7));
  EXPECT_TRUE(q.HasReady());
  Job* first = q.Take("w1", "", NoLane);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->id, 1u);
  q.Requeue(1);
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_FALSE(q.HasReady());
  EXPECT_EQ(q.Take("w1", "", NoLane), nullptr);
}

TEST(JobQueueTest, UnreadyDropsOneEntryAndFindKnowsEveryJob) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7));
  q.Add(MakeJob(2, 7, /*want=*/2));
  q.Unready(2);
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{1, 2}));
  ASSERT_NE(q.Find(2), nullptr);
  EXPECT_EQ(q.Find(2)->want, 2);
  EXPECT_EQ(q.Find(99), nullptr);
}

TEST(JobQueueTest, ClosedJobsAreSkippedAndForgotten) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7)).done = true;
  q.Add(MakeJob(2, 7)).cancelled = true;
  q.Add(MakeJob(3, 7));
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{3}));
  EXPECT_FALSE(q.HasReady());
}

TEST(JobQueueTest, LeasesExpireOnTheClockAndTheirJobsComeBackFirst) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7));
  q.Add(MakeJob(2, 7));
  Job* job = q.Take("w1", "t1", NoLane);
  ASSERT_NE(job, nullptr);
  const Lease lease = q.Grant(*job, "w1", "t1");
  EXPECT_NE(lease.id, 0u);
  EXPECT_EQ(q.LeasesOf(7), 1u);
  EXPECT_EQ(JobQueue::LeaseIndex(*job, lease.id), 0u);
  EXPECT_EQ(JobQueue::LeaseIndex(*job, lease.id + 2), 1u) << "no such lease: leases.size()";
  EXPECT_DOUBLE_EQ(q.lease_seconds(), 10);

  clock.now += std::chrono::seconds(9);
  q.Extend(*job, 0);  // now 9 s + 10 s
  clock.now += std::chrono::seconds(5);
  EXPECT_TRUE(q.Expire().empty()) << "extended at 9 s: it lasts to 19 s";
  clock.now += std::chrono::seconds(6);
  const auto expired = q.Expire();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first->id, 1u);
  EXPECT_EQ(expired[0].second.id, lease.id);
  EXPECT_EQ(expired[0].second.worker_id, "w1");
  EXPECT_TRUE(job->leases.empty());
  EXPECT_EQ(q.LeasesOf(7), 0u);
  EXPECT_TRUE(JobQueue::WasIssued(*job, lease.id));
  EXPECT_FALSE(JobQueue::WasIssued(*job, lease.id + 2));
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{1, 2}));
}

TEST(JobQueueTest, RemoveLeaseSaysWhenTheLastOneIsGone) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  Job& job = q.Add(MakeJob(1, 7, /*want=*/2));
  q.Grant(job, "w1", "");
  q.Grant(job, "w2", "");
  EXPECT_EQ(q.LeasesOf(7), 2u);
  EXPECT_FALSE(q.RemoveLease(job, 0));
  EXPECT_EQ(job.leases[0].worker_id, "w2");
  EXPECT_TRUE(q.RemoveLease(job, 0));
  EXPECT_EQ(q.LeasesOf(7), 0u);
  q.Grant(job, "w3", "");
  q.Grant(job, "w4", "");
  q.ClearLeases(job);
  EXPECT_TRUE(job.leases.empty());
  EXPECT_EQ(q.LeasesOf(7), 0u);
  clock.now += std::chrono::seconds(60);
  EXPECT_TRUE(q.Expire().empty()) << "cleared leases do not expire";
}

TEST(JobQueueTest, AVerifiedJobGoesToAnotherWorkerAndAnotherIdentity) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7, /*want=*/2));
  Job* job = q.Take("w1", "host-a", NoLane);
  ASSERT_NE(job, nullptr);
  q.Grant(*job, "w1", "host-a");
  EXPECT_TRUE(JobQueue::HeldBy(*job, "w1", ""));
  EXPECT_TRUE(JobQueue::HeldBy(*job, "w9", "host-a")) << "same identity";
  EXPECT_FALSE(JobQueue::HeldBy(*job, "w2", "host-b"));
  EXPECT_EQ(q.Take("w1", "host-a", NoLane), nullptr);
  EXPECT_EQ(q.Take("w2", "host-a", NoLane), nullptr) << "another worker of the same identity";
  Job* second = q.Take("w2", "host-b", NoLane);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->id, 1u);
}

TEST(JobQueueTest, HigherPriorityFirstThenTheLeastLoadedOwner) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.SetRun(1, "alice", 0, 100);
  q.SetRun(2, "bob", 0, 100);
  q.SetRun(3, "carol", 1, 100);
  for (uint64_t i = 0; i < 4; ++i) {
    q.Add(MakeJob(100 + i, 1));
    q.Add(MakeJob(200 + i, 2));
  }
  q.Add(MakeJob(300, 3));
  auto take = [&] {
    Job* job = q.Take("w", "", NoLane);
    EXPECT_NE(job, nullptr);
    q.Grant(*job, "w", "");
    return job->run_id;
  };
  EXPECT_EQ(take(), 3u) << "priority 1 first";
  // Equal owners alternate: each lease makes its owner the more loaded one.
  std::vector<uint64_t> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(take());
  EXPECT_EQ(runs, (std::vector<uint64_t>{1, 2, 1, 2}));
}

TEST(JobQueueTest, ThroughputWeighsAnOwnersShare) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.SetRun(1, "alice", 0, 200);
  q.SetRun(2, "bob", 0, 100);
  for (uint64_t i = 0; i < 20; ++i) {
    q.Add(MakeJob(100 + i, 1));
    q.Add(MakeJob(200 + i, 2));
  }
  int alice = 0, bob = 0;
  for (int i = 0; i < 9; ++i) {
    Job* job = q.Take("w", "", NoLane);
    ASSERT_NE(job, nullptr);
    q.Grant(*job, "w", "");
    (job->run_id == 1 ? alice : bob)++;
  }
  EXPECT_EQ(alice, 6);
  EXPECT_EQ(bob, 3);
}

TEST(JobQueueTest, RemovedRunGivesNoMoreJobs) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7));
  q.Add(MakeJob(2, 8));
  q.RemoveRun(7);
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{2}));
  q.Requeue(1);  // its run is gone: not queued again
  EXPECT_FALSE(q.HasReady());
}

TEST(JobQueueTest, EligibilityFiltersJobsAndRuns) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7));
  q.Add(MakeJob(2, 7));
  q.Add(MakeJob(3, 8));
  Job* job = q.Take("w", "", NoLane, [](const Job& j) { return j.id == 2; });
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 2u);
  job = q.Take("w", "", NoLane, {}, [](uint64_t run) { return run == 8; });
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 3u);
  EXPECT_EQ(q.Take("w", "", NoLane, {}, [](uint64_t run) { return run == 8; }), nullptr);
  EXPECT_EQ(TakeAll(q), (std::vector<uint64_t>{1}));
}

TEST(JobQueueTest, AWorkerTakesItsLaneThenStealsTheFarEndOfTheFullestLane) {
  FakeClock clock;
  JobQueue q(10, clock.Fn());
  q.Add(MakeJob(1, 7, 1, /*lane=*/0));
  q.Add(MakeJob(2, 7, 1, 0));
  q.Add(MakeJob(3, 7, 1, 1));
  q.Add(MakeJob(4, 7, 1, 1));
  q.Add(MakeJob(5, 7, 1, 1));
  q.Add(MakeJob(6, 7, 1, 1));
  auto lane = [](uint32_t l) { return [l](uint64_t) { return l; }; };
  Job* job = q.Take("a", "", lane(1));
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 3u) << "the first job of its own lane";
  // Lane 2 has no jobs: it steals the last job of the fullest lane (lane 1: 4, 5 and 6 queued).
  job = q.Take("c", "", lane(2));
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 6u);
  // A steal the coordinator refuses leaves the worker without a job.
  EXPECT_EQ(q.Take("c", "", lane(2), {}, {},
                   [](const Job&, uint64_t queued) { return queued >= kStealMinQueued; }),
            nullptr);
  job = q.Take("b", "", lane(0));
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->id, 1u);
}

}  // namespace
}  // namespace arbiter::coordinator

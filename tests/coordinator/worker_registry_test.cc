// WorkerRegistry on its own, on an injected clock: registration, the connected window, hash
// tables and hosts, room per token, speed over the rate window, draining, independence for
// verification, engine directories and run requirements.
#include "coordinator/worker_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace arbiter::coordinator {
namespace {

using std::chrono::seconds;

class WorkerRegistryTest : public ::testing::Test {
 protected:
  // Connected while seen within the last 30 s.
  WorkerRegistry registry_{seconds(30), [this] { return now_; }};
  SteadyClock::time_point now_{};

  std::string Add(const std::string& name, uint32_t threads = 1, const std::string& group = "",
                  const std::string& identity = "") {
    WorkerInfo w;
    w.name = name;
    w.threads = threads;
    w.hash_group = group;
    w.identity = identity;
    w.token = "tok";
    return registry_.Register(w);
  }
};

TEST_F(WorkerRegistryTest, RegisterGivesDistinctIdsAndNamesNamelessWorkersAfterTheirId) {
  const std::string a = Add("alpha", 4);
  const std::string b = Add("");
  EXPECT_NE(a, b);
  ASSERT_NE(registry_.Find(a), nullptr);
  EXPECT_EQ(registry_.Find(a)->name, "alpha");
  EXPECT_EQ(registry_.Find(a)->threads, 4u);
  EXPECT_EQ(registry_.Find(b)->name, b);
  EXPECT_EQ(registry_.Find("w-nobody"), nullptr);
}

TEST_F(WorkerRegistryTest, AWorkerIsConnectedWithinTheWindowAndTouchRenewsIt) {
  const std::string a = Add("a", 2), b = Add("b", 8);
  EXPECT_EQ(registry_.ConnectedWorkers(), 2u);
  EXPECT_EQ(registry_.MaxThreads(), 8u);
  now_ += seconds(20);
  registry_.Touch(*registry_.Find(a));
  now_ += seconds(15);  // a seen 15 s ago, b 35 s ago
  EXPECT_TRUE(registry_.Connected(a));
  EXPECT_FALSE(registry_.Connected(b));
  EXPECT_EQ(registry_.ConnectedWorkers(), 1u);
  EXPECT_EQ(registry_.MaxThreads(), 2u);
  EXPECT_EQ(registry_.CountConnected({b}), 2u) << "a long poll counts as connected";
  EXPECT_FALSE(registry_.Connected("w-nobody"));
  EXPECT_EQ(registry_.List(false).workers_size(), 1);
  const v1::ListWorkersResponse all = registry_.List(true);
  ASSERT_EQ(all.workers_size(), 2);
  EXPECT_EQ(all.workers(0).worker().name(), "a") << "connected ones first";
  EXPECT_TRUE(all.workers(0).connected());
  EXPECT_FALSE(all.workers(1).connected());
  EXPECT_DOUBLE_EQ(all.workers(1).last_seen_seconds_ago(), 35);
}

TEST_F(WorkerRegistryTest, WorkersOfOneHashGroupShareOneTable) {
  Add("a", 1, "host-1");
  Add("b", 1, "host-1");
  Add("c", 1, "host-2");
  Add("d");
  Add("e");
  EXPECT_EQ(registry_.ConnectedHashTables(), 4u);  // host-1, host-2, d, e
}

TEST_F(WorkerRegistryTest, FillHostNeedsEveryConnectedWorkerOnTheHostAndEnoughThreads) {
  WorkerInfo w;
  w.threads = 2;
  w.hostname = "box";
  registry_.Register(w);
  EXPECT_FALSE(registry_.FillHost("box", 4));
  registry_.Register(w);
  EXPECT_TRUE(registry_.FillHost("box", 4));
  EXPECT_FALSE(registry_.FillHost("", 4));
  w.hostname = "elsewhere";
  registry_.Register(w);
  EXPECT_FALSE(registry_.FillHost("box", 4));
}

TEST_F(WorkerRegistryTest, AllCountKeyLanesOnlyWhenEveryConnectedWorkerDoes) {
  WorkerInfo w;
  w.perft_lanes = true;
  registry_.Register(w);
  EXPECT_TRUE(registry_.AllCountKeyLanes());
  w.perft_lanes = false;
  registry_.Register(w);
  EXPECT_FALSE(registry_.AllCountKeyLanes());
  now_ += seconds(31);  // both gone: nobody left to object
  EXPECT_TRUE(registry_.AllCountKeyLanes());
}

TEST_F(WorkerRegistryTest, MakeRoomForgetsOnlyDisconnectedIdleWorkersOfTheToken) {
  const std::string a = Add("a"), b = Add("b");
  EXPECT_TRUE(registry_.MakeRoom("tok", 3));
  EXPECT_FALSE(registry_.MakeRoom("tok", 2)) << "both connected";
  EXPECT_TRUE(registry_.MakeRoom("other", 1));
  now_ += seconds(31);
  registry_.Find(a)->leases = 1;  // still holds a lease: kept
  EXPECT_TRUE(registry_.MakeRoom("tok", 2));
  EXPECT_NE(registry_.Find(a), nullptr);
  EXPECT_EQ(registry_.Find(b), nullptr);
}

TEST_F(WorkerRegistryTest, SpeedIsSummedNodesOverSummedSecondsWithinTheRateWindow) {
  const std::string a = Add("a");
  WorkerInfo& w = *registry_.Find(a);
  registry_.NoteWork(w, 1e9, 10, 0);
  now_ += std::chrono::minutes(3);
  registry_.NoteWork(w, 1e6, 0.001, 0);  // a hash hit: fast, but small
  EXPECT_NEAR(w.PerftNodesPerSecond(), (1e9 + 1e6) / 10.001, 1);
  now_ += std::chrono::minutes(3);  // the first job is now 6 minutes old
  registry_.NoteWork(w, 3e8, 1, 4);
  EXPECT_NEAR(w.PerftNodesPerSecond(), (1e6 + 3e8) / 1.001, 1);
  ASSERT_EQ(w.recent_games.size(), 1u);
  EXPECT_EQ(w.recent_games[0].second, 4u);
}

TEST_F(WorkerRegistryTest, DrainByNameOrIdAndRefuseBothOrNeither) {
  const std::string a = Add("pod"), b = Add("pod"), c = Add("other");
  EXPECT_TRUE(registry_.Drain("pod", "", true).ok());
  EXPECT_TRUE(registry_.Find(a)->draining);
  EXPECT_TRUE(registry_.Find(b)->draining);
  EXPECT_FALSE(registry_.Find(c)->draining);
  EXPECT_TRUE(registry_.Drain("", a, false).ok());
  EXPECT_FALSE(registry_.Find(a)->draining);
  EXPECT_TRUE(registry_.Find(b)->draining);
  EXPECT_EQ(registry_.Drain("nobody", "", true).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_.Drain("pod", a, true).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry_.Drain("", "", true).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkerRegistryTest, AnIndependentWorkerHasAnotherIdentityAndAnotherHashGroup) {
  const auto any = [](const std::string&, const WorkerInfo&) { return true; };
  Add("a", 1, "g1", "tok@host-a");
  EXPECT_FALSE(registry_.IndependentWorkerConnected({"tok@host-a"}, {}, any));
  const std::string b = Add("b", 1, "g1", "tok@host-b");
  EXPECT_FALSE(registry_.IndependentWorkerConnected({"tok@host-a"}, {"g1"}, any))
      << "b shares a's table";
  EXPECT_TRUE(registry_.IndependentWorkerConnected({"tok@host-a"}, {}, any));
  EXPECT_FALSE(registry_.IndependentWorkerConnected(
      {"tok@host-a"}, {}, [](const std::string&, const WorkerInfo&) { return false; }));
  registry_.Find(b)->draining = true;
  EXPECT_FALSE(registry_.IndependentWorkerConnected({"tok@host-a"}, {}, any));
}

TEST_F(WorkerRegistryTest, EnginePathsMustLieInAWorkersEngineDirectories) {
  WorkerInfo w;
  w.engine_dirs = {"/opt/engines/"};
  EXPECT_TRUE(AllowsEnginePaths(w, {"/opt/engines/sf"}));
  EXPECT_FALSE(AllowsEnginePaths(w, {"/opt/engines-evil/sf"}));
  EXPECT_FALSE(AllowsEnginePaths(w, {"/opt/engines"}));
  EXPECT_FALSE(AllowsEnginePaths(w, {"/opt/engines/sf", "/usr/bin/sf"}));
  EXPECT_TRUE(AllowsEnginePaths(WorkerInfo(), {"/anywhere"}));

  EXPECT_TRUE(registry_.CheckEnginePaths({"/usr/bin/sf"}).ok()) << "nobody connected to ask";
  registry_.Register(w);
  const absl::Status refused = registry_.CheckEnginePaths({"/usr/bin/sf"});
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("/opt/engines/"), std::string::npos) << refused.message();
  EXPECT_TRUE(registry_.CheckEnginePaths({"/opt/engines/sf"}).ok());
}

TEST_F(WorkerRegistryTest, UnmetRequirementNamesTheFirstOneMissing) {
  WorkerInfo w;
  w.cpu_level = 2;
  w.threads = 4;
  w.memory_bytes = uint64_t{8} << 30;
  w.labels = {{"zone", "eu"}};
  v1::WorkerRequirements r;
  EXPECT_EQ(UnmetRequirement(w, r), "");
  r.set_threads(8);
  EXPECT_EQ(UnmetRequirement(w, r), "4 threads, the run needs 8");
  r.set_threads(4);
  (*r.mutable_labels())["zone"] = "us";
  EXPECT_EQ(UnmetRequirement(w, r), "label zone=eu, the run needs zone=us");
  r.set_cpu_level(4);
  EXPECT_EQ(UnmetRequirement(w, r).rfind("cpu level", 0), 0u) << UnmetRequirement(w, r);

  EXPECT_TRUE(ValidateRequirements(v1::WorkerRequirements()).ok());
  v1::WorkerRequirements bad;
  bad.set_cpu_level(5);
  EXPECT_EQ(ValidateRequirements(bad).code(), absl::StatusCode::kInvalidArgument);
  google::protobuf::Map<std::string, std::string> labels;
  labels["Zone"] = "eu";
  EXPECT_EQ(ValidateLabels(labels, "labels").code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(WorkerRegistryTest, WhyNoWorkerSaysBusyOrNamesEachReason) {
  EXPECT_EQ(registry_.WhyNoWorker([](const std::string&, const WorkerInfo&) { return ""; }),
            "no worker is connected");
  const std::string a = Add("a", 1);
  const auto none = [](const std::string&, const WorkerInfo&) { return std::string(); };
  EXPECT_EQ(registry_.WhyNoWorker(none), "") << "a has a free thread";
  registry_.Find(a)->leases = 1;
  EXPECT_EQ(registry_.WhyNoWorker(none), "the 1 worker that can take its jobs is busy");
  const std::string why = registry_.WhyNoWorker(
      [](const std::string&, const WorkerInfo&) { return std::string("too slow"); });
  EXPECT_EQ(why, "no connected worker can take its jobs (1): 'a': too slow");
}

}  // namespace
}  // namespace arbiter::coordinator

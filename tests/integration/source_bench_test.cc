// Engines built from source on a real coordinator and worker processes, each in its engine box:
// every worker builds the tree for its own CPU level, the builds' bench signatures are compared
// across workers (a worker whose build counts otherwise takes no more of the run's jobs, and the
// run says why), and a worker without a toolchain (--no-build) gets no job of a source engine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/strings.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/arbiter/v1/worker.pb.h"
#include "tests/integration/process.h"
#include "tests/integration/tokens.h"

namespace arbiter {
namespace {
namespace fs = std::filesystem;

using testing::Count;
using testing::NumberAfter;
using testing::Process;
using testing::RunCommand;

const fs::path kTrees = fs::path(ARBITER_PERFT_DATA).parent_path() / "source_engines";

class SourceBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunCommand("command -v cc && command -v make").status != 0)
      GTEST_FAIL() << "no cc or make here"
                   << " (scripts/install-deps.sh installs it)";
    dir_ = fs::temp_directory_path() / Cat("arbiter-source-bench-", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    server_ = Process::Start({ARBITER_BINARY, "coordinator", "--listen", "127.0.0.1:0", "--data",
                              (dir_ / "data").string(), "--admin-token-file",
                              testing::AdminTokenFile(dir_, admin_secret_)},
                             (dir_ / "coordinator.log").string());
    ASSERT_TRUE(server_);
    auto line = server_->ReadLineWith("listening on port", 60);
    ASSERT_TRUE(line) << "coordinator did not start";
    port_ = NumberAfter(*line, "listening on port ");
    // Two builders for two CPU levels, and one worker that builds nothing.
    const std::vector<std::vector<std::string>> extra = {
        {"--cpu-level", "v1"}, {"--cpu-level", "v2"}, {"--no-build"}};
    for (size_t i = 0; i < extra.size(); ++i) {
      const std::string n = Cat("w", i + 1);
      const auto token = dir_ / (n + ".token");
      const grpc::Status created =
          testing::CreateTokenFile(Address(), admin_secret_, n, v1::ROLE_WORKER, token);
      ASSERT_TRUE(created.ok()) << created.error_message();
      std::vector<std::string> argv = {ARBITER_BINARY,   "--token-file",
                                       token.string(),   "worker",
                                       "--coordinator",  Address(),
                                       "--name",         n,
                                       "--wait-seconds", "1",
                                       "--cache",        (dir_ / (n + "-cache")).string()};
      argv.insert(argv.end(), extra[i].begin(), extra[i].end());
      workers_.push_back(Process::Start(argv, (dir_ / (n + ".log")).string()));
      ASSERT_TRUE(workers_.back()->ReadLineWith("health on port", 60));
    }
  }
  void TearDown() override {
    workers_.clear();
    server_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  std::string Address() const { return Cat("127.0.0.1:", port_); }
  testing::CommandOutput Arbiter(const std::string& args) {
    return RunCommand(Cat(ARBITER_BINARY, " ", args, " --coordinator ", Address(), " 2>&1"));
  }

  fs::path dir_;
  std::string admin_secret_;
  std::unique_ptr<Process> server_;
  std::vector<std::unique_ptr<Process>> workers_;
  int port_ = 0;
};

TEST_F(SourceBenchTest, ABuildWhoseBenchDiffersTakesNoMoreJobsAndTheRunSaysWhy) {
  // The tiny engine, whose bench counts one node more when built for x86-64 (level v1).
  const fs::path tree = dir_ / "tree";
  fs::copy(kTrees / "good", tree, fs::copy_options::recursive);
  std::ofstream(tree / "Makefile") << "engine: engine.c\n\t$(CC) -O2 -DBENCH_OFFSET=$(if $(filter "
                                      "v1,$(ARBITER_CPU_LEVEL)),1,0) -o engine engine.c\n";
  testing::CommandOutput workers = Arbiter("workers");
  EXPECT_EQ(Count(workers.text, "builds: yes"), 2u) << workers.text;
  EXPECT_EQ(Count(workers.text, "builds: no"), 1u) << workers.text;

  testing::CommandOutput played =
      Arbiter(Cat("match --quiet --engine name=tiny,source=", tree.string(),
                  " --engine name=b,cmd=builtin --tc depth=1 --games 8 --pairs-per-job 1"));
  ASSERT_EQ(played.status, 0) << played.text;
  EXPECT_NE(played.text.find("Games: 8"), std::string::npos) << played.text;

  testing::CommandOutput shown = Arbiter("runs show 1");
  ASSERT_EQ(shown.status, 0) << shown.text;
  // Both builders took a job (the run's first jobs go out together); one build's signature is
  // the reference, the other's is refused with both numbers.
  EXPECT_EQ(Count(shown.text, "Refused by worker"), 1u) << shown.text;
  EXPECT_NE(shown.text.find("other workers' builds"), std::string::npos) << shown.text;
  EXPECT_TRUE(shown.text.find("197282, other workers' builds 197281") != std::string::npos ||
              shown.text.find("197281, other workers' builds 197282") != std::string::npos)
      << shown.text;
  EXPECT_NE(shown.text.find("source " + tree.string()), std::string::npos) << shown.text;

  // The worker without a toolchain played none of it.
  testing::CommandOutput json = Arbiter("workers --json");
  v1::ListWorkersResponse list;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.text, &list).ok()) << json.text;
  for (const v1::WorkerStatus& w : list.workers()) {
    if (w.worker().name() != "w3") continue;
    EXPECT_TRUE(w.worker().build_toolchain().empty());
    EXPECT_EQ(w.games_per_minute(), 0) << json.text;
  }
}

// The hostile Makefile through the cluster: the worker builds it in its box, the run fails with
// the build's log, and none of its attempts reached the host.
TEST_F(SourceBenchTest, AHostileMakefileOnABoxedWorkerGetsNothing) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const fs::path tree = dir_ / "hostile";
  fs::copy(kTrees / "hostile", tree, fs::copy_options::recursive);
  const fs::path outside = dir_ / "outside";
  std::ofstream(tree / "targets.h") << "#define OUTSIDE \"" << outside.string() << "\"\n"
                                    << "#define PORT " << ntohs(addr.sin_port) << "\n"
                                    << "#define MARKER \"3599." << getpid() << "\"\n";
  testing::CommandOutput played =
      Arbiter(Cat("match --quiet --engine name=hostile,source=", tree.string(),
                  " --engine name=b,cmd=builtin --tc depth=1 --games 2"));
  EXPECT_NE(played.status, 0) << played.text;
  EXPECT_NE(played.text.find("engine 'hostile' failed"), std::string::npos) << played.text;
  EXPECT_NE(played.text.find("hostile build done"), std::string::npos) << played.text;
  EXPECT_NE(played.text.find("outside: "), std::string::npos) << played.text;
  EXPECT_EQ(played.text.find("network: connected"), std::string::npos) << played.text;
  EXPECT_FALSE(fs::exists(outside));
  const int fd = accept(listener, nullptr, nullptr);
  EXPECT_LT(fd, 0) << "a connection reached the host's loopback";
  if (fd >= 0) close(fd);
  close(listener);
}

}  // namespace
}  // namespace arbiter

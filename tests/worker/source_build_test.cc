// Engines built from source (worker/source_build.h) with the trees of tests/data/source_engines:
// one that builds and plays, one that does not compile, and a hostile Makefile in the box.
#include "worker/source_build.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/strings.h"
#include "gtest/gtest.h"
#include "match/process.h"
#include "net/sha256.h"

namespace arbiter::worker {
namespace {
namespace fs = std::filesystem;

const fs::path kTrees = fs::path(ARBITER_PERFT_DATA).parent_path() / "source_engines";

class SourceBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           Cat("arbiter-build-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // CI installs build-essential (scripts/install-deps.sh): a missing toolchain is a failure.
    ASSERT_FALSE(DetectToolchain().empty()) << "no cc or make here";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // `tree` packed as the client does (sorted, times and owners 0), and its sha256.
  BuildRequest Pack(const fs::path& tree, const std::string& build = "") {
    const std::string archive = (dir_ / Cat(tree.filename().string(), ".tar.gz")).string();
    const std::string cmd =
        Cat("tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C '", tree.string(),
            "' -cf - . | gzip -n > '", archive, "'");
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    absl::StatusOr<std::string> sha = net::Sha256OfFile(archive);
    EXPECT_TRUE(sha.ok());
    return {.archive = archive, .sha256 = sha.value_or(""), .build = build, .cpu_level = 2};
  }

  // A copy of tests/data/source_engines/NAME to change, named `as`.
  fs::path Copy(const std::string& name, const std::string& as = "") {
    const fs::path to = dir_ / ("tree-" + (as.empty() ? name : as));
    fs::copy(kTrees / name, to, fs::copy_options::recursive);
    return to;
  }

  SourceBuilderOptions Options(match::SandboxOptions box = {}) {
    return {.dir = (dir_ / "cache").string(), .box = box};
  }

  fs::path dir_;
};

// The first line of `program ARGS` (its stdout).
std::string FirstLine(const std::string& program, const std::string& arg) {
  auto p = match::Subprocess::Start({.argv = {program, arg}});
  if (!p.ok()) return "";
  match::OutputLine line;
  std::string first;
  while ((*p)->ReadLine(match::SteadyClock::now() + std::chrono::seconds(30), line) ==
         match::ReadResult::kLine)
    if (first.empty()) first = line.text;
  (*p)->WaitOrKill(std::chrono::seconds(5));
  return first;
}

TEST_F(SourceBuildTest, BuildsOnceAndServesTheCacheAfterwards) {
  SourceBuilder builder(Options());
  const BuildRequest request = Pack(kTrees / "good");
  absl::StatusOr<BuiltEngine> first = builder.Build(request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->cached);
  EXPECT_GT(first->seconds, 0);
  // The binary it made, found without binary= (the one new executable), and it runs.
  EXPECT_EQ(FirstLine(first->path, "bench"), "Nodes searched : 197281");

  absl::StatusOr<BuiltEngine> again = builder.Build(request);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(again->path, first->path);

  // Another CPU level, or another build command, is another key: built anew.
  BuildRequest v3 = request;
  v3.cpu_level = 3;
  absl::StatusOr<BuiltEngine> other = builder.Build(v3);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_FALSE(other->cached);
  EXPECT_NE(other->path, first->path);
}

TEST_F(SourceBuildTest, OneBuildOfAKeyAtATimeThenTheCacheIsEvictedBySize) {
  // Two builders on one cache (two workers of one machine) asked for the same tree at once:
  // one builds, the other waits for it and takes its binary.
  const BuildRequest request = Pack(kTrees / "good");
  SourceBuilder a(Options()), b(Options());
  absl::StatusOr<BuiltEngine> first, second;
  std::thread other([&] { second = b.Build(request); });
  first = a.Build(request);
  other.join();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(first->path, second->path);
  EXPECT_NE(first->cached, second->cached) << "built twice";

  // A cache of one byte keeps only the newest build.
  SourceBuilderOptions tiny = Options();
  tiny.cache_bytes = 1;
  SourceBuilder small(tiny);
  BuildRequest v3 = request;
  v3.cpu_level = 3;
  absl::StatusOr<BuiltEngine> newest = small.Build(v3);
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_TRUE(fs::exists(newest->path));
  EXPECT_FALSE(fs::exists(first->path)) << "the older build was not evicted";
}

TEST_F(SourceBuildTest, TheCpuLevelReachesTheBuild) {
  // A Makefile that writes what it was offered into the program it builds.
  const fs::path tree = Copy("good");
  std::ofstream(tree / "Makefile") << "engine:\n\tprintf '#!/bin/sh\\necho %s %s\\n' "
                                      "\"$$ARBITER_CPU_LEVEL\" \"$$ARBITER_MARCH\" > engine\n"
                                      "\tchmod +x engine\n";
  SourceBuilder builder(Options());
  BuildRequest request = Pack(tree);
  request.cpu_level = 3;
  request.binary = "engine";
  absl::StatusOr<BuiltEngine> built = builder.Build(request);
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(FirstLine(built->path, ""), "v3 x86-64-v3");
}

TEST_F(SourceBuildTest, ATreeThatDoesNotCompileFailsWithTheCompilersError) {
  SourceBuilder builder(Options());
  absl::StatusOr<BuiltEngine> built = builder.Build(Pack(kTrees / "broken"));
  ASSERT_FALSE(built.ok());
  EXPECT_EQ(built.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string m(built.status().message());
  EXPECT_NE(m.find("'moves_played' undeclared"), std::string::npos) << m;
  EXPECT_NE(m.find("build 'make' exited with code 2"), std::string::npos) << m;
  // Nothing cached: the next attempt builds (and fails) again.
  EXPECT_FALSE(builder.Build(Pack(kTrees / "broken")).ok());
}

TEST_F(SourceBuildTest, RefusesToGuessBetweenSeveralPrograms) {
  const fs::path tree = Copy("good");
  std::ofstream(tree / "Makefile") << "all:\n\t$(CC) -o engine engine.c\n\tcp engine engine2\n";
  SourceBuilder builder(Options());
  BuildRequest request = Pack(tree);
  absl::StatusOr<BuiltEngine> built = builder.Build(request);
  ASSERT_FALSE(built.ok());
  EXPECT_NE(built.status().message().find("several executables (engine, engine2)"),
            std::string::npos)
      << built.status();
  request.binary = "engine2";
  EXPECT_TRUE(builder.Build(request).ok());
  request.binary = "../engine2";
  EXPECT_EQ(builder.Build(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(SourceBuildTest, LimitsStopABuildAndAreNamed) {
  const fs::path tree = Copy("good");
  std::ofstream(tree / "Makefile") << "slow:\n\tsleep 30\nloud:\n\tyes | head -c 3000000\n";
  SourceBuilderOptions o = Options();
  o.limits.wall_seconds = 1;
  o.limits.output_bytes = 1 << 20;
  SourceBuilder builder(o);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<BuiltEngine> slow = builder.Build(Pack(tree, "make slow"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(slow.ok());
  EXPECT_NE(slow.status().message().find("wall-clock limit of 1 s"), std::string::npos)
      << slow.status();
  absl::StatusOr<BuiltEngine> loud = builder.Build(Pack(tree, "make loud"));
  ASSERT_FALSE(loud.ok());
  EXPECT_NE(loud.status().message().find("output passed the limit of 1 MiB"), std::string::npos)
      << loud.status();
}

// RLIMIT_FSIZE bounds one file; the disk limit bounds the tree, both while a build writes many
// files and when an archive unpacks to more than it may (a small .tar.gz of zeros).
TEST_F(SourceBuildTest, ADiskLimitStopsATreeThatGrowsPastIt) {
  const fs::path tree = Copy("good");
  std::ofstream(tree / "Makefile") << "fill:\n\tfor i in $$(seq 40); do head -c 1048576 "
                                      "/dev/zero > f$$i; done; sleep 30\n";
  SourceBuilderOptions o = Options();
  o.limits.disk_bytes = 16 << 20;
  SourceBuilder builder(o);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<BuiltEngine> fill = builder.Build(Pack(tree, "make fill"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(fill.ok());
  EXPECT_NE(fill.status().message().find("disk limit of 16 MiB"), std::string::npos)
      << fill.status();

  const fs::path bomb = Copy("good", "bomb");
  for (int i = 0; i < 40; ++i)
    std::ofstream(bomb / Cat("zeros", i), std::ios::binary) << std::string(1 << 20, '\0');
  const BuildRequest packed = Pack(bomb);
  EXPECT_LT(fs::file_size(packed.archive), 1u << 20);
  absl::StatusOr<BuiltEngine> unpacked = builder.Build(packed);
  ASSERT_FALSE(unpacked.ok());
  EXPECT_NE(unpacked.status().message().find("unpacking the source was killed: its tree passed "
                                             "the disk limit of 16 MiB"),
            std::string::npos)
      << unpacked.status();

  // The control: the same tree, small, builds under the same limit.
  fs::remove_all(bomb);
  EXPECT_TRUE(builder.Build(Pack(Copy("good", "small"))).ok());
}

// The processes with `marker` in their command line on this host.
std::vector<pid_t> Running(const std::string& marker) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::ifstream in(e.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(marker) != std::string::npos)
      out.push_back(pid_t(std::atoi(e.path().filename().c_str())));
  }
  return out;
}

// The hostile Makefile in each box this host offers: it writes outside its tree, connects to a
// listener on the host's loopback, leaves a daemon and forks without bound. Each attempt gets
// nothing; without a box, the same writes and connects (the test's control).
TEST_F(SourceBuildTest, AHostileMakefileGetsNothingInTheBox) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 8), 0);
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  auto accepted = [&] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd >= 0) close(fd);
    return fd >= 0;
  };
  struct Box {
    std::string name;
    match::Isolation isolation;
    bool available;
  };
  const std::vector<Box> boxes = {
      {"none", match::Isolation::kNone, true},
      {"namespaces", match::Isolation::kNamespaces, match::ProbeNamespaces("/usr/bin/bwrap").ok()},
      {"landlock", match::Isolation::kLandlock, match::ProbeLandlock().ok()}};
  int boxed = 0;
  for (const Box& b : boxes) {
    if (!b.available) continue;
    SCOPED_TRACE(b.name);
    const fs::path tree = Copy("hostile", "hostile-" + b.name);
    const fs::path outside = dir_ / Cat("outside-", b.name);
    const std::string marker = Cat("3599.", getpid(), b.name.size());
    std::ofstream(tree / "targets.h") << "#define OUTSIDE \"" << outside.string() << "\"\n"
                                      << "#define PORT " << ntohs(addr.sin_port) << "\n"
                                      << "#define MARKER \"" << marker << "\"\n";
    match::SandboxOptions box{.isolation = b.isolation};
    box.limits.processes = 64;
    SourceBuilder builder(Options(box));
    absl::StatusOr<BuiltEngine> built = builder.Build(Pack(tree));
    ASSERT_FALSE(built.ok());
    const std::string m(built.status().message());
    EXPECT_NE(m.find("hostile build done"), std::string::npos) << m;
    if (b.isolation == match::Isolation::kNone) {
      EXPECT_TRUE(fs::exists(outside)) << m;
      EXPECT_NE(m.find("network: connected"), std::string::npos) << m;
      EXPECT_TRUE(accepted());
      const std::vector<pid_t> daemon = Running(Cat("sleep ", marker));
      EXPECT_EQ(daemon.size(), 1u) << "the daemon it left";
      for (pid_t pid : daemon) kill(pid, SIGKILL);
      continue;
    }
    ++boxed;
    EXPECT_FALSE(fs::exists(outside)) << m;
    EXPECT_NE(m.find("outside: "), std::string::npos) << m;
    EXPECT_EQ(m.find("network: connected"), std::string::npos) << m;
    EXPECT_FALSE(accepted()) << "a connection reached the host's loopback";
    const size_t at = m.find("forks: ");
    ASSERT_NE(at, std::string::npos) << m;
    EXPECT_LT(std::atoi(m.c_str() + at + 7), 64) << m;
    EXPECT_TRUE(Running(Cat("sleep ", marker)).empty()) << "the daemon outlived the build";
  }
  close(listener);
  if (boxed == 0) GTEST_SKIP() << "neither namespaces nor Landlock here";
}

}  // namespace
}  // namespace arbiter::worker

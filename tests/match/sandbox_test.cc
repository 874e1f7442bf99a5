// The engine sandbox against hostile test engines: each attempt (writing or reading outside its
// directory, TCP to the host, listening, a daemon, a fork bomb, a huge allocation, a huge file)
// fails or is stopped in the box, and succeeds without it (so the test proves the box, not the
// engine); no process of a boxed engine outlives it; an engine killed by a limit loses by
// disconnect with the signal named, and the next game is played. Stockfish plays in the box.
#include "match/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "base/strings.h"
#include "match/game.h"
#include "match/landlock.h"

namespace arbiter::match {
namespace {

// A word unique to this test run, put on hostile engines' command lines to find them in /proc.
std::string Tag() { return Cat("sandbox-test-", getpid()); }

SandboxOptions Box(Isolation isolation) {
  SandboxOptions o{.isolation = isolation};
  o.limits.memory_mb = kSanitizerBuild ? 0 : 256;  // the test engine is instrumented too
  o.limits.file_size_mb = 8;
  o.limits.processes = 32;
  // RLIMIT_NPROC counts every process of the engines' user: as root, engines of this test get a
  // user of their own, so that engines of other tests running at the same time (as nobody) do not
  // count against this test's small limit.
  o.root_drops_to = 60000 + getpid() % 5000;
  return o;
}

std::vector<int> PidsWithTag(const std::string& tag) {
  std::vector<int> pids;
  DIR* d = opendir("/proc");
  if (!d) return pids;
  while (dirent* e = readdir(d)) {
    const int pid = atoi(e->d_name);
    if (pid <= 0 || pid == getpid()) continue;
    // A process may exit between the listing and the read (ESRCH): read with read(2), which
    // simply fails then, not with a stream that throws.
    const int fd = open(Cat("/proc/", pid, "/cmdline").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string cmdline;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) cmdline.append(buf, size_t(n));
    close(fd);
    if (cmdline.find(tag) != std::string::npos) pids.push_back(pid);
  }
  closedir(d);
  return pids;
}

// Processes left with `tag` after up to 2 s (a dying namespace takes a moment; `wait` false:
// at once); kills them.
size_t Survivors(const std::string& tag, bool wait = true) {
  std::vector<int> pids;
  for (int i = 0; i < (wait ? 200 : 1); ++i) {
    pids = PidsWithTag(tag);
    if (pids.empty()) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int pid : pids) kill(pid, SIGKILL);
  return pids.size();
}

EngineSpec Hostile(std::vector<std::string> args) {
  args.push_back("--tag");
  args.push_back(Tag());
  return EngineSpec{.name = "hostile", .cmd = TEST_ENGINE, .args = std::move(args)};
}

// Starts the engine, sends one `go` and returns its report on `action` ("ok", "failed: ...")
// or how it died ("died: engine exited with ..."). `during` runs while the engine still lives.
std::string Try(const SandboxOptions& box, std::vector<std::string> args, std::string_view action,
                const std::function<void()>& during = {}) {
  UciEngine e(Hostile(std::move(args)), {}, {}, {}, box);
  if (absl::Status st = e.Start(); !st.ok()) return Cat("no start: ", st.ToString());
  if (absl::Status st = e.NewGame(false); !st.ok()) return Cat("no start: ", st.ToString());
  (void)e.Send("position startpos");
  (void)e.Send("go wtime 10000 btime 10000");
  std::vector<OutputLine> lines;
  const ReadResult r = e.ReadUntilBestmove(SteadyClock::now() + std::chrono::seconds(20), lines);
  std::string outcome = "no report";
  const std::string prefix = Cat("info string ", action, " ");
  for (const OutputLine& l : lines)
    if (l.text.compare(0, prefix.size(), prefix) == 0) outcome = l.text.substr(prefix.size());
  if (r == ReadResult::kEof) return Cat("died: ", e.EndAndDescribe());
  if (during) during();
  e.Quit();
  return outcome;
}

bool StartsWith(const std::string& s, std::string_view p) { return s.compare(0, p.size(), p) == 0; }

int FreePort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

bool CanConnect(int port) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(s);
  return ok;
}

// Each test runs in both boxes that confine an engine: bwrap's namespaces (where the kernel lets
// bwrap make them) and Landlock with the stricter filter (what an unprivileged pod gets).
class Sandbox : public testing::TestWithParam<Isolation> {
 protected:
  void SetUp() override {
    if (GetParam() == Isolation::kNamespaces) {
      if (absl::Status st = ProbeNamespaces("/usr/bin/bwrap"); !st.ok())
        GTEST_SKIP() << "no namespaces for bwrap here: " << st.message();
    } else if (absl::Status st = ProbeLandlock(); !st.ok()) {
      GTEST_SKIP() << "no Landlock here: " << st.message();
    }
    char templ[] = "/tmp/arbiter-sandbox-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    chmod(dir_.c_str(), 0777);  // writable by the box's user too: only the box stops the write
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  const SandboxOptions box_ = Box(GetParam());
  const SandboxOptions off_ = Box(Isolation::kNone);
  std::string dir_;
};

INSTANTIATE_TEST_SUITE_P(Boxes, Sandbox,
                         testing::Values(Isolation::kNamespaces, Isolation::kLandlock),
                         [](const testing::TestParamInfo<Isolation>& i) {
                           return std::string(IsolationName(i.param));
                         });

// The seccomp filter: in the box and with limits only, ptrace and new namespaces are refused
// with EPERM and /proc says filter mode (2); without the sandbox both work.
TEST_P(Sandbox, SystemCallsAnEngineNeverNeeds) {
  const std::string refused = Cat("failed: ", strerror(EPERM));
  for (const SandboxOptions& o : {box_, Box(Isolation::kLimits)}) {
    SCOPED_TRACE(std::string(IsolationName(o.isolation)));
    EXPECT_EQ(Try(o, {"--syscalls"}, "ptrace"), refused);
    EXPECT_EQ(Try(o, {"--syscalls"}, "unshare"), refused);
    // Landlock keeps /proc out of the engine's reach: it cannot read its own status there.
    EXPECT_EQ(Try(o, {"--syscalls"}, "seccomp-mode"),
              o.isolation == Isolation::kLandlock && !kSanitizerBuild ? "unknown" : "2");
  }
  // Where this test itself runs under a filter (a container), the engine inherits it.
  std::ifstream status("/proc/self/status");
  std::string line, own_mode;
  while (std::getline(status, line))
    if (line.rfind("Seccomp:", 0) == 0) own_mode = std::string(Strip(line.substr(8)));
  if (own_mode != "0") GTEST_SKIP() << "this test runs under a seccomp filter already";
  EXPECT_EQ(Try(off_, {"--syscalls"}, "ptrace"), "ok");
  EXPECT_EQ(Try(off_, {"--syscalls"}, "seccomp-mode"), "0");
  // The filter can be left out (measurements): then ptrace works in the box too.
  SandboxOptions no_filter = box_;
  no_filter.seccomp = false;
  EXPECT_EQ(Try(no_filter, {"--syscalls"}, "ptrace"), "ok");
}

// Directories left by a process that is gone are removed; a live process's are kept.
TEST(SandboxDirs, StaleDirectoriesOfDeadProcessesAreRemoved) {
  char templ[] = "/tmp/arbiter-stale-test-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  SandboxOptions o{.isolation = Isolation::kLimits, .work_root = templ, .root_drops_to = -1};
  absl::StatusOr<std::string> live = MakePrivateDir(o);
  ASSERT_TRUE(live.ok()) << live.status();
  // A pid that existed and is gone: a child that has exited and been reaped.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale = Cat(templ, "/arbiter-engine-", dead, "-abcdef");
  std::filesystem::create_directories(stale + "/sub");
  std::ofstream(stale + "/sub/file") << "left behind";
  const std::string other = Cat(templ, "/arbiter-engine-notapid");
  std::filesystem::create_directories(other);
  EXPECT_EQ(RemoveStalePrivateDirs(o), 1);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(*live));
  EXPECT_TRUE(std::filesystem::exists(other));
  std::filesystem::remove_all(templ);
}

// A container's worker is PID 1 before and after a restart, and its work volume survives the
// restart: "the pid is alive" cannot tell its own directories from the tree its killed
// predecessor left (a build of up to --build-disk-mb), which would never be removed.
TEST(SandboxDirs, ARestartedPidOneRemovesWhatTheKilledPidOneLeft) {
  char templ[] = "/tmp/arbiter-pid1-test-XXXXXX";
  ASSERT_NE(mkdtemp(templ), nullptr);
  const std::string left = Cat(templ, "/arbiter-engine-1-before");
  std::filesystem::create_directories(left + "/tree");
  std::ofstream(left + "/tree/main.o") << "left by a build that was killed";
  struct stat st;
  ASSERT_EQ(stat(left.c_str(), &st), 0);
  // The new PID 1 starts past the directory's last change plus the sweep's slack of a second: a
  // wait on the clock itself.
  const auto last_change = std::chrono::system_clock::time_point(
      std::chrono::seconds(st.st_ctim.tv_sec) + std::chrono::nanoseconds(st.st_ctim.tv_nsec));
  while (std::chrono::system_clock::now() < last_change + std::chrono::milliseconds(1500))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t outer = fork();
  if (outer == 0) {
    if (unshare(CLONE_NEWPID) != 0) _exit(77);
    const pid_t init = fork();
    if (init == 0) {
      // PID 1 of a new pid namespace, as in a restarted container: its own directory first.
      SandboxOptions o{.isolation = Isolation::kLimits, .work_root = templ, .root_drops_to = -1};
      absl::StatusOr<std::string> own = MakePrivateDir(o);
      if (getpid() != 1 || !own.ok()) _exit(10);
      const int removed = RemoveStalePrivateDirs(o);
      _exit(removed == 1 && std::filesystem::exists(*own) ? 0 : 20 + removed);
    }
    int status = 0;
    waitpid(init, &status, 0);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 30);
  }
  int status = 0;
  ASSERT_EQ(waitpid(outer, &status, 0), outer);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    std::filesystem::remove_all(templ);
    GTEST_SKIP() << "no pid namespace here (root needed)";
  }
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "20 + n: the new PID 1 removed n directories, not exactly the one left (10: no start)";
  EXPECT_FALSE(std::filesystem::exists(left));
  std::filesystem::remove_all(templ);
}

// A descriptor the worker left inheritable (no O_CLOEXEC) does not reach any engine.
TEST_P(Sandbox, NoDescriptorOfTheWorkerLeaksIntoTheEngine) {
  const int leaky = open("/proc/self/status", O_RDONLY);
  ASSERT_GE(leaky, 3);
  for (const SandboxOptions& o : {box_, Box(Isolation::kLimits), off_}) {
    SCOPED_TRACE(std::string(IsolationName(o.isolation)));
    EXPECT_EQ(Try(o, {"--syscalls"}, "inherited-fds"), "0");
  }
  close(leaky);
}

TEST_P(Sandbox, WriteOutsideItsDirectory) {
  const std::string target = Cat(dir_, "/owned");
  EXPECT_TRUE(StartsWith(Try(box_, {"--write-outside", target}, "write-outside"), "failed"));
  EXPECT_FALSE(std::filesystem::exists(target));
  EXPECT_EQ(Try(off_, {"--write-outside", target}, "write-outside"), "ok");
  EXPECT_TRUE(std::filesystem::exists(target));
}

TEST_P(Sandbox, ReadTheWorkersToken) {
  const std::string token = Cat(dir_, "/token");
  std::ofstream(token) << "secret\n";
  chmod(token.c_str(), 0644);
  EXPECT_TRUE(StartsWith(Try(box_, {"--read", token}, "read"), "failed"));
  EXPECT_EQ(Try(off_, {"--read", token}, "read"), "ok");
}

TEST_P(Sandbox, ConnectToTheHost) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(s, 8), 0);
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string port = Cat(ntohs(a.sin_port));
  EXPECT_TRUE(StartsWith(Try(box_, {"--connect", port}, "connect"), "failed"));
  // Without namespaces the filter refuses every socket but a local one, limits only included.
  EXPECT_TRUE(StartsWith(Try(Box(Isolation::kLimits), {"--connect", port}, "connect"), "failed"));
  EXPECT_EQ(Try(off_, {"--connect", port}, "connect"), "ok");
  close(s);
}

TEST_P(Sandbox, ListenOnAPort) {
  const int port = FreePort();
  bool reached = true;
  // In its own network namespace the engine may listen, but nobody outside can reach it; under
  // Landlock it gets no TCP socket at all.
  const std::string boxed =
      Try(box_, {"--listen-port", Cat(port)}, "listen", [&] { reached = CanConnect(port); });
  EXPECT_TRUE(GetParam() == Isolation::kNamespaces ? boxed == "ok" : StartsWith(boxed, "failed"))
      << boxed;
  EXPECT_FALSE(reached);
  EXPECT_EQ(Try(off_, {"--listen-port", Cat(port)}, "listen", [&] { reached = CanConnect(port); }),
            "ok");
  EXPECT_TRUE(reached);
}

TEST_P(Sandbox, DaemonDoesNotOutliveTheEngine) {
  EXPECT_EQ(Try(box_, {"--daemon", "x"}, "daemon"), "ok");
  EXPECT_EQ(Survivors(Tag()), 0u);
  EXPECT_EQ(Try(off_, {"--daemon", "x"}, "daemon"), "ok");
  EXPECT_EQ(Survivors(Tag(), false), 1u);
}

TEST_P(Sandbox, ForkBomb) {
  const std::string outcome = Try(box_, {"--fork-bomb", "100"}, "fork-bomb");
  // RLIMIT_NPROC binds the unprivileged user the box runs as; root itself is exempt from it.
  if (geteuid() == 0) {
    EXPECT_TRUE(StartsWith(outcome, "failed")) << outcome;
  }
  EXPECT_EQ(Survivors(Tag()), 0u);
  EXPECT_EQ(Try(off_, {"--fork-bomb", "100"}, "fork-bomb"), "ok");
  EXPECT_EQ(Survivors(Tag(), false), 100u);
}

TEST_P(Sandbox, AllocatePastTheMemoryLimit) {
  if (kSanitizerBuild) GTEST_SKIP() << "an instrumented engine cannot run under RLIMIT_AS";
  EXPECT_TRUE(StartsWith(Try(box_, {"--alloc-mb", "320"}, "alloc"), "failed"));
  EXPECT_EQ(Try(off_, {"--alloc-mb", "320"}, "alloc"), "ok");
}

TEST_P(Sandbox, WritePastTheFileSizeLimit) {
  const std::string died = Try(box_, {"--write-big", "16"}, "write-big");
  EXPECT_EQ(died, "died: engine exited with SIGXFSZ (file size limit)");
  EXPECT_EQ(Try(off_, {"--write-big", "16"}, "write-big"), "ok");
}

// RLIMIT_FSIZE bounds each file (8 MB here); the disk limit bounds them together: 1 MB files
// kept one after another are stopped at the directory's limit, with the limit named.
TEST_P(Sandbox, FillItsDirectoryPastTheDiskLimit) {
  SandboxOptions box = box_;
  box.limits.disk_mb = 6;
  const std::string died = Try(box, {"--fill", "64"}, "fill");
  EXPECT_EQ(died,
            "died: engine exited with SIGKILL (killed): its directory passed the disk "
            "limit of 6 MiB");
  EXPECT_EQ(Try(off_, {"--fill", "12"}, "fill"), "ok");
}

// Real games: the engine that dies at a limit loses by disconnect, named; the next game is
// played with a fresh process; nothing of it survives.
TEST_P(Sandbox, GamesRecordTheFaultAndGoOn) {
  UciEngine hostile(Hostile({"--write-big", "16"}), {}, {}, {}, box_);
  UciEngine fair(EngineSpec{.name = "fair", .cmd = TEST_ENGINE}, {}, {}, {}, box_);
  GameSettings s;
  s.tc[0] = s.tc[1] = ParseTimeControl("10+0.1").value();
  s.adjudication.max_moves = 20;
  for (int g = 0; g < 2; ++g) {
    UciEngine* e[2] = {g == 0 ? &hostile : &fair, g == 0 ? &fair : &hostile};
    const Color hostile_side = g == 0 ? kWhite : kBlack;
    GameRecord r = PlayGame(e, Opening{}, s);
    EXPECT_EQ(r.end, GameEnd::kDisconnect) << r.reason;
    EXPECT_EQ(r.faulty, hostile_side) << r.reason;
    EXPECT_NE(r.reason.find("SIGXFSZ (file size limit)"), std::string::npos) << r.reason;
  }
  EXPECT_EQ(hostile.starts(), 2);
  hostile.Quit();
  fair.Quit();
  EXPECT_EQ(Survivors(Tag()), 0u);
}

TEST_P(Sandbox, DaemonGamesLeaveNothingBehind) {
  UciEngine hostile(Hostile({"--daemon", "x", "--fork-bomb", "8"}), {}, {}, {}, box_);
  UciEngine fair(EngineSpec{.name = "fair", .cmd = TEST_ENGINE}, {}, {}, {}, box_);
  GameSettings s;
  s.tc[0] = s.tc[1] = ParseTimeControl("10+0.1").value();
  s.adjudication.max_moves = 10;
  UciEngine* e[2] = {&hostile, &fair};
  GameRecord r = PlayGame(e, Opening{}, s);
  EXPECT_NE(r.end, GameEnd::kDisconnect) << r.reason;
  EXPECT_NE(r.end, GameEnd::kAborted) << r.reason;
  hostile.Quit();
  EXPECT_EQ(Survivors(Tag()), 0u);
}

TEST_P(Sandbox, StockfishPlaysInTheBox) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no /usr/games/stockfish"
                 << " (scripts/install-deps.sh installs it)";
  const EngineSpec sf{.name = "sf", .cmd = "/usr/games/stockfish"};
  SandboxOptions box = box_;
  box.limits = ResourceLimits{};  // the defaults
  UciEngine a(sf, {}, {}, {}, box), b(sf, {}, {}, {}, box);
  GameSettings s;
  s.tc[0] = s.tc[1] = ParseTimeControl("1+0.01").value();
  s.adjudication.max_moves = 30;
  UciEngine* e[2] = {&a, &b};
  GameRecord r = PlayGame(e, Opening{}, s);
  EXPECT_TRUE(r.end == GameEnd::kNormal || r.end == GameEnd::kAdjudication) << r.reason;
  EXPECT_GE(r.moves.size(), 10u);
  EXPECT_EQ(a.starts(), 1);
}

TEST(SandboxArgv, WrapsTheEngineInBwrapWithLimits) {
  SandboxOptions box{.isolation = Isolation::kNamespaces};
  box.limits.memory_mb = 4096;  // explicit: a sanitizer build has no default
  absl::StatusOr<ProcessSpec> s =
      Sandboxed(box, ProcessSpec{.argv = {"/bin/true", "x"}, .env = {"A=1"}}, "/tmp/p");
  ASSERT_TRUE(s.ok()) << s.status();
  std::string argv;
  for (const std::string& a : s->argv) argv += a + " ";
  EXPECT_EQ(s->argv[0], "/usr/bin/bwrap");
  for (std::string_view want :
       {"--unshare-all ", "--die-with-parent ", "--new-session ", "--cap-drop ALL ",
        "--bind /tmp/p /tmp/p --chdir /tmp/p ", "--clearenv ", "--setenv A 1 ",
        // the memory-backed directories are as bounded as the private one (512 MiB)
        "--size 536870912 --tmpfs /tmp ", "--size 536870912 --tmpfs /dev/shm "})
    EXPECT_NE(argv.find(want), std::string::npos) << want << " in " << argv;
  EXPECT_NE(argv.find("-- /usr/bin/true x "), std::string::npos) << argv;
  EXPECT_TRUE(s->no_new_privs);
  EXPECT_EQ(s->rlimits.size(), 5u);
}

TEST(SandboxOff, EnginesStillGetNoNewPrivs) {
  UciEngine e(EngineSpec{.name = "t", .cmd = TEST_ENGINE});
  ASSERT_TRUE(e.Start().ok());
  std::ifstream in(Cat("/proc/", e.process()->pid(), "/status"));
  std::string status((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << status;
  e.Quit();
}

TEST(SandboxArgv, LimitsOnlyKeepsTheProgramAndMovesToThePrivateDir) {
  SandboxOptions box{.isolation = Isolation::kLimits};
  absl::StatusOr<ProcessSpec> s = Sandboxed(box, ProcessSpec{.argv = {"true"}}, "/tmp/p");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->argv, std::vector<std::string>{"/usr/bin/true"});
  EXPECT_EQ(s->cwd, "/tmp/p");
  EXPECT_TRUE(s->clear_env);
  EXPECT_FALSE(Sandboxed(box, ProcessSpec{.argv = {"no-such-engine-here"}}, "/tmp/p").ok());
}

TEST(SandboxArgv, LandlockKeepsTheProgramAndAddsARulesetAndTheStricterFilter) {
  if (LandlockAbi() < 1) GTEST_SKIP() << "no Landlock here";
  SandboxOptions box{.isolation = Isolation::kLandlock};
  absl::StatusOr<ProcessSpec> s = Sandboxed(box, ProcessSpec{.argv = {"true"}}, "/tmp");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->argv, std::vector<std::string>{"/usr/bin/true"});
  ASSERT_NE(s->landlock_fd, nullptr);
  EXPECT_GE(*s->landlock_fd, 0);
  EXPECT_EQ(s->seccomp_bpf, EngineSeccompFilter(true).value());
  EXPECT_NE(s->seccomp_bpf, EngineSeccompFilter(false).value());
  EXPECT_TRUE(Confines(Isolation::kLandlock));
  EXPECT_FALSE(Confines(Isolation::kLimits));
}

TEST(SandboxArgv, ModesAndExits) {
  EXPECT_EQ(ParseSandboxMode("auto").value(), SandboxMode::kAuto);
  EXPECT_EQ(ParseSandboxMode("landlock").value(), SandboxMode::kLandlock);
  EXPECT_FALSE(ParseSandboxMode("on").ok());
  EXPECT_EQ(ResolveIsolation(SandboxMode::kOff, "/nonexistent", nullptr).value(), Isolation::kNone);
  // Without bwrap, auto falls back to Landlock where the kernel has it, else to limits only.
  std::string warning;
  const bool landlock = ProbeLandlock().ok();
  EXPECT_EQ(ResolveIsolation(SandboxMode::kAuto, "/nonexistent", &warning).value(),
            landlock ? Isolation::kLandlock : Isolation::kLimits);
  EXPECT_NE(warning.find(landlock ? "Landlock" : "limits only"), std::string::npos) << warning;
  EXPECT_EQ(ResolveIsolation(SandboxMode::kLandlock, "/nonexistent", nullptr).ok(), landlock);
  EXPECT_FALSE(ResolveIsolation(SandboxMode::kNamespaces, "/nonexistent", nullptr).ok());
  EXPECT_EQ(DescribeExit(3 << 8), "exited with code 3");
  EXPECT_EQ(DescribeExit(SIGXCPU), "exited with SIGXCPU (CPU time limit)");
}

}  // namespace
}  // namespace arbiter::match

#include "match/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>

#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "match/engine_users.h"
#include "match/landlock.h"

namespace arbiter::match {
namespace {

constexpr std::string_view kPath = "/usr/local/bin:/usr/bin:/bin:/usr/games";

// `program` as an absolute path: itself if it has a '/', else the first match in $PATH.
absl::StatusOr<std::string> ResolveProgram(const std::string& program) {
  std::string path;
  if (program.find('/') != std::string::npos) {
    path = program;
  } else {
    const char* env = getenv("PATH");
    const std::string search = env ? env : std::string(kPath);
    for (std::string_view dir : Split(search, ':', true)) {
      std::string candidate = Cat(dir, "/", program);
      if (access(candidate.c_str(), X_OK) == 0) {
        path = candidate;
        break;
      }
    }
    if (path.empty())
      return absl::NotFoundError(Cat("cannot start engine: '", program, "' is not in PATH"));
  }
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::canonical(path, ec);
  if (ec) return absl::NotFoundError(Cat("cannot start engine '", program, "': ", ec.message()));
  return abs.string();
}

bool Under(std::string_view path, std::string_view dir) {
  return path.substr(0, dir.size()) == dir &&
         (path.size() == dir.size() || path[dir.size()] == '/');
}

// The read-only system the dynamic loader and a shell script need: /usr, the /bin and /lib*
// entries (symlinks into /usr on merged-/usr systems, directories elsewhere) and ld.so's files.
void AddSystem(std::vector<std::string>& a) {
  auto add = [&](std::initializer_list<std::string_view> words) {
    for (std::string_view w : words) a.emplace_back(w);
  };
  add({"--ro-bind", "/usr", "/usr"});
  for (const char* p : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    struct stat st;
    if (lstat(p, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char target[4096];
      ssize_t n = readlink(p, target, sizeof target - 1);
      if (n <= 0) continue;
      add({"--symlink", std::string_view(target, size_t(n)), p});
    } else if (S_ISDIR(st.st_mode)) {
      add({"--ro-bind", p, p});
    }
  }
  add({"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache", "--ro-bind-try", "/etc/ld.so.conf",
       "/etc/ld.so.conf", "--ro-bind-try", "/etc/ld.so.conf.d", "/etc/ld.so.conf.d"});
}

// A memfd holding `bytes`, read from its start (bwrap --seccomp reads it to the end).
absl::StatusOr<int> MemFdWith(const std::string& bytes) {
  const int fd = memfd_create("arbiter-seccomp", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(Cat("memfd_create: ", strerror(errno)));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      close(fd);
      return absl::InternalError(Cat("writing the seccomp filter: ", strerror(errno)));
    }
    done += size_t(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

absl::StatusOr<std::string> BuildSeccompFilter(bool without_namespaces) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return absl::InternalError("seccomp_init failed");
  std::unique_ptr<void, void (*)(void*)> release(ctx, [](void* c) { seccomp_release(c); });
  auto check = [](int rc, std::string_view what) {
    return rc == 0 ? absl::OkStatus()
                   : absl::InternalError(Cat("seccomp ", what, ": ", strerror(-rc)));
  };
  for (std::string_view name : RefusedSyscalls()) {
    const int nr = seccomp_syscall_resolve_name(std::string(name).c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    RETURN_IF_ERROR(check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0), name));
  }
  RETURN_IF_ERROR(
      check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0), "clone3"));
  for (uint64_t flag : {CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC,
                        CLONE_NEWUTS, CLONE_NEWCGROUP})
    RETURN_IF_ERROR(check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                           SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
                          "clone"));
  if (without_namespaces) {
    // No network namespace to stand in for: no socket but a local one. No new session or process
    // group: whatever the engine forks stays in the group that is killed when the engine ends.
    RETURN_IF_ERROR(check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
                                           SCMP_A0(SCMP_CMP_NE, AF_UNIX)),
                          "socket"));
    for (int nr : {SCMP_SYS(setsid), SCMP_SYS(setpgid)})
      RETURN_IF_ERROR(check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0), "setsid"));
  }
  const int fd = memfd_create("arbiter-seccomp-export", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(Cat("memfd_create: ", strerror(errno)));
  std::string bpf;
  absl::Status st = check(seccomp_export_bpf(ctx, fd), "export");
  if (st.ok()) {
    lseek(fd, 0, SEEK_SET);
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) bpf.append(buf, size_t(n));
  }
  close(fd);
  if (!st.ok()) return st;
  if (bpf.empty()) return absl::InternalError("seccomp export wrote nothing");
  return bpf;
}

}  // namespace

const std::vector<std::string_view>& RefusedSyscalls() {
  static const std::vector<std::string_view> kRefused = {"ptrace",
                                                         "process_vm_readv",
                                                         "process_vm_writev",
                                                         "mount",
                                                         "umount2",
                                                         "pivot_root",
                                                         "chroot",
                                                         "move_mount",
                                                         "open_tree",
                                                         "fsopen",
                                                         "fsconfig",
                                                         "fsmount",
                                                         "fspick",
                                                         "mount_setattr",
                                                         "unshare",
                                                         "setns",
                                                         "swapon",
                                                         "swapoff",
                                                         "reboot",
                                                         "kexec_load",
                                                         "kexec_file_load",
                                                         "init_module",
                                                         "finit_module",
                                                         "delete_module",
                                                         "keyctl",
                                                         "add_key",
                                                         "request_key",
                                                         "bpf",
                                                         "perf_event_open",
                                                         "userfaultfd",
                                                         "io_uring_setup",
                                                         "io_uring_enter",
                                                         "io_uring_register",
                                                         "open_by_handle_at",
                                                         "name_to_handle_at",
                                                         "acct",
                                                         "quotactl",
                                                         "quotactl_fd",
                                                         "lookup_dcookie",
                                                         "syslog",
                                                         "iopl",
                                                         "ioperm",
                                                         "settimeofday",
                                                         "clock_settime",
                                                         "clock_adjtime",
                                                         "adjtimex",
                                                         "sethostname",
                                                         "setdomainname",
                                                         "vhangup",
                                                         "fanotify_init",
                                                         "uselib",
                                                         "nfsservctl"};
  return kRefused;
}

absl::StatusOr<std::string> EngineSeccompFilter(bool without_namespaces) {
  static const absl::StatusOr<std::string>* const filters[2] = {
      new absl::StatusOr<std::string>(BuildSeccompFilter(false)),
      new absl::StatusOr<std::string>(BuildSeccompFilter(true))};
  return *filters[without_namespaces];
}

absl::StatusOr<SandboxMode> ParseSandboxMode(std::string_view text) {
  if (text == "off") return SandboxMode::kOff;
  if (text == "auto") return SandboxMode::kAuto;
  if (text == "namespaces") return SandboxMode::kNamespaces;
  if (text == "landlock") return SandboxMode::kLandlock;
  return absl::InvalidArgumentError(
      Cat("--sandbox '", text, "': expected auto, namespaces, landlock or off"));
}

std::string_view IsolationName(Isolation isolation) {
  switch (isolation) {
    case Isolation::kNone:
      return "none";
    case Isolation::kLimits:
      return "limits";
    case Isolation::kLandlock:
      return "landlock";
    case Isolation::kNamespaces:
      return "namespaces";
  }
  return "none";
}

bool Confines(Isolation isolation) {
  return isolation == Isolation::kLandlock || isolation == Isolation::kNamespaces;
}

namespace {

// Runs `argv` boxed as `options` say and waits for it; an error says how it ended.
absl::Status RunProbe(const SandboxOptions& options, std::vector<std::string> argv,
                      std::string_view what) {
  absl::StatusOr<std::string> dir = MakePrivateDir(options);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<ProcessSpec> spec = Sandboxed(options, ProcessSpec{.argv = std::move(argv)}, *dir);
  absl::Status result = spec.status();
  if (spec.ok()) {
    absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(*spec);
    if (!p.ok()) {
      result = p.status();
    } else {
      const int status = (*p)->WaitOrKill(std::chrono::milliseconds(5000));
      if (status != 0) {
        (*p)->WaitStderrClosed(SteadyClock::now() + std::chrono::milliseconds(1000));
        std::string err = std::string(Strip((*p)->StderrTail()));
        result = absl::FailedPreconditionError(
            Cat(what, " (", DescribeExit(status), err.empty() ? "" : ": ", err, ")"));
      }
    }
  }
  RemovePrivateDir(*dir);
  return result;
}

}  // namespace

absl::Status ProbeNamespaces(const std::string& bwrap) {
  if (access(bwrap.c_str(), X_OK) != 0)
    return absl::FailedPreconditionError(
        Cat(bwrap, " is not installed (Debian: apt-get install bubblewrap)"));
  return RunProbe(SandboxOptions{.isolation = Isolation::kNamespaces, .bwrap = bwrap},
                  {"/bin/true"}, "bwrap cannot create namespaces here");
}

absl::Status ProbeLandlock() {
  if (LandlockAbi() < 1)
    return absl::FailedPreconditionError(
        Cat("Landlock is not available here (", strerror(errno), ")"));
  SandboxOptions options{.isolation = Isolation::kLandlock};
  // The probe must run and must not see the host's /etc beyond ld.so's files.
  RETURN_IF_ERROR(RunProbe(options, {"/bin/true"}, "a program cannot start under Landlock"));
  if (RunProbe(options, {"/bin/cat", "/etc/passwd"}, "").ok())
    return absl::FailedPreconditionError("Landlock does not confine reads here");
  return absl::OkStatus();
}

absl::StatusOr<Isolation> ResolveIsolation(SandboxMode mode, const std::string& bwrap,
                                           std::string* warning) {
  if (mode == SandboxMode::kOff) return Isolation::kNone;
  absl::Status namespaces = absl::FailedPreconditionError("not asked for");
  if (mode != SandboxMode::kLandlock) {
    namespaces = ProbeNamespaces(bwrap);
    if (namespaces.ok()) return Isolation::kNamespaces;
    if (mode == SandboxMode::kNamespaces)
      return absl::FailedPreconditionError(
          Cat("--sandbox=namespaces: ", std::string(namespaces.message())));
  }
  absl::Status landlock = ProbeLandlock();
  if (landlock.ok()) {
    if (warning && mode == SandboxMode::kAuto)
      *warning = Cat("engines run confined by Landlock, without namespaces: ",
                     std::string(namespaces.message()));
    return Isolation::kLandlock;
  }
  if (mode == SandboxMode::kLandlock)
    return absl::FailedPreconditionError(
        Cat("--sandbox=landlock: ", std::string(landlock.message())));
  if (warning)
    *warning = Cat("engines run with resource limits only, without namespaces (",
                   std::string(namespaces.message()), ") or Landlock (",
                   std::string(landlock.message()), ")");
  return Isolation::kLimits;
}

absl::StatusOr<ProcessSpec> Sandboxed(const SandboxOptions& options, ProcessSpec spec,
                                      const std::string& private_dir) {
  if (options.isolation == Isolation::kNone) return spec;
  if (spec.argv.empty() || spec.argv[0].empty())
    return absl::InvalidArgumentError("engine command is empty");
  const ResourceLimits& l = options.limits;
  constexpr uint64_t kMb = 1024 * 1024;
  auto limit = [&](int resource, uint64_t soft, uint64_t hard) {
    if (soft > 0) spec.rlimits.push_back({resource, soft, hard});
  };
  limit(RLIMIT_AS, l.memory_mb * kMb, l.memory_mb * kMb);
  limit(RLIMIT_NPROC, l.processes, l.processes);
  limit(RLIMIT_NOFILE, l.open_files, l.open_files);
  limit(RLIMIT_FSIZE, l.file_size_mb * kMb, l.file_size_mb * kMb);
  // SIGXCPU at the soft limit (an engine may catch it), SIGKILL a few seconds later.
  limit(RLIMIT_CPU, l.cpu_seconds, l.cpu_seconds + 5);
  spec.no_new_privs = true;
  spec.clear_env = true;
  if (geteuid() == 0 && options.root_drops_to >= 0) {
    spec.uid = EngineUidOf(options, private_dir);
    spec.gid = options.root_drops_to;
  }

  // Resolved here: a relative path would not survive the change of working directory.
  std::string program;
  {
    absl::StatusOr<std::string> p = ResolveProgram(spec.argv[0]);
    if (!p.ok()) return p.status();
    program = *std::move(p);
  }
  std::vector<std::string> env = {Cat("PATH=", kPath), Cat("HOME=", private_dir)};
  for (const std::string& e : spec.env) env.push_back(e);
  std::string filter;
  const bool bwrap = options.isolation == Isolation::kNamespaces;
  if (options.seccomp) {
    absl::StatusOr<std::string> f = EngineSeccompFilter(!bwrap);
    if (!f.ok()) return f.status();
    filter = *std::move(f);
  }
  if (options.isolation == Isolation::kLandlock) {
    // What the engine may read: the system's programs and libraries, ld.so's files, a few device
    // and CPU description files, its own binary and directory; and write: its private directory.
    std::vector<LandlockPath> paths;
    for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                          "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/dev/zero",
                          "/dev/urandom", "/dev/random", "/proc/cpuinfo", "/proc/meminfo",
                          "/proc/stat", "/sys/devices/system/cpu", "/sys/devices/system/node"})
      paths.push_back({p, LandlockPath::kRead});
    paths.push_back({"/dev/null", LandlockPath::kReadWrite});
    // A sanitizer's runtime reads /proc/self (maps, status) as the engine starts: instrumented
    // builds (tests only) let it, and so see the host's /proc.
    if (kSanitizerBuild) paths.push_back({"/proc", LandlockPath::kRead});
    paths.push_back({program, LandlockPath::kRead});
    for (const std::string& p : options.read_only)
      if (access(p.c_str(), F_OK) == 0) paths.push_back({p, LandlockPath::kRead});
    if (!spec.cwd.empty()) paths.push_back({spec.cwd, LandlockPath::kRead});
    paths.push_back({private_dir, LandlockPath::kReadWrite});
    absl::StatusOr<int> ruleset = LandlockRuleset(paths);
    if (!ruleset.ok()) return ruleset.status();
    spec.landlock_fd = OwnFd(*ruleset);
  }
  if (!bwrap) {
    spec.seccomp_bpf = std::move(filter);
    spec.argv[0] = program;
    if (spec.cwd.empty()) spec.cwd = private_dir;
    spec.env = std::move(env);
    return spec;
  }

  std::vector<std::string> a = {options.bwrap,   "--unshare-all", "--die-with-parent",
                                "--new-session", "--cap-drop",    "ALL"};
  if (!filter.empty()) {
    absl::StatusOr<int> fd = MemFdWith(filter);
    if (!fd.ok()) return fd.status();
    spec.inherit_fd = OwnFd(*fd);
    a.push_back("--seccomp");
    a.push_back(std::to_string(*fd));
  }
  AddSystem(a);
  for (const std::string& p : options.read_only)
    for (const std::string& w : {std::string("--ro-bind-try"), p, p}) a.push_back(w);
  // The empty /tmp first: binds after it stay visible (an engine or a checkout under /tmp).
  for (const char* w : {"--proc", "/proc", "--dev", "/dev"}) a.emplace_back(w);
  // Memory-backed, so bounded: an unbounded tmpfs is the host's memory to fill.
  for (const char* dir : {"/tmp", "/dev/shm"}) {
    if (l.disk_mb > 0) {
      a.emplace_back("--size");
      a.push_back(std::to_string(l.disk_mb * kMb));
    }
    a.emplace_back("--tmpfs");
    a.emplace_back(dir);
  }
  if (!Under(program, "/usr")) {
    for (const char* w : {"--ro-bind", program.c_str(), program.c_str()}) a.emplace_back(w);
  }
  if (!spec.cwd.empty()) {
    for (const std::string& w : {std::string("--ro-bind"), spec.cwd, spec.cwd}) a.push_back(w);
  }
  for (const std::string& w : {std::string("--bind"), private_dir, private_dir,
                               std::string("--chdir"), private_dir, std::string("--clearenv")})
    a.push_back(w);
  for (const std::string& e : env) {
    const size_t eq = e.find('=');
    for (const std::string& w : {std::string("--setenv"), e.substr(0, eq), e.substr(eq + 1)})
      a.push_back(w);
  }
  a.emplace_back("--");
  a.push_back(program);
  for (size_t i = 1; i < spec.argv.size(); ++i) a.push_back(spec.argv[i]);
  spec.argv = std::move(a);
  spec.cwd.clear();
  spec.env = {Cat("PATH=", kPath)};
  return spec;
}

namespace {

std::string WorkRoot(const SandboxOptions& options) {
  if (!options.work_root.empty()) return options.work_root;
  const char* tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

}  // namespace

absl::StatusOr<std::string> MakePrivateDir(const SandboxOptions& options) {
  const std::string root = WorkRoot(options);
  std::string templ = Cat(root, "/arbiter-engine-", getpid(), "-XXXXXX");
  if (!mkdtemp(templ.data()))
    return absl::FailedPreconditionError(
        Cat("cannot make the engine's working directory in '", root, "': ", strerror(errno)));
  const int id = options.root_drops_to;
  if (geteuid() != 0 || id < 0) return templ;
  // The engine's own user (match/engine_users.h), or the box's shared one.
  absl::StatusOr<std::optional<uid_t>> own = AcquireEngineUser();
  if (!own.ok()) {
    rmdir(templ.c_str());
    return own.status();
  }
  const uid_t uid = own->value_or(uid_t(id));
  if (chown(templ.c_str(), uid, gid_t(id)) != 0) {
    const int e = errno;
    rmdir(templ.c_str());
    if (*own) ReleaseEngineUser(uid);
    return absl::FailedPreconditionError(
        Cat("cannot hand '", templ, "' to user ", uid, ": ", strerror(e)));
  }
  return templ;
}

int EngineUidOf(const SandboxOptions& options, const std::string& private_dir) {
  struct stat st;
  if (stat(private_dir.c_str(), &st) == 0 && IsEngineUser(st.st_uid)) return int(st.st_uid);
  return options.root_drops_to;
}

void RemovePrivateDir(const std::string& dir) {
  if (dir.empty()) return;
  // The engine's user: whatever it left running goes first, then its files, then the user.
  struct stat st;
  const bool own = stat(dir.c_str(), &st) == 0 && IsEngineUser(st.st_uid);
  if (own) KillEngineUser(st.st_uid);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (own) ReleaseEngineUser(st.st_uid);
}

std::optional<double> ProcessStartTime(pid_t pid) {
  // /proc/self also when the pid is ours: in a pid namespace the mounted /proc may be the host's.
  std::ifstream in(pid == getpid() ? std::string("/proc/self/stat") : Cat("/proc/", pid, "/stat"));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // Field 22, starttime, in clock ticks since boot; the command (field 2) may hold spaces and
  // parentheses, so count from the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  double ticks = 0;
  if (!fields || !ParseNumber(field, ticks)) return std::nullopt;
  timespec real{}, boot{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  const double booted = (real.tv_sec - boot.tv_sec) + (real.tv_nsec - boot.tv_nsec) * 1e-9;
  return booted + ticks / double(sysconf(_SC_CLK_TCK));
}

bool LeftByGoneProcess(pid_t pid, const std::string& path) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  // The pid may belong to a later process: a restarted container's PID 1 has the number of the
  // one that was killed. The status time (ctime), unlike the modification time, cannot be set
  // back by what unpacks into a directory; a second of slack for the clocks' rounding.
  struct stat st;
  const std::optional<double> started = ProcessStartTime(pid);
  if (!started || stat(path.c_str(), &st) != 0) return false;
  return st.st_ctim.tv_sec + st.st_ctim.tv_nsec * 1e-9 < *started - 1.0;
}

int RemoveStalePrivateDirs(const SandboxOptions& options) {
  int removed = 0;
  std::error_code ec;
  constexpr std::string_view kPrefix = "arbiter-engine-";
  for (const auto& entry : std::filesystem::directory_iterator(WorkRoot(options), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, kPrefix.size(), kPrefix) != 0) continue;
    const std::string_view rest = std::string_view(name).substr(kPrefix.size());
    const size_t dash = rest.find('-');
    long pid = 0;
    if (dash == std::string_view::npos || !ParseNumber(rest.substr(0, dash), pid) || pid <= 0)
      continue;
    // Left by a crash or a kill -9.
    if (!LeftByGoneProcess(pid_t(pid), entry.path().string())) continue;
    std::error_code rm;
    std::filesystem::remove_all(entry.path(), rm);
    removed += !rm;
  }
  return removed;
}

std::string DescribeExit(int wait_status) {
  const int code = ExitCode(wait_status);
  if (code <= 128 || code >= 128 + NSIG) return Cat("exited with code ", code);
  const int sig = code - 128;
  std::string_view what;
  switch (sig) {
    case SIGXCPU:
      what = " (CPU time limit)";
      break;
    case SIGXFSZ:
      what = " (file size limit)";
      break;
    case SIGKILL:
      what = " (killed)";
      break;
    case SIGABRT:
      what = " (aborted, e.g. a failed allocation)";
      break;
    case SIGSEGV:
      what = " (segmentation fault)";
      break;
    default:
      break;
  }
  const char* abbrev = sigabbrev_np(sig);
  return Cat("exited with SIG", abbrev ? abbrev : std::to_string(sig).c_str(), what);
}

}  // namespace arbiter::match

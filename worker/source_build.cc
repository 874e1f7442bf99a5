#include "worker/source_build.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <vector>

#include "base/status_macros.h"
#include "base/strings.h"
#include "match/disk_watch.h"
#include "match/process.h"
#include "net/sha256.h"
#include "spdlog/spdlog.h"

namespace arbiter::worker {
namespace fs = std::filesystem;
namespace {

// The box's PATH (match/sandbox.cc): where a build finds its tools.
constexpr const char* kToolDirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
constexpr std::string_view kArchiveName = ".arbiter-source.tar.gz";
constexpr std::string_view kTmpName = ".arbiter-tmp";

std::string FindTool(std::string_view name) {
  for (const char* dir : kToolDirs) {
    std::string path = Cat(dir, "/", name);
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// The first line `tool --version` prints, or empty.
std::string FirstLineOf(const std::string& tool) {
  absl::StatusOr<std::unique_ptr<match::Subprocess>> p =
      match::Subprocess::Start({.argv = {tool, "--version"}, .env = {"LC_ALL=C"}});
  if (!p.ok()) return "";
  (*p)->CloseInput();
  match::OutputLine line;
  std::string first;
  const auto deadline = match::SteadyClock::now() + std::chrono::seconds(10);
  while ((*p)->ReadLine(deadline, line) == match::ReadResult::kLine)
    if (first.empty()) first = line.text;
  const int status = (*p)->WaitOrKill(std::chrono::milliseconds(1000));
  return match::ExitCode(status) == 0 ? std::string(Strip(first)) : "";
}

// A fd holding an exclusive flock on `path` (blocks until the lock is free), or -1.
int LockFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  }
  return fd;
}

// The executables (any x bit) under `root`, relative, symbolic links not followed.
std::set<std::string> Executables(const fs::path& root) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(root);
    if (rel.begin() != rel.end() && *rel.begin() == kTmpName) {
      it.disable_recursion_pending();
      continue;
    }
    std::error_code sec;
    const fs::file_status st = it->symlink_status(sec);
    if (sec || !fs::is_regular_file(st)) continue;
    if ((st.permissions() & (fs::perms::owner_exec | fs::perms::group_exec |
                             fs::perms::others_exec)) != fs::perms::none)
      out.insert(rel.string());
  }
  return out;
}

// The last `max_bytes` of `text`, starting at a line.
std::string Tail(const std::string& text, size_t max_bytes) {
  std::string_view t = Strip(text);
  if (t.size() <= max_bytes) return std::string(t);
  t = t.substr(t.size() - max_bytes);
  if (size_t nl = t.find('\n'); nl != std::string_view::npos) t = t.substr(nl + 1);
  return std::string(t);
}

// The build log's tail for a message: the first line that reports an error (the compiler's,
// which the tail may have scrolled past), then the last lines.
std::string LogSummary(const std::string& log) {
  std::string first_error;
  for (std::string_view line : Split(log, '\n'))
    if (line.find("error") != std::string_view::npos ||
        line.find("Error") != std::string_view::npos) {
      first_error = std::string(Strip(line)).substr(0, 300);
      break;
    }
  std::string tail = Tail(log, 560);
  if (first_error.empty() || tail.find(first_error) != std::string::npos) return tail;
  return Cat(first_error, "\n...\n", tail);
}

struct BoxedRun {
  const match::SandboxOptions& box;
  const BuildLimits& limits;
  const std::string& dir;  // the private directory the command runs in
  match::SteadyTime deadline;
};

// Why the tree of `run` is over its disk limit, or empty.
std::string DiskLimitHit(const BoxedRun& run) {
  const std::optional<uint64_t> used = match::TreeBytes(run.dir);
  if (!used) return "part of its tree could not be read to measure its disk use";
  if (*used > run.limits.disk_bytes)
    return Cat("its tree passed the disk limit of ", run.limits.disk_bytes >> 20, " MiB");
  return "";
}

// Runs `argv` in the box in `run.dir`; its stdout and stderr go to `log` (the end of them).
// FAILED_PRECONDITION naming the limit hit or the exit status.
absl::Status RunBoxed(const BoxedRun& run, std::vector<std::string> argv,
                      std::vector<std::string> env, const std::string& what, std::string& log) {
  match::ProcessSpec ps{.argv = std::move(argv), .env = std::move(env)};
  match::SandboxOptions box = run.box;
  box.read_only.push_back("/etc/alternatives");  // Debian's cc and c++ are links through it
  if (run.limits.cpu_seconds > 0 &&
      (box.limits.cpu_seconds == 0 || run.limits.cpu_seconds < box.limits.cpu_seconds))
    box.limits.cpu_seconds = run.limits.cpu_seconds;
  if (box.isolation == match::Isolation::kNone) {
    // No box (arbiter local's workers, a local match by default): the per-process limits that
    // cannot hurt the rest of the user's processes still apply.
    ps.cwd = run.dir;
    const uint64_t cpu = box.limits.cpu_seconds;
    if (cpu > 0) ps.rlimits.push_back({RLIMIT_CPU, cpu, cpu + 5});
    const uint64_t fsize = box.limits.file_size_mb << 20;
    if (fsize > 0) ps.rlimits.push_back({RLIMIT_FSIZE, fsize, fsize});
  } else {
    absl::StatusOr<match::ProcessSpec> boxed = match::Sandboxed(box, std::move(ps), run.dir);
    if (!boxed.ok())
      return absl::FailedPreconditionError(
          Cat(what, ": cannot box it: ", std::string(boxed.status().message())));
    ps = *std::move(boxed);
  }
  absl::StatusOr<std::unique_ptr<match::Subprocess>> started = match::Subprocess::Start(ps);
  if (!started.ok())
    return absl::FailedPreconditionError(
        Cat(what, ": cannot start: ", std::string(started.status().message())));
  match::Subprocess& p = **started;
  p.CloseInput();
  std::deque<std::string> out_tail;  // stdout's last lines (make echoes its commands there)
  std::string limit_hit;
  match::OutputLine line;
  match::SteadyTime next_disk_check = match::SteadyClock::now();
  for (;;) {
    const match::SteadyTime now = match::SteadyClock::now();
    if (now >= next_disk_check) {
      next_disk_check = now + std::chrono::milliseconds(500);
      limit_hit = DiskLimitHit(run);
      if (!limit_hit.empty()) break;
    }
    const match::ReadResult r =
        p.ReadLine(std::min(run.deadline, now + std::chrono::milliseconds(200)), line);
    if (p.StdoutBytes() + p.StderrBytes() > run.limits.output_bytes) {
      limit_hit = Cat("its output passed the limit of ", run.limits.output_bytes >> 20, " MiB");
      break;
    }
    if (r == match::ReadResult::kLine) {
      out_tail.push_back(std::move(line.text));
      if (out_tail.size() > 40) out_tail.pop_front();
      continue;
    }
    if (r == match::ReadResult::kEof) break;
    if (match::SteadyClock::now() >= run.deadline) {
      limit_hit = Cat("it did not finish within the wall-clock limit of ",
                      int64_t(run.limits.wall_seconds), " s");
      break;
    }
    if (p.Exited()) break;  // what it left behind holds the pipe: killed below
  }
  const int status = p.WaitOrKill(limit_hit.empty() ? std::chrono::milliseconds(2000)
                                                    : std::chrono::milliseconds(0));
  // Whatever the build started and left behind (a daemon) goes with its process group.
  kill(-p.pid(), SIGKILL);
  // Once more at the end: an archive that unpacks too much does so between two checks.
  if (limit_hit.empty()) limit_hit = DiskLimitHit(run);
  p.WaitStderrClosed(match::SteadyClock::now() + std::chrono::milliseconds(500));
  for (const std::string& l : out_tail) log += Cat(l, "\n");
  log += p.StderrTail();
  if (!limit_hit.empty())
    return absl::FailedPreconditionError(Cat(what, " was killed: ", limit_hit));
  if (match::ExitCode(status) != 0) {
    std::string why = match::DescribeExit(status);
    if (match::ExitCode(status) == 128 + SIGXCPU)
      why += Cat(", limit ", box.limits.cpu_seconds, " s of CPU per process");
    if (match::ExitCode(status) == 128 + SIGXFSZ)
      why += Cat(", limit ", box.limits.file_size_mb, " MiB per file");
    return absl::FailedPreconditionError(Cat(what, " ", why));
  }
  return absl::OkStatus();
}

}  // namespace

std::string DetectToolchain() {
  const std::string cc = FindTool("cc"), make = FindTool("make");
  if (cc.empty() || make.empty()) return "";
  const std::string cc_version = FirstLineOf(cc), make_version = FirstLineOf(make);
  if (cc_version.empty() || make_version.empty()) return "";
  std::string out = Cat(cc_version, "; ", make_version);
  if (const std::string cxx = FindTool("c++"); !cxx.empty())
    if (const std::string v = FirstLineOf(cxx); !v.empty() && v != cc_version) out += Cat("; ", v);
  return out.substr(0, 256);
}

std::string MarchOfLevel(int cpu_level) {
  return cpu_level <= 1 ? "x86-64" : Cat("x86-64-v", std::min(cpu_level, 4));
}

bool IsTreePath(std::string_view path) {
  if (path.empty() || path[0] == '/' || path.size() > 256) return false;
  for (std::string_view part : Split(path, '/'))
    if (part == "..") return false;
  return true;
}

SourceBuilder::SourceBuilder(SourceBuilderOptions options) : options_(std::move(options)) {
  if (options_.toolchain.empty()) options_.toolchain = DetectToolchain();
}

absl::StatusOr<BuiltEngine> SourceBuilder::Build(const BuildRequest& request) {
  if (!net::IsSha256Hex(request.sha256))
    return absl::InvalidArgumentError(Cat("source sha256 must be 64 lowercase hex digits"));
  if (!request.binary.empty() && !IsTreePath(request.binary))
    return absl::InvalidArgumentError(
        Cat("binary '", request.binary, "' is not a path inside the tree"));
  if (options_.toolchain.empty())
    return absl::FailedPreconditionError("this machine cannot build engines (no cc or make)");
  const std::string build = request.build.empty() ? "make" : request.build;
  const std::string key =
      net::Sha256Hex(Cat("arbiter-build-1\n", request.sha256, "\n", build, "\n", request.binary,
                         "\n", request.cpu_level, "\n", options_.toolchain));
  std::error_code ec;
  fs::create_directories(options_.dir, ec);
  if (ec)
    return absl::InternalError(
        Cat("cannot create build cache '", options_.dir, "': ", ec.message()));
  const bool grouped = options_.engine_gid >= 0;
  if (grouped && chown(options_.dir.c_str(), uid_t(-1), gid_t(options_.engine_gid)) != 0)
    spdlog::warn("cannot give '{}' to group {}: {}", options_.dir, options_.engine_gid,
                 strerror(errno));
  chmod(options_.dir.c_str(), grouped ? 0710 : 0700);
  const std::string out = (fs::path(options_.dir) / key).string();
  // One build of a key at a time, here and in any other process with this cache.
  const int lock = LockFile(Cat(out, ".lock"));
  if (lock < 0) return absl::InternalError(Cat("cannot lock '", out, ".lock': ", strerror(errno)));
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }
  } unlock{lock};
  if (fs::is_regular_file(out, ec)) {
    utimensat(AT_FDCWD, out.c_str(), nullptr, 0);  // recently used: evicted last
    return BuiltEngine{.path = out, .cached = true};
  }
  const auto start = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(BuildInto(request, out));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("built source {} ('{}', {}) in {:.1f} s", request.sha256.substr(0, 12), build,
               MarchOfLevel(request.cpu_level), seconds);
  Evict(out);
  return BuiltEngine{.path = out, .cached = false, .seconds = seconds};
}

absl::Status SourceBuilder::BuildInto(const BuildRequest& request, const std::string& out) {
  const std::string build = request.build.empty() ? "make" : request.build;
  absl::StatusOr<std::string> made = match::MakePrivateDir(options_.box);
  if (!made.ok()) return made.status();
  const std::string dir = *made;
  struct Remove {
    std::string dir;
    ~Remove() { match::RemovePrivateDir(dir); }
  } remove{dir};
  const std::string copy = (fs::path(dir) / kArchiveName).string();
  std::error_code ec;
  fs::copy_file(request.archive, copy, ec);
  if (ec) return absl::InternalError(Cat("cannot copy the source archive: ", ec.message()));
  chmod(copy.c_str(), 0444);
  const BoxedRun run{
      .box = options_.box,
      .limits = options_.limits,
      .dir = dir,
      .deadline = match::SteadyClock::now() +
                  std::chrono::milliseconds(int64_t(options_.limits.wall_seconds * 1000))};
  std::string log;
  // Unpacked in the box too: a hostile archive's paths meet the box's rules, not the worker's.
  RETURN_IF_ERROR(RunBoxed(run, {"tar", "--no-same-owner", "-xzf", std::string(kArchiveName)},
                           {"LC_ALL=C"}, "unpacking the source", log));
  fs::remove(copy, ec);
  const std::set<std::string> before = Executables(dir);
  const std::string tmp = (fs::path(dir) / kTmpName).string();
  fs::create_directory(tmp, ec);
  if (geteuid() == 0 && options_.box.isolation != match::Isolation::kNone &&
      options_.box.root_drops_to >= 0 &&
      chown(tmp.c_str(), uid_t(match::EngineUidOf(options_.box, dir)),
            gid_t(options_.box.root_drops_to)) != 0)
    return absl::InternalError(Cat("cannot hand the build's temporary directory ", tmp,
                                   " to the box's user: ", std::strerror(errno)));
  const std::vector<std::string> env = {
      Cat("ARBITER_CPU_LEVEL=v", std::clamp(request.cpu_level, 1, 4)),
      Cat("ARBITER_MARCH=", MarchOfLevel(request.cpu_level)), Cat("TMPDIR=", tmp), "LC_ALL=C"};
  log.clear();
  if (absl::Status st =
          RunBoxed(run, {"/bin/sh", "-c", build}, env, Cat("build '", build, "'"), log);
      !st.ok())
    return absl::FailedPreconditionError(
        Cat(std::string(st.message()), log.empty() ? "" : Cat("; log tail:\n", LogSummary(log))));
  std::string binary = request.binary;
  if (binary.empty()) {
    std::vector<std::string> made_now;
    for (const std::string& e : Executables(dir))
      if (!before.contains(e)) made_now.push_back(e);
    if (made_now.size() != 1) {
      std::string list;
      for (size_t i = 0; i < made_now.size() && i < 8; ++i) list += Cat(i ? ", " : "", made_now[i]);
      return absl::FailedPreconditionError(
          made_now.empty()
              ? Cat("build '", build, "' made no executable; give binary=PATH")
              : Cat("build '", build, "' made several executables (", list, "); give binary=PATH"));
    }
    binary = made_now[0];
  }
  // The binary must be a file of the tree (a symbolic link may not lead out of it).
  const fs::path root = fs::canonical(dir, ec);
  const fs::path real = fs::canonical(fs::path(dir) / binary, ec);
  auto [end, _] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  if (ec || end != root.end() || !fs::is_regular_file(real, ec))
    return absl::FailedPreconditionError(
        Cat("build '", build, "' did not make '", binary, "' (no such file in the tree)"));
  const std::string temp = Cat(out, ".part.", getpid());
  fs::copy_file(real, temp, fs::copy_options::overwrite_existing, ec);
  if (ec) return absl::InternalError(Cat("cannot cache the build: ", ec.message()));
  const bool grouped = options_.engine_gid >= 0;
  if (grouped && chown(temp.c_str(), uid_t(-1), gid_t(options_.engine_gid)) != 0)
    spdlog::warn("cannot give '{}' to group {}: {}", temp, options_.engine_gid, strerror(errno));
  chmod(temp.c_str(), grouped ? 0550 : 0500);
  fs::rename(temp, out, ec);
  if (ec) return absl::InternalError(Cat("cannot cache the build: ", ec.message()));
  return absl::OkStatus();
}

void SourceBuilder::Evict(const std::string& keep) {
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    std::string path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.dir, ec)) {
    const std::string path = e.path().string();
    if (path.ends_with(".lock") || path.find(".part.") != std::string::npos) continue;
    std::error_code sec;
    const uint64_t size = e.file_size(sec);
    if (sec) continue;
    total += size;
    entries.push_back({e.last_write_time(sec), size, path});
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= options_.cache_bytes) break;
    if (e.path == keep) continue;
    // Under its key's lock, so that a build of that key is not evicted as it finishes.
    const int lock = open(Cat(e.path, ".lock").c_str(), O_RDWR | O_CLOEXEC);
    if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0) {
      std::error_code rec;
      if (fs::remove(e.path, rec)) {
        total -= e.size;
        spdlog::info("build cache: evicted {} ({} bytes)", e.path, e.size);
      }
    }
    if (lock >= 0) close(lock);
  }
}

}  // namespace arbiter::worker

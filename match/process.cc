#include "match/process.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <mutex>

#include "absl/time/time.h"
#include "base/strings.h"
#include "match/landlock.h"

extern char** environ;

namespace arbiter::match {
namespace {

// Writes to a pipe whose reader died must fail with EPIPE, not kill us.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { signal(SIGPIPE, SIG_IGN); });
}

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

absl::Time ToAbsl(SteadyTime t) { return absl::Now() + absl::FromChrono(t - SteadyClock::now()); }

// Environment for the child: ours with `extra` ("KEY=VALUE") added or replacing.
std::vector<std::string> MergeEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    std::string_view key = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : extra)
      if (std::string_view(x).substr(0, x.find('=')) == key) replaced = true;
    if (!replaced) env.emplace_back(entry);
  }
  for (const std::string& x : extra) env.push_back(x);
  return env;
}

}  // namespace

std::shared_ptr<const int> OwnFd(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    if (*p >= 0) close(*p);
    delete p;
  });
}

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string("arbiter");
}

int ExitCode(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const ProcessSpec& spec,
                                                              const ProcessLimits& limits) {
  if (spec.argv.empty() || spec.argv[0].empty())
    return absl::InvalidArgumentError("engine command is empty");
  for (const std::string& e : spec.env)
    if (e.find('=') == std::string::npos || e.front() == '=')
      return absl::InvalidArgumentError(Cat("environment entry '", e, "' is not KEY=VALUE"));
  IgnoreSigpipeOnce();

  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::vector<std::string> env_strings = spec.clear_env ? spec.env : MergeEnv(spec.env);
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : spec.cpus) CPU_SET(c, &cpus);

  int in[2], out[2], err[2], status_pipe[2];
  if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) ||
      pipe2(status_pipe, O_CLOEXEC))
    return absl::InternalError(Cat("pipe: ", strerror(errno)));
  int err_file = -1;
  if (!spec.stderr_path.empty()) {
    err_file = open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err_file < 0)
      return absl::FailedPreconditionError(
          Cat("cannot open '", spec.stderr_path, "' for stderr: ", strerror(errno)));
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  const bool set_cpus = !spec.cpus.empty();
  const int inherit_fd = spec.inherit_fd ? *spec.inherit_fd : -1;
  const int landlock_fd = spec.landlock_fd ? *spec.landlock_fd : -1;
  if (spec.seccomp_bpf.size() % sizeof(sock_filter) != 0 ||
      spec.seccomp_bpf.size() / sizeof(sock_filter) > BPF_MAXINSNS)
    return absl::InvalidArgumentError("seccomp filter is not a BPF program");
  // prctl does not write through the pointer; the string outlives the fork.
  sock_fprog seccomp{static_cast<unsigned short>(spec.seccomp_bpf.size() / sizeof(sock_filter)),
                     reinterpret_cast<sock_filter*>(const_cast<char*>(spec.seccomp_bpf.data()))};

  // Orphans of an engine (it cannot leave its group without namespaces: the filter refuses
  // setsid) come to us rather than to the container's PID 1, which may never reap them.
  static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  (void)subreaper;
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1], status_pipe[0], status_pipe[1]})
      close(fd);
    if (err_file >= 0) close(err_file);
    return absl::InternalError(Cat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    // Child: report the failing step and errno through status_pipe (closed by a successful exec).
    auto fail = [&](int step) {
      int msg[2] = {step, errno};
      ssize_t w = write(status_pipe[1], msg, sizeof msg);
      (void)w;
      _exit(127);
    };
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err_file >= 0 ? err_file : err[1], 2) < 0)
      fail(0);
    if (cwd && chdir(cwd) != 0) fail(1);
    if (set_cpus && sched_setaffinity(0, sizeof cpus, &cpus) != 0) fail(2);
    for (const ProcessSpec::RLimit& l : spec.rlimits) {
      const rlimit r{rlim_t(l.soft), rlim_t(l.hard)};
      if (setrlimit(l.resource, &r) != 0) fail(4);
    }
    if (spec.gid >= 0 && (setgroups(0, nullptr) != 0 || setresgid(spec.gid, spec.gid, spec.gid)))
      fail(6);
    if (spec.uid >= 0 && setresuid(spec.uid, spec.uid, spec.uid) != 0) fail(6);
    if (spec.no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(5);
    // Nothing of ours leaks into the engine: every descriptor above stderr closes at exec (the
    // status pipe still reports a failure until then), except the one it is meant to get.
    close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
    if (inherit_fd >= 0 && fcntl(inherit_fd, F_SETFD, 0) != 0) fail(7);
    if (landlock_fd >= 0 && LandlockRestrictSelf(landlock_fd) != 0) fail(9);
    if (seccomp.len > 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &seccomp) != 0) fail(8);
    execvpe(argv[0], argv.data(), envp.data());
    fail(3);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  close(status_pipe[1]);
  if (err_file >= 0) close(err_file);
  int msg[2];
  ssize_t got;
  do {
    got = read(status_pipe[0], msg, sizeof msg);
  } while (got < 0 && errno == EINTR);
  close(status_pipe[0]);
  if (got == sizeof msg) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    waitpid(pid, nullptr, 0);
    static const char* kSteps[] = {"dup2",
                                   "chdir",
                                   "sched_setaffinity",
                                   "exec",
                                   "setrlimit",
                                   "prctl(PR_SET_NO_NEW_PRIVS)",
                                   "setuid",
                                   "keeping the descriptor for bwrap",
                                   "loading the seccomp filter",
                                   "applying the Landlock ruleset"};
    std::string what = msg[0] == 1 ? Cat(" to '", spec.cwd, "'") : Cat(" '", spec.argv[0], "'");
    return absl::FailedPreconditionError(
        Cat("cannot start engine: ", kSteps[unsigned(msg[0]) % std::size(kSteps)], what, ": ",
            strerror(msg[1])));
  }
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  auto p = std::unique_ptr<Subprocess>(new Subprocess(pid, in[1], out[0], err[0], wake, limits));
  if (!spec.traffic_log.empty()) {
    absl::MutexLock lock(&p->log_mu_);
    p->log_ = std::fopen(spec.traffic_log.c_str(), "ae");
  }
  p->io_thread_ = std::thread([raw = p.get()] { raw->IoLoop(); });
  return p;
}

Subprocess::Subprocess(int pid, int in, int out, int err, int wake, const ProcessLimits& limits)
    : pid_(pid), in_fd_(in), out_fd_(out), err_fd_(err), wake_fd_(wake), limits_(limits) {}

Subprocess::~Subprocess() {
  CloseFd(in_fd_);
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    Reap(true);
  }
  uint64_t one = 1;
  ssize_t w = write(wake_fd_, &one, sizeof one);
  (void)w;
  if (io_thread_.joinable()) io_thread_.join();
  CloseFd(out_fd_);
  CloseFd(err_fd_);
  CloseFd(wake_fd_);
  absl::MutexLock lock(&log_mu_);
  if (log_) std::fclose(log_);
}

void Subprocess::LogTraffic(char direction, std::string_view line) {
  absl::MutexLock lock(&log_mu_);
  if (!log_) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = int(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  gmtime_r(&t, &tm);
  char stamp[40];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  std::fprintf(log_, "%s.%03dZ %c %.*s\n", stamp, ms, direction, int(line.size()), line.data());
  std::fflush(log_);
}

void Subprocess::IoLoop() {
  char buf[65536];
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    pollfd fds[3] = {{out_open ? out_fd_ : -1, POLLIN, 0},
                     {err_open ? err_fd_ : -1, POLLIN, 0},
                     {wake_fd_, POLLIN, 0}};
    int r = poll(fds, 3, -1);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents) break;
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      for (;;) {
        ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n > 0) {
          SteadyTime now = SteadyClock::now();
          if (i == 0) {
            ConsumeStdout(buf, size_t(n), now);
          } else {
            absl::MutexLock lock(&mu_);
            err_bytes_ += n;
            const size_t cap = limits_.stderr_ring_bytes;
            for (ssize_t k = 0; k < n && cap > 0; ++k) {
              if (err_ring_.size() < cap) {
                err_ring_.push_back(buf[k]);
              } else {
                err_ring_[err_pos_] = buf[k];
                err_pos_ = (err_pos_ + 1) % cap;
              }
            }
          }
          if (size_t(n) < sizeof buf) break;
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        // EOF or a read error: this stream is done.
        (i == 0 ? out_open : err_open) = false;
        if (i == 0) {
          if (!partial_.empty())
            PushLine(std::move(partial_), partial_truncated_, SteadyClock::now());
          absl::MutexLock lock(&mu_);
          eof_ = true;
        } else {
          absl::MutexLock lock(&mu_);
          err_eof_ = true;
        }
        break;
      }
    }
  }
  absl::MutexLock lock(&mu_);
  eof_ = true;
  err_eof_ = true;  // nothing more will be read
}

void Subprocess::ConsumeStdout(const char* data, size_t n, SteadyTime now) {
  size_t start = 0;
  {
    absl::MutexLock lock(&mu_);
    out_bytes_ += n;
  }
  while (start < n) {
    const char* nl = static_cast<const char*>(memchr(data + start, '\n', n - start));
    size_t end = nl ? size_t(nl - data) : n;
    size_t room =
        limits_.max_line_bytes > partial_.size() ? limits_.max_line_bytes - partial_.size() : 0;
    size_t take = end - start;
    if (take > room) {
      take = room;
      partial_truncated_ = true;
    }
    partial_.append(data + start, take);
    if (!nl) break;
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    PushLine(std::move(partial_), partial_truncated_, now);
    partial_.clear();
    partial_truncated_ = false;
    start = end + 1;
  }
}

void Subprocess::PushLine(std::string&& text, bool truncated, SteadyTime now) {
  LogTraffic('<', text);
  absl::MutexLock lock(&mu_);
  if (pending_bytes_ > limits_.max_pending_bytes && text.compare(0, 4, "info") == 0) {
    ++dropped_;
    return;
  }
  pending_bytes_ += text.size();
  if (EndsSearch(text)) ++pending_bestmoves_;
  lines_.push_back(OutputLine{std::move(text), now, truncated});
}

ReadResult Subprocess::ReadLine(SteadyTime deadline, OutputLine& out) {
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !lines_.empty() || eof_; };
  mu_.LockWhenWithDeadline(absl::Condition(&ready), ToAbsl(deadline));
  ReadResult r = ReadResult::kTimeout;
  if (!lines_.empty()) {
    out = std::move(lines_.front());
    lines_.pop_front();
    pending_bytes_ -= out.text.size();
    if (EndsSearch(out.text)) --pending_bestmoves_;
    r = ReadResult::kLine;
  } else if (eof_) {
    r = ReadResult::kEof;
  }
  mu_.Unlock();
  return r;
}

ReadResult Subprocess::ReadUntilBestmove(SteadyTime deadline, std::vector<OutputLine>& out) {
  auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return pending_bestmoves_ > 0 || eof_; };
  mu_.LockWhenWithDeadline(absl::Condition(&ready), ToAbsl(deadline));
  ReadResult r = pending_bestmoves_ > 0 ? ReadResult::kLine
                 : eof_                 ? ReadResult::kEof
                                        : ReadResult::kTimeout;
  while (!lines_.empty()) {
    OutputLine& line = lines_.front();
    pending_bytes_ -= line.text.size();
    const bool best = EndsSearch(line.text);
    out.push_back(std::move(line));
    lines_.pop_front();
    if (best) {
      --pending_bestmoves_;
      break;
    }
  }
  mu_.Unlock();
  return r;
}

bool Subprocess::EndsSearch(std::string_view line) const {
  for (const std::string& prefix : search_end_)
    if (line.substr(0, prefix.size()) == prefix) return true;
  return false;
}

void Subprocess::SetSearchEnd(std::vector<std::string> prefixes) {
  absl::MutexLock lock(&mu_);
  search_end_ = std::move(prefixes);
  pending_bestmoves_ = 0;
  for (const OutputLine& line : lines_) pending_bestmoves_ += EndsSearch(line.text) ? 1 : 0;
}

void Subprocess::DiscardPending() {
  absl::MutexLock lock(&mu_);
  lines_.clear();
  pending_bytes_ = 0;
  pending_bestmoves_ = 0;
}

void Subprocess::Signal(int sig) {
  if (!reaped_) kill(pid_, sig);
}

void Subprocess::CloseInput() { CloseFd(in_fd_); }

absl::Status Subprocess::WriteLine(std::string_view line, std::chrono::milliseconds timeout) {
  std::string data = Cat(line, '\n');
  size_t off = 0;
  const SteadyTime deadline = SteadyClock::now() + timeout;
  while (off < data.size()) {
    if (in_fd_ < 0) return absl::UnavailableError("engine stdin is closed");
    ssize_t n = write(in_fd_, data.data() + off, data.size() - off);
    if (n > 0) {
      off += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("engine does not read its stdin");
      pollfd p{in_fd_, POLLOUT, 0};
      poll(&p, 1, int(left.count()) + 1);
      continue;
    }
    return absl::UnavailableError(Cat("engine stdin: ", strerror(errno)));
  }
  last_write_ = SteadyClock::now();
  LogTraffic('>', line);
  return absl::OkStatus();
}

namespace {

// An engine's group was killed: members that outlived the engine were reparented to us (a child
// subreaper, set in Start) and are reaped here, so that their zombies do not count against the
// user's process limit (without namespaces the engine shares the worker's user). A member still
// being reparented is waited for, at most a second.
void ReapGroup(pid_t pgid) {
  const SteadyTime deadline = SteadyClock::now() + std::chrono::seconds(1);
  for (;;) {
    const pid_t r = waitpid(-pgid, nullptr, WNOHANG);
    if (r > 0 || (r < 0 && errno == EINTR)) continue;
    if (kill(-pgid, 0) != 0 || SteadyClock::now() > deadline) return;  // the group is empty
    usleep(1000);
  }
}

}  // namespace

void Subprocess::Reap(bool block) {
  if (reaped_) return;
  int status = 0;
  pid_t r;
  do {
    r = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    reaped_ = true;
    wait_status_ = status;
    kill(-pid_, SIGKILL);  // helpers the engine left behind in its group
    ReapGroup(pid_);
  }
}

bool Subprocess::Exited() {
  Reap(false);
  return reaped_;
}

int Subprocess::WaitOrKill(std::chrono::milliseconds grace) {
  const SteadyTime deadline = SteadyClock::now() + grace;
  while (!Exited() && SteadyClock::now() < deadline) usleep(500);
  if (!reaped_) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    Reap(true);
  }
  CloseFd(in_fd_);
  return wait_status_;
}

bool Subprocess::StdoutClosed() const {
  absl::MutexLock lock(&mu_);
  return eof_;
}

bool Subprocess::WaitStderrClosed(SteadyTime deadline) {
  absl::MutexLock lock(&mu_);
  const auto left = deadline - SteadyClock::now();
  return mu_.AwaitWithTimeout(absl::Condition(&err_eof_),
                              absl::FromChrono(std::max(left, SteadyClock::duration::zero())));
}

std::string Subprocess::StderrTail() const {
  absl::MutexLock lock(&mu_);
  if (err_ring_.size() < limits_.stderr_ring_bytes || err_pos_ == 0) return err_ring_;
  return err_ring_.substr(err_pos_) + err_ring_.substr(0, err_pos_);
}

uint64_t Subprocess::StdoutBytes() const {
  absl::MutexLock lock(&mu_);
  return out_bytes_;
}
uint64_t Subprocess::StderrBytes() const {
  absl::MutexLock lock(&mu_);
  return err_bytes_;
}
uint64_t Subprocess::DroppedLines() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

}  // namespace arbiter::match

// A child process with pipes on stdin/stdout/stderr. One I/O thread per process drains stdout
// and stderr through non-blocking reads (so the child can never block on a full pipe), splits
// stdout into bounded lines stamped with the monotonic time they were read, and keeps the end
// of stderr in a bounded ring.
//
//   ASSIGN_OR_RETURN(auto p, Subprocess::Start({.argv = {"/usr/games/stockfish"}}));
//   RETURN_IF_ERROR(p->WriteLine("uci"));
//   OutputLine line;
//   while (p->ReadLine(deadline, line) == ReadResult::kLine) ...
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace arbiter::match {

using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program (searched in PATH if it has no '/')
  std::string cwd;                // empty: inherit
  std::vector<std::string> env;   // "KEY=VALUE" entries added to (or replacing in) ours
  std::vector<int> cpus;          // CPU affinity; empty: inherit
  std::string stderr_path;        // non-empty: stderr is appended to this file, not kept
  // Non-empty: every line written to the child (`>`) and read from its stdout (`<`) is appended
  // to this file, each after the UTC time it was written or read ("2026-12-07T02:40:05.123Z").
  std::string traffic_log;
  // Set in the child before exec (match/sandbox.h fills these in).
  struct RLimit {
    int resource;  // RLIMIT_AS, ...
    uint64_t soft, hard;
  };
  std::vector<RLimit> rlimits;
  bool no_new_privs = false;  // prctl(PR_SET_NO_NEW_PRIVS)
  int uid = -1, gid = -1;     // >= 0: the child drops to this user and group (no others)
  bool clear_env = false;     // the environment is `env` only, not ours plus `env`
  // A seccomp filter (raw BPF: an array of struct sock_filter) loaded in the child last, just
  // before exec (it needs no_new_privs). Empty: none.
  std::string seccomp_bpf;
  // The one descriptor above stderr that the child keeps (every other is closed at exec), e.g.
  // bwrap's --seccomp FD; closed in the parent when the last copy of the spec goes.
  std::shared_ptr<const int> inherit_fd;
  // A Landlock ruleset (match/landlock.h) the child restricts itself to after no_new_privs and
  // before the seccomp filter; null: none.
  std::shared_ptr<const int> landlock_fd;
};

// `fd` owned: closed when the last copy of the pointer goes.
std::shared_ptr<const int> OwnFd(int fd);

struct ProcessLimits {
  size_t max_line_bytes = 64 * 1024;            // longer stdout lines are cut (and marked)
  size_t max_pending_bytes = 32 * 1024 * 1024;  // unread stdout beyond this drops `info` lines
  size_t stderr_ring_bytes = 64 * 1024;         // the end of stderr that is kept
};

struct OutputLine {
  std::string text;
  SteadyTime time;         // when the I/O thread read the line's last byte
  bool truncated = false;  // the line was longer than max_line_bytes
};

enum class ReadResult { kLine, kTimeout, kEof };

// The path of this process's own executable (/proc/self/exe), or "arbiter" if unreadable.
std::string SelfExecutable();

// The exit status of a wait status (as from waitpid), or 128 + the signal that ended it.
int ExitCode(int wait_status);

class Subprocess {
 public:
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const ProcessSpec& spec,
                                                           const ProcessLimits& limits = {});
  ~Subprocess();  // kills the process group if still running and reaps it
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  // Sends `sig` to the child (not to its process group).
  void Signal(int sig);
  // Closes the child's stdin: it reads end of file.
  void CloseInput();

  // Writes `line` plus '\n'; fails if the child closed stdin or did not read within `timeout`.
  absl::Status WriteLine(std::string_view line,
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  // Time at which the last WriteLine finished (the start of the engine's clock for `go`).
  SteadyTime LastWriteTime() const { return last_write_; }

  // Next stdout line, waiting until `deadline`; kEof once stdout closed and all lines were read.
  ReadResult ReadLine(SteadyTime deadline, OutputLine& out);
  // Waits until a line that ends a search (`bestmove`, or one of SetSearchEnd's prefixes) is
  // pending (or EOF, or the deadline), then moves every pending line up to and including that
  // one into `out`: one wake-up per search instead of one per `info` line. kLine when such a line
  // was moved.
  ReadResult ReadUntilBestmove(SteadyTime deadline, std::vector<OutputLine>& out);
  // The prefixes of the lines that end a search (CECP: "move ", "resign", ...); lines already
  // pending are counted again.
  void SetSearchEnd(std::vector<std::string> prefixes);
  // Discards unread stdout lines.
  void DiscardPending();

  // Waits up to `grace` for the child to exit on its own, then kills its process group.
  // Returns the wait status (as from waitpid).
  int WaitOrKill(std::chrono::milliseconds grace);
  bool Exited();  // non-blocking: the child has exited (and was reaped)
  bool StdoutClosed() const;

  // Waits until every byte the child wrote to stderr has been read (its stderr closed) or until
  // `deadline`; true when it was. After the child exits, its last stderr bytes may still be on
  // their way to the I/O thread: StderrTail then can miss them.
  bool WaitStderrClosed(SteadyTime deadline);
  std::string StderrTail() const;
  uint64_t StdoutBytes() const;
  uint64_t StderrBytes() const;
  uint64_t DroppedLines() const;
  int pid() const { return pid_; }

 private:
  Subprocess(int pid, int in, int out, int err, int wake, const ProcessLimits& limits);
  void LogTraffic(char direction, std::string_view line);
  void IoLoop();
  void ConsumeStdout(const char* data, size_t n, SteadyTime now);
  void PushLine(std::string&& text, bool truncated, SteadyTime now);
  void Reap(bool block);

  const int pid_;
  int in_fd_, out_fd_, err_fd_, wake_fd_;
  const ProcessLimits limits_;
  SteadyTime last_write_{};
  bool reaped_ = false;
  int wait_status_ = 0;

  // Only touched by the I/O thread.
  std::string partial_;
  bool partial_truncated_ = false;

  absl::Mutex log_mu_;
  std::FILE* log_ ABSL_GUARDED_BY(log_mu_) = nullptr;

  mutable absl::Mutex mu_;
  std::deque<OutputLine> lines_ ABSL_GUARDED_BY(mu_);
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int pending_bestmoves_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> search_end_ ABSL_GUARDED_BY(mu_) = {"bestmove"};
  bool EndsSearch(std::string_view line) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  bool eof_ ABSL_GUARDED_BY(mu_) = false;
  bool err_eof_ ABSL_GUARDED_BY(mu_) = false;
  std::string err_ring_ ABSL_GUARDED_BY(mu_);
  size_t err_pos_ ABSL_GUARDED_BY(mu_) = 0;  // next write position once the ring is full
  uint64_t out_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t err_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;

  std::thread io_thread_;
};

}  // namespace arbiter::match

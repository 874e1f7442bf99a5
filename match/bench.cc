#include "match/bench.h"

#include <sys/wait.h>

#include <cstdio>
#include <memory>

#include "base/numbers.h"
#include "base/strings.h"
#include "match/process.h"

namespace arbiter::match {
namespace {

// The number after the ':' of "Key  : N", or false.
bool ValueAfterColon(std::string_view line, uint64_t& out) {
  const size_t colon = line.find(':');
  return colon != std::string_view::npos && ParseNumber(Strip(line.substr(colon + 1)), out);
}

// The last `max_bytes` of `text` on one line, for an error message.
std::string Tail(std::string_view text, size_t max_bytes = 200) {
  text = Strip(text);
  if (text.size() > max_bytes) text = text.substr(text.size() - max_bytes);
  std::string out(text);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = '|';
  return out;
}

}  // namespace

absl::StatusOr<BenchResult> ParseBenchOutput(const std::vector<std::string_view>& lines) {
  BenchResult out;
  bool found = false;
  for (std::string_view line : lines) {
    line = Strip(line);
    if (line.rfind("Nodes searched", 0) == 0) {
      if (!ValueAfterColon(line, out.nodes))
        return absl::InvalidArgumentError(Cat("bad bench summary line '", Tail(line, 80), "'"));
      found = true;
    } else if (line.rfind("Nodes/second", 0) == 0) {
      ValueAfterColon(line, out.nps);
    }
  }
  if (!found) return absl::InvalidArgumentError("no 'Nodes searched : N' line in its output");
  return out;
}

absl::StatusOr<BenchResult> RunEngineBench(const EngineSpec& spec, const SandboxOptions& sandbox,
                                           Millis timeout) {
  const std::string who = Cat("engine '", spec.name, "': bench");
  if (!spec.refused.empty()) return absl::FailedPreconditionError(spec.refused);
  ProcessSpec ps{.argv = {}, .cwd = spec.dir, .env = spec.env, .no_new_privs = true};
  if (spec.cmd == kBuiltinEngine) {
    ps.argv = {SelfExecutable(), "bench"};
  } else {
    ps.argv.push_back(spec.cmd);
    for (const std::string& a : spec.args) ps.argv.push_back(a);
    ps.argv.push_back("bench");
  }
  std::string private_dir;
  struct DirGuard {
    std::string& dir;
    ~DirGuard() { RemovePrivateDir(dir); }
  } guard{private_dir};
  if (sandbox.isolation != Isolation::kNone) {
    absl::StatusOr<std::string> dir = MakePrivateDir(sandbox);
    if (!dir.ok()) return dir.status();
    private_dir = *std::move(dir);
    absl::StatusOr<ProcessSpec> boxed = Sandboxed(sandbox, std::move(ps), private_dir);
    if (!boxed.ok())
      return absl::Status(boxed.status().code(),
                          Cat(who, ": ", std::string(boxed.status().message())));
    ps = *std::move(boxed);
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(ps);
  if (!started.ok())
    return absl::FailedPreconditionError(
        Cat(who, ": cannot start: ", std::string(started.status().message())));
  Subprocess& p = **started;
  p.CloseInput();  // bench as an argument reads nothing; an engine that waits for input ends
  std::vector<std::string> out;
  const SteadyTime deadline = SteadyClock::now() + timeout;
  OutputLine line;
  ReadResult r;
  while ((r = p.ReadLine(deadline, line)) == ReadResult::kLine) {
    // Only the summary matters: keep the lines that can hold it (a bounded number).
    if (line.text.rfind("Nodes", 0) == 0 && out.size() < 64) out.push_back(line.text);
  }
  if (r == ReadResult::kTimeout) {
    p.WaitOrKill(Millis(0));
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", double(timeout.count()) / 1000);
    return absl::DeadlineExceededError(Cat(who, " did not finish within ", seconds, " s (killed)"));
  }
  const Millis left = std::chrono::duration_cast<Millis>(deadline - SteadyClock::now());
  const int status = p.WaitOrKill(std::max(Millis(0), left));
  // The summary is on stderr (Stockfish's): its last lines may still be in the pipe when the
  // engine has exited (a second at most: a process the engine left behind may hold the pipe).
  p.WaitStderrClosed(SteadyClock::now() + Millis(1000));
  const std::string err = p.StderrTail();
  std::vector<std::string_view> lines(out.begin(), out.end());
  for (std::string_view l : Split(err, '\n')) lines.push_back(l);
  absl::StatusOr<BenchResult> result = ParseBenchOutput(lines);
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!result.ok() || !exited_ok) {
    std::string why = result.ok() ? "" : Cat(std::string(result.status().message()), "; ");
    return absl::FailedPreconditionError(
        Cat(who, ": ", why, "the engine ", DescribeExit(status),
            err.empty() ? std::string() : Cat(", stderr: '", Tail(err), "'")));
  }
  return result;
}

}  // namespace arbiter::match

#include "match/uci_engine.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <thread>

#include "base/cpu.h"
#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "match/option_paths.h"

namespace arbiter::match {
namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

absl::StatusOr<EngineSpec> ParseEngineSpec(std::string_view text) {
  // A bare command (`/usr/games/stockfish`, `./engine --uci`): no `cmd=`, and its first word is
  // no key=value. Its name is the program's base name.
  const std::string_view first = text.substr(0, text.find_first_of(" ,"));
  if (text.find("cmd=") == std::string_view::npos &&
      text.find("source=") == std::string_view::npos && !first.empty() &&
      first.find('=') == std::string_view::npos)
    return ParseEngineSpec(Cat("cmd=", text));
  EngineSpec spec;
  for (std::string_view field : Split(text, ',', /*skip_empty=*/true)) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos)
      return absl::InvalidArgumentError(
          Cat("--engine '", text, "': field '", field, "' is not key=value"));
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    if (key == "name") {
      spec.name = std::string(value);
    } else if (key == "cmd") {
      std::vector<std::string_view> words = SplitWords(value);
      if (words.empty()) return absl::InvalidArgumentError(Cat("--engine '", text, "': empty cmd"));
      spec.cmd = std::string(words[0]);
      for (size_t i = 1; i < words.size(); ++i) spec.args.emplace_back(words[i]);
    } else if (key == "source" || key == "build" || key == "binary") {
      if (value.empty())
        return absl::InvalidArgumentError(Cat("--engine '", text, "': empty ", key, "="));
      (key == "source" ? spec.source : key == "build" ? spec.build : spec.binary) = value;
    } else if (key == "args") {
      for (std::string_view w : SplitWords(value)) spec.args.emplace_back(w);
    } else if (key == "dir") {
      spec.dir = std::string(value);
    } else if (key == "tc") {
      spec.tc = std::string(value);
    } else if (key == "proto") {
      if (value == "uci") {
        spec.protocol = Protocol::kUci;
      } else if (value == "xboard" || value == "cecp") {
        spec.protocol = Protocol::kXboard;
      } else {
        return absl::InvalidArgumentError(
            Cat("--engine '", text, "': proto=", value, " is not uci or xboard"));
      }
    } else if (key == "cpu") {
      if (!ParseCpuLevel(value, spec.cpu_level))
        return absl::InvalidArgumentError(
            Cat("--engine '", text, "': cpu=", value, " is not an x86-64 level (v1..v4)"));
    } else if (key == "bench") {
      if (!ParseNumber(value, spec.bench) || spec.bench == 0)
        return absl::InvalidArgumentError(
            Cat("--engine '", text, "': bench=", value, " is not a positive node count"));
    } else if (StartsWith(key, "option.") && key.size() > 7) {
      RETURN_IF_ERROR(CheckOptionText(Cat("--engine '", spec.name.empty() ? text : spec.name, "'"),
                                      key.substr(7), value));
      spec.options.emplace_back(std::string(key.substr(7)), std::string(value));
    } else if (StartsWith(key, "env.") && key.size() > 4) {
      spec.env.push_back(Cat(key.substr(4), "=", value));
    } else {
      return absl::InvalidArgumentError(
          Cat("--engine '", text, "': unknown key '", key,
              "' (expected name, cmd, source, build, binary, args, dir, tc, bench, cpu, proto, "
              "option.X, env.X)"));
    }
  }
  if (!spec.source.empty()) {
    if (!spec.cmd.empty())
      return absl::InvalidArgumentError(
          Cat("--engine '", text, "': give cmd= or source=, not both"));
    if (spec.name.empty())
      return absl::InvalidArgumentError(Cat("--engine '", text, "': a source engine needs name="));
    return spec;
  }
  if (!spec.build.empty() || !spec.binary.empty())
    return absl::InvalidArgumentError(
        Cat("--engine '", text, "': build= and binary= go with source="));
  if (spec.cmd.empty())
    return absl::InvalidArgumentError(Cat("--engine '", text, "': no cmd= (or source=)"));
  if (spec.cmd == kBuiltinEngine && !spec.args.empty())
    return absl::InvalidArgumentError(
        Cat("--engine '", text, "': cmd=builtin takes no arguments (use option.X=V)"));
  if (spec.name.empty()) {
    std::string_view base = spec.cmd;
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos)
      base.remove_prefix(slash + 1);
    spec.name = std::string(base);
  }
  return spec;
}

bool SameOptionName(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

absl::Status CheckOptionText(std::string_view where, std::string_view name,
                             std::string_view value) {
  auto control = [](std::string_view s) {
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f) return true;
    return false;
  };
  auto escaped = [](std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += c < 0x20 || c == 0x7f ? std::string(hex) : std::string(1, char(c));
    }
    return out;
  };
  if (control(name) || control(value))
    return absl::InvalidArgumentError(
        Cat(where, ": option '", escaped(name), "' = '", escaped(value),
            "' holds a control character (a newline would send the engine another command)"));
  return absl::OkStatus();
}

std::optional<UciOption> ParseOptionLine(std::string_view line) {
  std::vector<std::string_view> w = SplitWords(line);
  if (w.size() < 2 || w[0] != "option" || w[1] != "name") return std::nullopt;
  UciOption o;
  std::string_view key = "name";
  std::string value;
  auto flush = [&]() {
    if (key == "name") {
      o.name = value;
    } else if (key == "type") {
      o.type = value;
    } else if (key == "default") {
      o.default_value = value;
    } else if (key == "min") {
      ParseNumber(value, o.min);
    } else if (key == "max") {
      ParseNumber(value, o.max);
    } else if (key == "var") {
      o.vars.push_back(value);
    }
    value.clear();
  };
  for (size_t i = 2; i < w.size(); ++i) {
    const bool keyword =
        (w[i] == "type" && key == "name") ||
        (key != "name" && (w[i] == "default" || w[i] == "min" || w[i] == "max" || w[i] == "var"));
    if (keyword) {
      flush();
      key = w[i];
      continue;
    }
    value += Cat(value.empty() ? "" : " ", w[i]);
  }
  flush();
  if (o.name.empty()) return std::nullopt;
  return o;
}

std::string DescribeOptions(const std::vector<UciOption>& declared) {
  std::string out;
  for (const UciOption& o : declared) {
    out += Cat(out.empty() ? "" : ", ", o.name, " (", o.type);
    if (o.type == "spin") out += Cat(" ", o.min, "..", o.max);
    if (o.type == "combo") {
      out += " ";
      for (size_t i = 0; i < o.vars.size(); ++i) out += Cat(i ? "|" : "", o.vars[i]);
    }
    out += ")";
  }
  return out.empty() ? "none" : out;
}

absl::StatusOr<std::string> CheckOptionValue(const std::vector<UciOption>& declared,
                                             std::string_view name, std::string_view value) {
  auto it = std::find_if(declared.begin(), declared.end(),
                         [&](const UciOption& o) { return SameOptionName(o.name, name); });
  if (it == declared.end())
    return absl::InvalidArgumentError(
        Cat("the engine has no option '", name, "'; its options: ", DescribeOptions(declared)));
  const UciOption& o = *it;
  auto refuse = [&](std::string_view why) {
    return absl::InvalidArgumentError(Cat("option ", o.name, "=", value, ": ", why,
                                          "; its options: ", DescribeOptions(declared)));
  };
  if (o.type == "spin") {
    int64_t v = 0;
    if (!ParseNumber(Strip(value), v)) return refuse("not a whole number");
    if (v < o.min || v > o.max) return refuse(Cat("out of its range ", o.min, "..", o.max));
  } else if (o.type == "check") {
    if (!SameOptionName(value, "true") && !SameOptionName(value, "false"))
      return refuse("a check option takes true or false");
  } else if (o.type == "combo") {
    if (std::none_of(o.vars.begin(), o.vars.end(),
                     [&](const std::string& v) { return SameOptionName(v, value); }))
      return refuse("not one of its values");
  }
  return o.name;
}

bool ParseInfoLine(std::string_view line, InfoLine& out) {
  std::vector<std::string_view> w = SplitWords(line);
  if (w.empty() || w[0] != "info") return false;
  out = InfoLine{};
  bool any = false;
  for (size_t i = 1; i < w.size(); ++i) {
    std::string_view k = w[i];
    auto next = [&](auto& v) { return i + 1 < w.size() && ParseNumber(w[++i], v); };
    if (k == "string") return false;
    if (k == "depth") {
      any |= next(out.depth);
    } else if (k == "seldepth") {
      next(out.seldepth);
    } else if (k == "multipv") {
      next(out.multipv);
    } else if (k == "nodes") {
      next(out.nodes);
    } else if (k == "nps") {
      next(out.nps);
    } else if (k == "time") {
      next(out.time_ms);
    } else if (k == "score" && i + 2 < w.size()) {
      std::string_view kind = w[i + 1];
      int v = 0;
      if ((kind == "cp" || kind == "mate") && ParseNumber(w[i + 2], v)) {
        out.score.kind = kind == "cp" ? UciScore::kCp : UciScore::kMate;
        out.score.value = v;
        any = true;
      }
      i += 2;
      while (i + 1 < w.size() && (w[i + 1] == "lowerbound" || w[i + 1] == "upperbound")) {
        (w[i + 1] == "lowerbound" ? out.score.lowerbound : out.score.upperbound) = true;
        ++i;
      }
    } else if (k == "pv") {
      for (++i; i < w.size(); ++i) out.pv.emplace_back(w[i]);
      any = true;
    }
  }
  return any;
}

std::optional<std::string> ParseBestMove(std::string_view line) {
  std::vector<std::string_view> w = SplitWords(line);
  if (w.empty() || w[0] != "bestmove") return std::nullopt;
  return w.size() > 1 ? std::string(w[1]) : std::string();
}

absl::Status CheckEngine(const EngineSpec& spec, const EngineTimeouts& timeouts,
                         const SandboxOptions& sandbox) {
  UciEngine engine(spec, timeouts, {}, {}, sandbox);
  absl::Status st = engine.Start();
  engine.Quit();
  return st;
}

UciEngine::UciEngine(EngineSpec spec, EngineTimeouts timeouts, ProcessLimits limits,
                     std::vector<int> cpus, SandboxOptions sandbox)
    : spec_(std::move(spec)),
      timeouts_(timeouts),
      limits_(limits),
      cpus_(std::move(cpus)),
      sandbox_(std::move(sandbox)) {}

UciEngine::~UciEngine() {
  if (process_) Quit();
  RemovePrivateDir(private_dir_);
}

absl::Status UciEngine::Start() {
  ++starts_;
  if (!spec_.refused.empty()) return absl::FailedPreconditionError(spec_.refused);
  if (disk_watch_) disk_watch_->Stop();
  process_.reset();
  disk_watch_.reset();
  RemovePrivateDir(private_dir_);
  private_dir_.clear();
  options_.clear();
  default_threads_ = 1;
  chess960_ = false;
  // no_new_privs even without a sandbox: an engine never needs setuid programs.
  ProcessSpec ps{
      .argv = {}, .cwd = spec_.dir, .env = spec_.env, .cpus = cpus_, .no_new_privs = true};
  if (spec_.cmd == kBuiltinEngine) {
    ps.argv = {SelfExecutable(), "uci"};
  } else {
    ps.argv.push_back(spec_.cmd);
  }
  for (const std::string& a : spec_.args) ps.argv.push_back(a);
  if (sandbox_.isolation != Isolation::kNone) {
    absl::StatusOr<std::string> dir = MakePrivateDir(sandbox_);
    if (!dir.ok()) return dir.status();
    private_dir_ = *std::move(dir);
    absl::StatusOr<ProcessSpec> boxed = Sandboxed(sandbox_, std::move(ps), private_dir_);
    if (!boxed.ok())
      return absl::Status(boxed.status().code(),
                          Cat(spec_.name, ": ", std::string(boxed.status().message())));
    ps = *std::move(boxed);
  }
  if (!spec_.log_dir.empty()) {
    static std::atomic<int> processes{0};
    std::string file;
    for (char c : spec_.name) file += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    ps.traffic_log = Cat(spec_.log_dir, "/", file, "-", getpid(), "-", ++processes, ".log");
  }
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start(ps, limits_);
  if (!p.ok())
    return absl::Status(p.status().code(),
                        Cat(spec_.name, ": ", std::string(p.status().message())));
  process_ = std::move(*p);
  if (!private_dir_.empty() && sandbox_.limits.disk_mb > 0)
    disk_watch_ =
        std::make_unique<DiskWatch>(private_dir_, sandbox_.limits.disk_mb << 20, process_->pid(),
                                    geteuid() == 0 ? EngineUidOf(sandbox_, private_dir_) : -1);
  protocol_ = Protocol::kUci;
  if (spec_.protocol == Protocol::kXboard) return StartCecp();
  return StartUci();
}

namespace {

// A line only a CECP engine writes, here in answer to `uci` or at start-up: its error for an
// unknown command ("Error (unknown command): uci", "Illegal move: uci"), or a CECP command to
// the GUI (`tellics`, `feature`, `telluser`).
bool LooksLikeCecp(std::string_view line) {
  for (std::string_view prefix : {"Error", "Illegal move", "tellics ", "feature ", "telluser "})
    if (StartsWith(line, prefix)) return true;
  return false;
}

}  // namespace

absl::Status UciEngine::StartUci() {
  RETURN_IF_ERROR(Send("uci"));
  std::vector<std::string> seen;
  const SteadyTime deadline = SteadyClock::now() + timeouts_.handshake;
  for (OutputLine line;;) {
    const ReadResult r = process_->ReadLine(deadline, line);
    if (r == ReadResult::kEof) return ExitedWhileWaiting("uciok", deadline);
    if (r == ReadResult::kTimeout) {
      std::string said;
      for (size_t i = 0; i < seen.size() && i < 5; ++i) said += Cat(i ? " | " : "", seen[i]);
      return absl::DeadlineExceededError(
          Cat(spec_.name, ": no 'uciok' within ", timeouts_.handshake.count(), " ms",
              said.empty() ? " (it printed nothing)" : Cat(" (it printed: ", said, ")")));
    }
    std::string_view s = Strip(line.text);
    if (s == "uciok") break;
    // An xboard engine: started again at once in its own protocol (a fresh process: some, such
    // as Fairy-Max, stop answering after `uci`), and so from now on.
    if (LooksLikeCecp(s)) {
      spec_.protocol = Protocol::kXboard;
      Kill();
      --starts_;
      return Start();
    }
    seen.push_back(std::move(line.text));
  }
  for (const std::string& l : seen) {
    std::string_view s = l;
    if (StartsWith(s, "id name ")) id_name_ = std::string(Strip(s.substr(8)));
    if (std::optional<UciOption> o = ParseOptionLine(s)) {
      int n = 0;
      if (SameOptionName(o->name, "Threads") && ParseNumber(o->default_value, n) && n > 0)
        default_threads_ = n;
      options_.push_back(*std::move(o));
    }
  }
  // Every option is checked before any is sent: a misspelled name or a value out of range is
  // refused with the engine's own list rather than ignored by it.
  std::vector<std::string> names;
  for (const auto& [name, value] : spec_.options) {
    absl::StatusOr<std::string> declared = CheckOptionValue(options_, name, value);
    if (!declared.ok())
      return absl::InvalidArgumentError(
          Cat(spec_.name, ": ", std::string(declared.status().message())));
    // A file it names must stay inside the box where the box does not confine the engine.
    auto option = std::find_if(options_.begin(), options_.end(),
                               [&](const UciOption& o) { return o.name == *declared; });
    std::vector<std::string> allowed = sandbox_.read_only;
    allowed.push_back(private_dir_);
    if (absl::Status st = CheckOptionPath(*option, value, sandbox_.isolation,
                                          spec_.dir.empty() ? private_dir_ : spec_.dir, allowed);
        !st.ok())
      return absl::InvalidArgumentError(Cat(spec_.name, ": ", std::string(st.message())));
    names.push_back(*std::move(declared));
  }
  for (size_t i = 0; i < names.size(); ++i)
    RETURN_IF_ERROR(Send(Cat("setoption name ", names[i], " value ", spec_.options[i].second)));
  return IsReady(timeouts_.ready);
}

// An engine that closed its stdout cannot answer any more, whether or not it has exited yet.
bool UciEngine::Running() { return process_ && !process_->StdoutClosed() && !process_->Exited(); }

absl::Status UciEngine::EnsureRunning() {
  if (Running()) return absl::OkStatus();
  Kill();
  return Start();
}

absl::Status UciEngine::NewGame(bool chess960) {
  if (protocol_ == Protocol::kXboard) return NewGameCecp(chess960);
  if (chess960 != chess960_ && (chess960 || HasOption("UCI_Chess960"))) {
    RETURN_IF_ERROR(Send(Cat("setoption name UCI_Chess960 value ", chess960 ? "true" : "false")));
    chess960_ = chess960;
  }
  RETURN_IF_ERROR(Send("ucinewgame"));
  return IsReady(timeouts_.ready);
}

absl::Status UciEngine::IsReady(Millis timeout) {
  if (protocol_ == Protocol::kXboard) return IsReadyCecp(timeout);
  RETURN_IF_ERROR(Send("isready"));
  return WaitFor("readyok", timeout, nullptr);
}

absl::Status UciEngine::Send(std::string_view command) {
  if (!process_) return absl::FailedPreconditionError(Cat(spec_.name, ": not started"));
  absl::Status st = process_->WriteLine(command);
  if (!st.ok()) return absl::Status(st.code(), Cat(spec_.name, ": ", std::string(st.message())));
  return st;
}

ReadResult UciEngine::ReadLine(SteadyTime deadline, OutputLine& out) {
  if (!process_) return ReadResult::kEof;
  return process_->ReadLine(deadline, out);
}

ReadResult UciEngine::ReadUntilBestmove(SteadyTime deadline, std::vector<OutputLine>& out) {
  if (!process_) return ReadResult::kEof;
  return process_->ReadUntilBestmove(deadline, out);
}

absl::Status UciEngine::WaitFor(std::string_view token, Millis timeout,
                                std::vector<std::string>* seen) {
  const SteadyTime deadline = SteadyClock::now() + timeout;
  OutputLine line;
  for (;;) {
    switch (process_->ReadLine(deadline, line)) {
      case ReadResult::kLine: {
        std::string_view s = Strip(line.text);
        if (s == token) return absl::OkStatus();
        if (seen) seen->push_back(std::move(line.text));
        break;
      }
      case ReadResult::kTimeout:
        return absl::DeadlineExceededError(
            Cat(spec_.name, ": no '", token, "' within ", timeout.count(), " ms"));
      case ReadResult::kEof:
        return ExitedWhileWaiting(token, deadline);
    }
  }
}

absl::Status UciEngine::ExitedWhileWaiting(std::string_view what, SteadyTime deadline) {
  // Its last stderr bytes may still be on their way (a process it left behind may hold the
  // pipe: not past the deadline, nor more than half a second).
  process_->WaitStderrClosed(std::min(deadline, SteadyClock::now() + Millis(500)));
  std::string tail = process_->StderrTail();
  if (tail.size() > 400) tail = tail.substr(tail.size() - 400);
  return absl::UnavailableError(Cat(spec_.name, ": exited while waiting for '", what, "'",
                                    tail.empty() ? "" : " (stderr: ", tail,
                                    tail.empty() ? "" : ")"));
}

absl::Status UciEngine::StartSearch(const SearchRequest& request) {
  if (protocol_ == Protocol::kXboard) return StartSearchCecp(request);
  RETURN_IF_ERROR(Send(request.uci_position));
  return Send(request.uci_go);
}

absl::Status UciEngine::StopSearch() { return Send(protocol_ == Protocol::kXboard ? "?" : "stop"); }

absl::Status UciEngine::EndSearch() {
  return protocol_ == Protocol::kXboard ? Send("force") : absl::OkStatus();
}

void UciEngine::Quit() {
  if (!process_) return;
  (void)process_->WriteLine("quit", Millis(100));
  if (disk_watch_) disk_watch_->Stop();
  process_->WaitOrKill(timeouts_.quit_grace);
  process_.reset();
}

void UciEngine::Kill() {
  if (!process_) return;
  if (disk_watch_) disk_watch_->Stop();
  process_->WaitOrKill(Millis(0));
  process_.reset();
}

std::string UciEngine::EndAndDescribe(Millis grace) {
  if (!process_) return "engine not running";
  const SteadyTime deadline = SteadyClock::now() + grace;
  while (!process_->Exited() && SteadyClock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  const bool exited = process_->Exited();
  if (disk_watch_) disk_watch_->Stop();
  const int status = process_->WaitOrKill(Millis(0));
  process_.reset();
  std::string why = exited ? Cat("engine ", DescribeExit(status)) : "engine closed its output";
  if (disk_watch_ && disk_watch_->exceeded()) why += Cat(": ", disk_watch_->Describe());
  return why;
}

int SpecThreads(const EngineSpec& spec) {
  int threads = 0;
  for (const auto& [name, value] : spec.options)
    if (name == "Threads" && (!ParseNumber(value, threads) || threads < 0)) threads = 0;
  return threads;
}

int UciEngine::Threads() const {
  const int set = SpecThreads(spec_);
  return set > 0 ? set : default_threads_;
}

bool UciEngine::HasOption(std::string_view name) const {
  for (const UciOption& o : options_)
    if (o.name == name) return true;
  return false;
}

SteadyTime UciEngine::LastWriteTime() const {
  return process_ ? process_->LastWriteTime() : SteadyTime{};
}

std::string UciEngine::StderrTail() const { return process_ ? process_->StderrTail() : ""; }

}  // namespace arbiter::match

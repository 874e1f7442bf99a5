// A chess engine behind a Subprocess, speaking UCI or CECP (xboard protocol 2, match/cecp.cc):
// handshake with timeouts, options, searches started and stopped, and their output read as
// `info`/`bestmove` (UCI) or thinking lines and `move` (CECP). Restartable after a crash.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "engine/position.h"
#include "match/disk_watch.h"
#include "match/process.h"
#include "match/sandbox.h"
#include "match/time_control.h"

namespace arbiter::match {

using Millis = std::chrono::milliseconds;

// `cmd=builtin`: arbiter's own engine, i.e. this executable run as `arbiter uci` (locally and on
// the workers alike).
inline constexpr std::string_view kBuiltinEngine = "builtin";

// The engine's protocol: UCI, or CECP (xboard protocol 2, "winboard").
enum class Protocol { kUci, kXboard };

// How to start one engine (from `--engine name=A,cmd=PATH,option.Hash=16,...`).
struct EngineSpec {
  std::string name;
  std::string cmd;  // a program (searched in PATH if it has no '/'), or kBuiltinEngine
  std::vector<std::string> args;
  std::string dir;
  std::vector<std::string> env;                              // KEY=VALUE
  std::vector<std::pair<std::string, std::string>> options;  // setoption name X value V
  std::string tc;      // per-engine time control override (empty: the match's)
  uint64_t bench = 0;  // declared bench signature (`bench=N`; 0: none)
  int cpu_level = 0;   // x86-64 level the binary needs (`cpu=v3`; 0: any)
  // Non-empty: the engine may not run here (a worker's policy); Start() fails with this reason,
  // so its games are not played (Unplayed) and a worker's job is a fault naming it.
  std::string refused;
  // `proto=xboard`: CECP from the start. Otherwise UCI, switching to CECP at once when the
  // engine answers `uci` with an xboard-style error ("Error (unknown command): uci").
  Protocol protocol = Protocol::kUci;
  // Non-empty (`--engine-log DIR`): each process of this engine logs its traffic to a file of its
  // own in DIR, "NAME-ARBITERPID-N.log" (ProcessSpec::traffic_log).
  std::string log_dir;
  // `source=SRC[,build=COMMAND][,binary=PATH]`: an engine built from source before it plays (a
  // directory, a .tar/.tar.gz/.tar.zst archive, or a git work tree at a revision, DIR@REV). The
  // build fills `cmd` in; `build` defaults to "make", `binary` to the one program it leaves.
  std::string source, build, binary;
};

// The `Threads` value an engine spec sets (0 when it sets none or not a number).
int SpecThreads(const EngineSpec& spec);

// Parses "name=A,cmd=PATH,args=a b,dir=D,env.K=V,option.X=V,tc=10+0.1,bench=232923,cpu=v3,
// proto=xboard", "name=dev,source=.@HEAD,build=make -j2,binary=engine", or a bare command
// ("/usr/games/stockfish", "./engine --uci": the same as cmd=...). The name defaults to the
// program's base name. Option names and values with control characters (a newline would start
// another command) are refused.
absl::StatusOr<EngineSpec> ParseEngineSpec(std::string_view text);

// INVALID_ARGUMENT when an option's name or value holds a control character (the UCI line
// `setoption name X value V` would carry another command), naming `where`.
absl::Status CheckOptionText(std::string_view where, std::string_view name, std::string_view value);

// UCI option names are case-insensitive: `threads` is the engine's `Threads`.
bool SameOptionName(std::string_view a, std::string_view b);

// An option the engine declares at the handshake (`option name Hash type spin default 16 min 1
// max 1024`).
struct UciOption {
  std::string name, type;  // type: check, spin, combo, button or string
  std::string default_value;
  int64_t min = 0, max = 0;       // spin
  std::vector<std::string> vars;  // combo
};

// Parses an `option name ...` line; nullopt for any other line.
std::optional<UciOption> ParseOptionLine(std::string_view line);

// The declared option `name` (UCI option names are case-insensitive) takes `value`: OK with the
// declared spelling of the name, or INVALID_ARGUMENT saying why (an unknown name, a spin out of
// its range or not a number, a check that is neither true nor false, a combo value not among its
// vars), with the engine's list of options.
absl::StatusOr<std::string> CheckOptionValue(const std::vector<UciOption>& declared,
                                             std::string_view name, std::string_view value);

// "Hash (spin 1..1024), Ponder (check), Style (combo Solid|Risky), Clear Hash (button)", or
// "none".
std::string DescribeOptions(const std::vector<UciOption>& declared);

struct EngineTimeouts {
  Millis handshake{10000};  // `uci` until `uciok`
  Millis ready{10000};      // `isready` until `readyok`
  Millis quit_grace{1000};  // `quit` until the process is killed
};

struct UciScore {
  enum Kind { kNone, kCp, kMate };
  Kind kind = kNone;
  int value = 0;  // centipawns, or moves to mate (negative: getting mated)
  bool lowerbound = false, upperbound = false;
};

struct InfoLine {
  int depth = -1;
  int seldepth = -1;
  int multipv = 1;
  UciScore score;
  uint64_t nodes = 0;
  uint64_t nps = 0;
  int64_t time_ms = -1;
  std::vector<std::string> pv;
};

// Parses an `info` line; returns false for anything else (and for `info string ...`).
bool ParseInfoLine(std::string_view line, InfoLine& out);
// The move of a `bestmove` line (may be any text, e.g. "(none)"), or nullopt if not one.
std::optional<std::string> ParseBestMove(std::string_view line);

// Starts the engine once and runs the handshake (uci/uciok, options, isready/readyok), then quits
// it: a wrong path or a program that does not speak UCI is reported before any game, with the
// engine's name.
absl::Status CheckEngine(const EngineSpec& spec, const EngineTimeouts& timeouts,
                         const SandboxOptions& sandbox = {});

// One search as the game loop asks for it, in either protocol.
struct SearchRequest {
  const Position& start;           // the game's start position
  const std::vector<Move>& moves;  // every move played since (book moves included)
  std::string_view uci_position;   // UCI: `position ...` and `go ...`
  std::string_view uci_go;
  const TimeControl& tc;                 // the mover's control (CECP: `level`, `st`, `sd`)
  Millis own_time{0}, opponent_time{0};  // CECP: `time` and `otim` (kClock)
};

// What a line of search output is.
enum class SearchOutput {
  kOther,   // nothing the game needs (`info string`, a CECP claim or draw offer, ...)
  kInfo,    // a score/depth line: `info` (UCI) or thinking output (CECP, after `post`)
  kMove,    // the search's move: `bestmove X` (UCI), `move X` (CECP)
  kResign,  // CECP `resign`
  kRefusal  // CECP `Illegal move ...`: it refused a legal move arbiter sent
};

class UciEngine {
 public:
  UciEngine(EngineSpec spec, EngineTimeouts timeouts = {}, ProcessLimits limits = {},
            std::vector<int> cpus = {}, SandboxOptions sandbox = {});
  ~UciEngine();

  // Spawns the process and runs the handshake: uci/uciok, setoption for each option (each checked
  // against the options the engine declares: INVALID_ARGUMENT for an unknown name or a value out
  // of range), isready.
  absl::Status Start();
  bool Running();
  // Starts the engine again if it is not running (after a crash, a kill or a failed start).
  absl::Status EnsureRunning();
  // ucinewgame (with UCI_Chess960 set when it changes) and isready/readyok.
  absl::Status NewGame(bool chess960);
  absl::Status IsReady(Millis timeout);
  absl::Status Send(std::string_view command);
  // Sends what starts the search: UCI `position`/`go`; CECP the moves it has not seen, the
  // control (first search of a game), `time`/`otim` and `go`.
  absl::Status StartSearch(const SearchRequest& request);
  // Asks for the move now: UCI `stop`, CECP `?`.
  absl::Status StopSearch();
  // After the search's move: CECP `force` (the engine waits for the next `go`); UCI nothing.
  absl::Status EndSearch();
  // Classifies a line of search output; fills `info` (kInfo) or `text` (kMove, kRefusal).
  SearchOutput ParseSearchLine(std::string_view line, InfoLine& info, std::string& text) const;
  // The search's move in `pos`: UCI long algebraic; CECP also SAN and `e7e8=q`.
  absl::StatusOr<Move> ParseMove(const Position& pos, std::string_view text) const;
  ReadResult ReadLine(SteadyTime deadline, OutputLine& out);
  ReadResult ReadUntilBestmove(SteadyTime deadline, std::vector<OutputLine>& out);
  // `quit`, then a kill after the grace period.
  void Quit();
  // Kills the process at once (after a stall or a protocol fault).
  void Kill();
  // After its output closed: waits up to `grace` for the process to exit (killing it then) and
  // says how it ended, e.g. "engine exited with SIGXFSZ (file size limit)".
  std::string EndAndDescribe(Millis grace = Millis(200));

  const EngineSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const std::string& id_name() const { return id_name_; }
  bool HasOption(std::string_view name) const;
  // The threads it searches with: its `Threads` option as set in the spec, else the default its
  // `uci` option list gives, else 1.
  int Threads() const;
  Protocol protocol() const { return protocol_; }
  SteadyTime LastWriteTime() const;
  std::string StderrTail() const;
  Subprocess* process() { return process_.get(); }
  int starts() const { return starts_; }

 private:
  // Reads lines until one starts with `token` or the deadline passes.
  absl::Status WaitFor(std::string_view token, Millis timeout, std::vector<std::string>* seen);
  // The UCI handshake after `uci`; switches to StartCecp when the engine answers in xboard style.
  absl::Status StartUci();
  // match/cecp.cc: `xboard`, `protover 2`, the features, the options, ping/pong.
  absl::Status StartCecp();
  absl::Status NewGameCecp(bool chess960);
  absl::Status IsReadyCecp(Millis timeout);
  absl::Status StartSearchCecp(const SearchRequest& request);
  // The start position by `edit` for an engine without setboard (refused when `edit` would
  // misstate its castling rights or en passant square).
  absl::Status SendEditCecp(const Position& start);
  // The engine's exit while waiting for `what`, with its stderr's end.
  absl::Status ExitedWhileWaiting(std::string_view what, SteadyTime deadline);

  EngineSpec spec_;
  EngineTimeouts timeouts_;
  ProcessLimits limits_;
  std::vector<int> cpus_;
  SandboxOptions sandbox_;
  std::string private_dir_;  // the sandboxed engine's working directory, fresh per start
  std::unique_ptr<Subprocess> process_;
  std::unique_ptr<DiskWatch> disk_watch_;  // the private directory's disk, while the engine runs
  std::string id_name_;
  std::vector<UciOption> options_;  // as declared at the last handshake
  int default_threads_ = 1;         // the `Threads` default of its option list
  bool chess960_ = false;
  int starts_ = 0;
  Protocol protocol_ = Protocol::kUci;
  // CECP state: the features the engine asked for, and what it knows of the current game.
  struct CecpFeatures {
    bool ping = false, setboard = false, san = false, usermove = false, time = true;
    std::string variants;
  } cecp_;
  int cecp_ping_ = 0;
  int cecp_moves_known_ = -1;  // moves of the game it has been sent; -1: not set up
  bool cecp_control_sent_ = false;
};

}  // namespace arbiter::match

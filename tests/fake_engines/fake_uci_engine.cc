// A small UCI engine for the match tests. It plays quick legal moves (mate in one, else the most
// valuable capture, else a move picked from the position's hash) and, on request, misbehaves
// from its (after+1)-th `go` on:
//   --crash           abort()                       --hang         stop reading and answering
//   --ignore-stop     search forever, ignore stop    --illegal      play an illegal move
//   --garbage         print junk, then "bestmove xyzzy"
//   --none            "bestmove (none)"              --sleep-past MS sleep its whole time + MS
//   --flood BYTES     print BYTES of info to stdout and to stderr before each bestmove
//   --slow-start MS   wait MS before answering `uci`
//   --perft-bug       `go perft N` divide that never generates en passant captures
//   --movegen-bug B   perft with one classic move-generator bug
//   (tests/fake_engines/movegen_bugs.h):
//                     no-ep-evasion, castle-through-check, keep-castling-rights,
//                     no-underpromotion, ep-rank-pin, c960-king-on-rook-square
//   --perft-dialect D which perft request it answers: go (`go perft N`, Stockfish's divide,
//                     the default), bare (`perft N`: "e2e4 20" lines, "Total: N"), custom
//                     (`divide N`: "move e2e4 nodes 20" lines, "perft total = N"), search
//                     (none: `go perft` starts a search and answers bestmove, as Debian's
//                     Ethereal does), silent (none: perft requests are ignored)
//   --perft-crash-after N  abort() during its (N+1)-th perft request
//   --exit-after-move exit right after its bestmove (it dies during the opponent's time)
// Hostile ones try, at that `go`, what a sandbox must stop, and report before moving (or die
// trying) as `info string <action> ok|failed[: why]`:
//   --write-outside PATH  create PATH          --read FILE        read FILE
//   --connect PORT        TCP to 127.0.0.1     --listen-port PORT listen on 127.0.0.1:PORT
//   --daemon MARKER       setsid + fork a sleeper that outlives the engine (MARKER: for /proc)
//   --alloc-mb N          allocate and touch N MB
//   --fork-bomb N         fork N sleepers in new sessions   --write-big MB  write an MB file
//   --fill MB             write MB files of 1 MB, 20 ms apart, keeping them until it reports
//   --tag WORD            nothing: a marker in the command line that tests find in /proc
//   --syscalls            ptrace(PTRACE_TRACEME) and unshare(CLONE_NEWUSER), and reports
//                         `info string seccomp-mode N` from /proc/self/status, and
//                         `info string inherited-fds N`: its descriptors above stderr
// Always: castling moves are read and written in Chess960 form only after
// `setoption name UCI_Chess960 value true` (as a real engine does: the FEN alone does not switch).
//   --log FILE            append every line received to FILE (tests assert what arbiter sent)
// `bench` as an argument (Stockfish's convention) prints a bench summary on stderr and exits:
//   --bench-nodes N  the node signature (default 123456)   --bench-nps N  nodes/s (default 1e6)
//   --bench-hang     never finishes                          --bench-garbage  prints no summary
//   --bench-orphan   leaves a process (in a session of its own) holding its stderr for 30 s
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "engine/position.h"
#include "tests/fake_engines/movegen_bugs.h"

using namespace arbiter;

#if defined(__SANITIZE_ADDRESS__)
// In a sanitizer build this engine runs in arbiter's sandbox, whose seccomp filter refuses
// ptrace: LeakSanitizer cannot stop the world there and turns a normal exit (after `bench`, say)
// into exit code 1. Leaks of arbiter itself are still checked; this is the test engine's only.
extern "C" int __lsan_is_turned_off() { return 1; }
#endif

namespace {

struct Flags {
  int after = 0;
  bool crash = false, hang = false, ignore_stop = false, illegal = false, garbage = false,
       none = false, perft_bug = false, exit_after_move = false, syscalls = false;
  int sleep_past_ms = -1;
  long flood = 0;
  int slow_start_ms = 0;
  std::string write_outside, read_file, daemon_marker, log_file;
  int connect_port = 0, listen_port = 0;
  long alloc_mb = 0, fork_bomb = 0, write_big_mb = 0, fill_mb = 0;
  test_engine::MovegenBug movegen_bug = test_engine::MovegenBug::kNone;
  std::string perft_dialect = "go";
  int perft_crash_after = -1;
};

constexpr int kValue[] = {100, 300, 300, 500, 900, 0, 0};

int Material(const Position& pos, Color c) {
  int v = 0;
  for (int pt = kPawn; pt <= kQueen; ++pt) v += kValue[pt] * PopCount(pos.Pieces(c, PieceType(pt)));
  return v;
}

Move PickMove(const Position& pos, const MoveList& legal) {
  for (Move m : legal) {
    Position p = pos;
    UndoInfo u;
    p.DoMove(m, u);
    if (p.InCheck() && CountLegal(p) == 0) return m;
  }
  Move best = Move::None();
  int best_value = -1;
  for (Move m : legal) {
    if (!pos.IsCapture(m)) continue;
    int v = m.KindOf() == Move::kEnPassant ? 100 : kValue[TypeOf(pos.PieceOn(m.To()))];
    if (v > best_value) best = m, best_value = v;
  }
  if (!best.IsNone()) return best;
  return legal.moves[pos.Key().lo % legal.size];
}

uint64_t PerftNoEp(Position& pos, int depth) {
  if (depth == 0) return 1;
  MoveList list;
  GenerateLegal(pos, list);
  uint64_t n = 0;
  for (Move m : list) {
    if (m.KindOf() == Move::kEnPassant) continue;
    UndoInfo u;
    pos.DoMove(m, u);
    n += PerftNoEp(pos, depth - 1);
    pos.UndoMove(m, u);
  }
  return n;
}

// The depth of a perft request in the engine's dialect, or 0 when `w` is none.
int PerftRequest(const std::string& dialect, const std::vector<std::string_view>& w) {
  auto depth = [&](size_t i) {
    return i < w.size() ? std::max(1, std::atoi(std::string(w[i]).c_str())) : 0;
  };
  if (dialect == "bare" && w[0] == "perft") return depth(1);
  if (dialect == "custom" && w[0] == "divide") return depth(1);
  if (dialect == "go" && w[0] == "go" && w.size() >= 3 && w[1] == "perft") return depth(2);
  return 0;
}

void Say(const std::string& s) {
  fputs(s.c_str(), stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

// Value of `key` in a `go` command, or -1.
long GoValue(const std::vector<std::string_view>& w, std::string_view key) {
  for (size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == key) return std::atol(std::string(w[i + 1]).c_str());
  return -1;
}

std::string Outcome(std::string_view action, bool ok) {
  return Cat("info string ", action, ok ? " ok" : " failed", ok ? "" : ": ",
             ok ? "" : strerror(errno));
}

// A sleeper in its own session, out of the engine's process group, with no pipe of the engine;
// it writes a byte to `ready` once out of the group.
void Sleeper(int ready) {
  setsid();
  ssize_t w = write(ready, "r", 1);
  (void)w;
  for (int fd = 0; fd < 1024; ++fd) close(fd);
  for (;;) pause();
}

// Waits for `n` sleepers to be out of the engine's process group.
void AwaitSleepers(int ready, long n) {
  char c;
  for (long i = 0; i < n && read(ready, &c, 1) == 1; ++i) {
  }
}

// The hostile actions asked for, each reported on stdout; the listening socket stays open.
void Misbehave(const Flags& f) {
  if (f.syscalls) {
    Say(Outcome("ptrace", ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0));
    Say(Outcome("unshare", unshare(CLONE_NEWUSER) == 0));
    std::string mode = "unknown";
    if (FILE* status = fopen("/proc/self/status", "r")) {
      char line[256];
      while (fgets(line, sizeof line, status))
        if (strncmp(line, "Seccomp:", 8) == 0) mode = std::string(Strip(line + 8));
      fclose(status);
    }
    Say(Cat("info string seccomp-mode ", mode));
    int inherited = 0;
    if (DIR* fds = opendir("/proc/self/fd")) {
      while (dirent* e = readdir(fds)) {
        const int fd = atoi(e->d_name);
        inherited += fd > 2 && fd != dirfd(fds);
      }
      closedir(fds);
    }
    Say(Cat("info string inherited-fds ", inherited));
  }
  if (!f.write_outside.empty()) {
    int fd = open(f.write_outside.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && write(fd, "owned\n", 6) == 6;
    Say(Outcome("write-outside", ok));
    if (fd >= 0) close(fd);
  }
  if (!f.read_file.empty()) {
    int fd = open(f.read_file.c_str(), O_RDONLY);
    char buf[64];
    bool ok = fd >= 0 && read(fd, buf, sizeof buf) >= 0;
    Say(Outcome("read", ok));
    if (fd >= 0) close(fd);
  }
  auto loopback = [](int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(uint16_t(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  };
  if (f.connect_port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(f.connect_port);
    bool ok = s >= 0 && connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    Say(Outcome("connect", ok));
    if (s >= 0) close(s);
  }
  if (f.listen_port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    if (s >= 0) setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a = loopback(f.listen_port);
    bool ok =
        s >= 0 && bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && listen(s, 4) == 0;
    Say(Outcome("listen", ok));
  }
  int ready[2] = {-1, -1};
  if ((!f.daemon_marker.empty() || f.fork_bomb > 0) && pipe(ready) != 0) ready[0] = ready[1] = -1;
  if (!f.daemon_marker.empty()) {
    pid_t p = fork();
    if (p == 0) {
      if (fork() == 0) Sleeper(ready[1]);
      _exit(0);
    }
    if (p > 0) waitpid(p, nullptr, 0);
    if (p > 0) AwaitSleepers(ready[0], 1);
    Say(Outcome("daemon", p > 0));
  }
  if (f.fork_bomb > 0) {
    long n = 0;
    for (; n < f.fork_bomb; ++n) {
      pid_t p = fork();
      if (p == 0) Sleeper(ready[1]);
      if (p < 0) break;
    }
    AwaitSleepers(ready[0], n);
    Say(n == f.fork_bomb ? Outcome("fork-bomb", true)
                         : Cat(Outcome("fork-bomb", false), " (after ", n, ")"));
  }
  if (f.alloc_mb > 0) {
    const size_t bytes = size_t(f.alloc_mb) << 20;
    char* p = static_cast<char*>(malloc(bytes));
    if (p)
      for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
    Say(Outcome("alloc", p != nullptr));
    free(p);
  }
  if (f.fill_mb > 0) {
    const std::string chunk(1 << 20, 'x');
    bool ok = true;
    for (long i = 0; ok && i < f.fill_mb; ++i) {
      const int fd = open(("fill" + std::to_string(i)).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ok = fd >= 0 && write(fd, chunk.data(), chunk.size()) == ssize_t(chunk.size());
      if (fd >= 0) close(fd);
      usleep(20000);
    }
    Say(Outcome("fill", ok));
    for (long i = 0; i < f.fill_mb; ++i) unlink(("fill" + std::to_string(i)).c_str());
  }
  if (f.write_big_mb > 0) {
    int fd = open("big.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const std::string chunk(1 << 20, 'x');
    bool ok = fd >= 0;
    for (long i = 0; ok && i < f.write_big_mb; ++i)
      ok = write(fd, chunk.data(), chunk.size()) == ssize_t(chunk.size());
    Say(Outcome("write-big", ok));
    if (fd >= 0) close(fd);
    unlink("big.bin");
  }
}

}  // namespace

// `ENGINE bench`: Stockfish's summary lines on stderr (or junk, or nothing ever).
// With `orphan`, it leaves a process behind that holds its stderr open for 30 s.
int Bench(long nodes, long nps, bool hang, bool garbage, bool orphan) {
  if (hang) {
    for (;;) pause();
  }
  if (garbage) {
    fprintf(stderr, "bench? what bench\nNodes searched  : lots\n");
    return 3;
  }
  fprintf(stdout, "info depth 1 nodes %ld\n", nodes);
  fprintf(stderr, "\n===========================\nTotal time (ms) : %ld\n", 1000 * nodes / nps);
  fprintf(stderr, "Nodes searched  : %ld\nNodes/second    : %ld\n", nodes, nps);
  fflush(stdout);
  fflush(stderr);
  if (orphan && fork() == 0) {
    setsid();  // out of the engine's process group, which is killed when the engine exits
    close(0);
    close(1);
    sleep(30);
    _exit(0);
  }
  return 0;
}

int main(int argc, char** argv) {
  Flags f;
  long bench_nodes = 123456, bench_nps = 1000000;
  bool bench = false, bench_hang = false, bench_garbage = false, bench_orphan = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto num = [&] { return i + 1 < argc ? std::atol(argv[++i]) : 0; };
    if (a == "--after")
      f.after = int(num());
    else if (a == "--crash")
      f.crash = true;
    else if (a == "--hang")
      f.hang = true;
    else if (a == "--ignore-stop")
      f.ignore_stop = true;
    else if (a == "--illegal")
      f.illegal = true;
    else if (a == "--garbage")
      f.garbage = true;
    else if (a == "--none")
      f.none = true;
    else if (a == "--perft-bug")
      f.perft_bug = true;
    else if (a == "--movegen-bug" && i + 1 < argc) {
      if (!test_engine::ParseMovegenBug(argv[++i], f.movegen_bug)) {
        fprintf(stderr, "test_engine: unknown movegen bug %s\n", argv[i]);
        return 2;
      }
    } else if (a == "--perft-dialect" && i + 1 < argc)
      f.perft_dialect = argv[++i];
    else if (a == "--perft-crash-after")
      f.perft_crash_after = int(num());
    else if (a == "--exit-after-move")
      f.exit_after_move = true;
    else if (a == "--sleep-past")
      f.sleep_past_ms = int(num());
    else if (a == "--flood")
      f.flood = num();
    else if (a == "--slow-start")
      f.slow_start_ms = int(num());
    else if (a == "--write-outside" && i + 1 < argc)
      f.write_outside = argv[++i];
    else if (a == "--syscalls")
      f.syscalls = true;
    else if (a == "--log" && i + 1 < argc)
      f.log_file = argv[++i];
    else if (a == "--read" && i + 1 < argc)
      f.read_file = argv[++i];
    else if (a == "--daemon" && i + 1 < argc)
      f.daemon_marker = argv[++i];
    else if (a == "--connect")
      f.connect_port = int(num());
    else if (a == "--listen-port")
      f.listen_port = int(num());
    else if (a == "--alloc-mb")
      f.alloc_mb = num();
    else if (a == "--fork-bomb")
      f.fork_bomb = num();
    else if (a == "--write-big")
      f.write_big_mb = num();
    else if (a == "--fill")
      f.fill_mb = num();
    else if (a == "--tag" && i + 1 < argc)
      ++i;  // a marker in the command line, for tests that look for it in /proc
    else if (a == "bench")
      bench = true;
    else if (a == "--bench-nodes")
      bench_nodes = num();
    else if (a == "--bench-nps")
      bench_nps = std::max(1L, num());
    else if (a == "--bench-hang")
      bench_hang = true;
    else if (a == "--bench-garbage")
      bench_garbage = true;
    else if (a == "--bench-orphan")
      bench_orphan = true;
    else {
      fprintf(stderr, "test_engine: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  if (bench) return Bench(bench_nodes, bench_nps, bench_hang, bench_garbage, bench_orphan);
  test_engine::BuggyState state;
  Position& pos = state.pos;
  bool chess960 = false;
  int gos = 0, perfts = 0;
  std::string line;
  FILE* log = f.log_file.empty() ? nullptr : fopen(f.log_file.c_str(), "a");
  while (std::getline(std::cin, line)) {
    if (log) {
      fprintf(log, "%s\n", line.c_str());
      fflush(log);
    }
    std::vector<std::string_view> w = SplitWords(line);
    if (w.empty()) continue;
    if (w[0] == "uci") {
      if (f.slow_start_ms) std::this_thread::sleep_for(std::chrono::milliseconds(f.slow_start_ms));
      Say("id name TestEngine");
      Say("id author arbiter tests");
      Say("option name Hash type spin default 16 min 1 max 1024");
      Say("option name UCI_Chess960 type check default false");
      Say("option name Threads type spin default 1 min 1 max 512");
      Say("uciok");
    } else if (w[0] == "isready") {
      Say("readyok");
    } else if (w[0] == "setoption" && line.find("UCI_Chess960 value true") != std::string::npos) {
      chess960 = true;
    } else if (w[0] == "setoption" && line.find("UCI_Chess960 value false") != std::string::npos) {
      chess960 = false;
    } else if (w[0] == "position" && w.size() >= 2) {
      size_t i = 2;
      if (w[1] == "startpos") {
        pos = Position::StartPosition();
      } else {
        std::string fen;
        while (i < w.size() && w[i] != "moves") fen += Cat(fen.empty() ? "" : " ", w[i++]);
        auto p = Position::FromFen(fen);
        if (!p.ok()) {
          fprintf(stderr, "bad fen %s\n", fen.c_str());
          continue;
        }
        pos = *p;
      }
      pos.SetChess960(chess960);
      state.phantom = 0;
      if (i < w.size() && w[i] == "moves") ++i;
      for (; i < w.size(); ++i) {
        auto m = ParseUciMove(pos, w[i]);
        if (!m.ok()) break;
        test_engine::PlayBuggy(state, *m, f.movegen_bug);
      }
    } else if (!f.perft_bug && PerftRequest(f.perft_dialect, w) > 0) {
      const int depth = PerftRequest(f.perft_dialect, w);
      if (f.perft_crash_after >= 0 && perfts++ >= f.perft_crash_after) abort();
      std::vector<std::pair<std::string, uint64_t>> divide;
      if (f.movegen_bug != test_engine::MovegenBug::kNone) {
        divide = test_engine::DivideBuggy(state, depth, f.movegen_bug);
      } else {
        auto r = Perft(pos, PerftOptions{.depth = depth, .divide = true});
        if (r.ok())
          for (const PerftDivide& d : r->divide)
            divide.emplace_back(MoveToUci(pos, d.move), d.nodes);
      }
      uint64_t total = 0;
      for (auto& [m, n] : divide) {
        total += n;
        if (f.perft_dialect == "bare")
          Say(Cat(m, " ", n));
        else if (f.perft_dialect == "custom")
          Say(Cat("move ", m, " nodes ", n));
        else
          Say(Cat(m, ": ", n));
      }
      if (f.perft_dialect == "bare")
        Say(Cat("Total: ", total));
      else if (f.perft_dialect == "custom")
        Say(Cat("perft total = ", total));
      else
        Say(Cat("\nNodes searched: ", total, "\n"));
    } else if (f.perft_dialect == "silent" &&
               ((w[0] == "go" && w.size() >= 2 && w[1] == "perft") || w[0] == "perft")) {
      continue;
    } else if (w[0] == "go" && w.size() >= 3 && w[1] == "perft" && f.perft_dialect == "go") {
      int depth = std::atoi(std::string(w[2]).c_str());
      MoveList list;
      GenerateLegal(pos, list);
      uint64_t total = 0;
      for (Move m : list) {
        if (f.perft_bug && m.KindOf() == Move::kEnPassant) continue;
        Position p = pos;
        UndoInfo u;
        p.DoMove(m, u);
        uint64_t n = f.perft_bug ? PerftNoEp(p, depth - 1) : PerftReference(p, depth - 1);
        total += n;
        Say(Cat(MoveToUci(pos, m), ": ", n));
      }
      Say("");
      Say(Cat("Nodes searched: ", total));
    } else if (w[0] == "go") {
      const bool bad = ++gos > f.after;
      if (gos == f.after + 1) Misbehave(f);
      if (bad && f.crash) abort();
      if (bad && f.hang) {
        for (;;) pause();
      }
      MoveList legal;
      GenerateLegal(pos, legal);
      if (bad && f.ignore_stop) {
        for (int d = 1;; ++d) {
          Say(Cat("info depth ", d, " score cp 0 nodes ", d * 1000));
          pollfd p{0, POLLIN, 0};
          if (poll(&p, 1, 50) > 0) {
            std::string cmd;
            if (!std::getline(std::cin, cmd) || cmd == "quit") return 0;
          }
        }
      }
      if (bad && f.sleep_past_ms >= 0) {
        long own = GoValue(w, "movetime");
        if (own < 0) own = GoValue(w, pos.SideToMove() == kWhite ? "wtime" : "btime");
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max(0L, own) + f.sleep_past_ms));
      }
      if (f.flood > 0) {
        const std::string out = Cat("info depth 1 nodes 1 string ", std::string(200, 'x'), "\n");
        const std::string err = Cat("debug ", std::string(out.size() - 7, 'y'), "\n");
        for (long sent = 0; sent < f.flood; sent += long(out.size())) {
          fputs(out.c_str(), stdout);
          fputs(err.c_str(), stderr);
        }
        fflush(stdout);
      }
      if (bad && f.garbage) {
        Say("hello there, this is not UCI");
        Say(std::string(200000, 'g'));
        Say("info depth banana score cp");
        Say("bestmove xyzzy");
        continue;
      }
      if (bad && f.none) {
        Say("bestmove (none)");
        continue;
      }
      if (legal.size == 0) {
        Say("bestmove (none)");
        continue;
      }
      Move m = PickMove(pos, legal);
      std::string text = MoveToUci(pos, m);
      if (bad && f.illegal) {
        Square k = pos.KingSquare(pos.SideToMove());
        for (int to = 0; to < 64; ++to) {
          auto parsed = ParseUciMove(pos, Cat(SquareToString(k), SquareToString(Square(to))));
          if (to != k && !parsed.ok() &&
              (pos.Pieces(pos.SideToMove()) & SquareBb(Square(to))) == 0) {
            text = Cat(SquareToString(k), SquareToString(Square(to)));
            break;
          }
        }
      }
      Position after = pos;
      UndoInfo u;
      after.DoMove(m, u);
      int score = Material(after, ~pos.SideToMove()) - Material(after, pos.SideToMove());
      Say(Cat("info depth 1 seldepth 1 score cp ", -score, " nodes ", legal.size,
              " nps 1000 time 0 pv ", text));
      Say(Cat("bestmove ", text));
      if (bad && f.exit_after_move) return 0;
    } else if (w[0] == "quit") {
      return 0;
    }
  }
  return 0;
}

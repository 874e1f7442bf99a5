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
//   --exit-after-move exit right after its bestmove (it dies during the opponent's time)
#include <poll.h>
#include <unistd.h>

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

using namespace arbiter;

namespace {

struct Flags {
  int after = 0;
  bool crash = false, hang = false, ignore_stop = false, illegal = false, garbage = false,
       none = false, perft_bug = false, exit_after_move = false;
  int sleep_past_ms = -1;
  long flood = 0;
  int slow_start_ms = 0;
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

}  // namespace

int main(int argc, char** argv) {
  Flags f;
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
    else if (a == "--exit-after-move")
      f.exit_after_move = true;
    else if (a == "--sleep-past")
      f.sleep_past_ms = int(num());
    else if (a == "--flood")
      f.flood = num();
    else if (a == "--slow-start")
      f.slow_start_ms = int(num());
    else {
      fprintf(stderr, "test_engine: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  Position pos = Position::StartPosition();
  bool chess960 = false;
  int gos = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string_view> w = SplitWords(line);
    if (w.empty()) continue;
    if (w[0] == "uci") {
      if (f.slow_start_ms) std::this_thread::sleep_for(std::chrono::milliseconds(f.slow_start_ms));
      Say("id name TestEngine");
      Say("id author arbiter tests");
      Say("option name Hash type spin default 16 min 1 max 1024");
      Say("option name UCI_Chess960 type check default false");
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
      pos.SetChess960(chess960 || pos.IsChess960());
      if (i < w.size() && w[i] == "moves") ++i;
      for (; i < w.size(); ++i) {
        auto m = ParseUciMove(pos, w[i]);
        if (!m.ok()) break;
        UndoInfo u;
        pos.DoMove(*m, u);
      }
    } else if (w[0] == "go" && w.size() >= 3 && w[1] == "perft") {
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

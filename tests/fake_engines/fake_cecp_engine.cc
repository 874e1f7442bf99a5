// A small CECP (xboard protocol 2) engine for the match tests. It keeps the game from `new`,
// `setboard`, `usermove`/bare moves, `force` and `go` as the protocol says, plays quick legal
// moves (mate in one, else a capture, else a move picked from the position's hash) with one
// thinking line each, and answers `ping N` with `pong N`. On request it misbehaves from its
// (after+1)-th `go` on:
//   --uci-error      answer `uci` with "Error (unknown command): uci" (as many CECP engines do)
//   --no-features    a protocol 1 engine: no `feature` lines at all
//   --san            ask for SAN (feature san=1) and write its moves in SAN
//   --resign         resign instead of moving
//   --illegal        play an illegal move
//   --false-claim    claim "1-0 {White mates}" before each move (a claim arbiter ignores)
//   --reject-moves   answer every move it is sent with "Illegal move: X"
//   --hang           never move, even after `?`
//   --error-easy     answer `easy` with "Error (unknown command): easy"
//   --no-setboard    announce setboard=0: positions come by `edit` (as Fairy-Max's do)
//   --log FILE       append every line received to FILE
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/position.h"

namespace {

using arbiter::Move;
using arbiter::MoveList;
using arbiter::Position;

struct Flags {
  int after = 0;
  bool uci_error = false, no_features = false, san = false, resign = false, illegal = false,
       false_claim = false, reject_moves = false, hang = false, error_easy = false,
       no_setboard = false;
  std::string log;
};

void Say(const std::string& line) { std::cout << line << "\n" << std::flush; }

Move PickMove(const Position& pos) {
  MoveList legal;
  arbiter::GenerateLegal(pos, legal);
  for (int i = 0; i < legal.size; ++i) {
    Position p = pos;
    arbiter::UndoInfo u;
    p.DoMove(legal.moves[i], u);
    MoveList replies;
    arbiter::GenerateLegal(p, replies);
    if (replies.size == 0 && p.InCheck()) return legal.moves[i];
  }
  for (int i = 0; i < legal.size; ++i)
    if (pos.IsCapture(legal.moves[i])) return legal.moves[i];
  return legal.moves[pos.Key().lo % uint64_t(legal.size)];
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--after" && i + 1 < argc)
      f.after = std::atoi(argv[++i]);
    else if (a == "--uci-error")
      f.uci_error = true;
    else if (a == "--no-features")
      f.no_features = true;
    else if (a == "--san")
      f.san = true;
    else if (a == "--resign")
      f.resign = true;
    else if (a == "--illegal")
      f.illegal = true;
    else if (a == "--false-claim")
      f.false_claim = true;
    else if (a == "--reject-moves")
      f.reject_moves = true;
    else if (a == "--hang")
      f.hang = true;
    else if (a == "--error-easy")
      f.error_easy = true;
    else if (a == "--no-setboard")
      f.no_setboard = true;
    else if (a == "--log" && i + 1 < argc)
      f.log = argv[++i];
  }
  std::ofstream log;
  if (!f.log.empty()) log.open(f.log, std::ios::app);
  Position pos = Position::StartPosition();
  bool force = true;
  int gos = 0;
  auto think_and_move = [&]() {
    if (++gos > f.after) {
      if (f.hang) return;
      if (f.resign) {
        Say("resign");
        return;
      }
      if (f.illegal) {
        Say("move a1a1");
        return;
      }
      if (f.false_claim) Say("1-0 {White mates}");
    }
    MoveList legal;
    arbiter::GenerateLegal(pos, legal);
    if (legal.size == 0) return;
    const Move m = PickMove(pos);
    Say("1 12 0 100 " + arbiter::MoveToUci(pos, m));
    const std::string text = f.san ? arbiter::MoveToSan(pos, m) : arbiter::MoveToUci(pos, m);
    arbiter::UndoInfo u;
    pos.DoMove(m, u);
    Say("move " + text);
  };
  // `edit` mode: the board being set up (a8 first, as a FEN reads) and the colour placed.
  bool editing = false;
  char board[64];
  char edit_color = 'w';
  std::string line;
  while (std::getline(std::cin, line)) {
    if (log.is_open()) log << line << "\n" << std::flush;
    if (editing) {
      if (line == "#") {
        std::fill(board, board + 64, ' ');
      } else if (line == "c") {
        edit_color = edit_color == 'w' ? 'b' : 'w';
      } else if (line == ".") {
        editing = false;
        std::string fen;
        for (int r = 0; r < 8; ++r) {
          int empty = 0;
          for (int c = 0; c < 8; ++c) {
            const char p = board[r * 8 + c];
            if (p == ' ') {
              ++empty;
              continue;
            }
            if (empty) fen += char('0' + empty);
            empty = 0;
            fen += p;
          }
          if (empty) fen += char('0' + empty);
          if (r < 7) fen += '/';
        }
        // Castling wherever king and rook stand at home, as the protocol says.
        std::string castle;
        if (board[60] == 'K' && board[63] == 'R') castle += 'K';
        if (board[60] == 'K' && board[56] == 'R') castle += 'Q';
        if (board[4] == 'k' && board[7] == 'r') castle += 'k';
        if (board[4] == 'k' && board[0] == 'r') castle += 'q';
        fen += std::string(pos.SideToMove() == arbiter::kWhite ? " w " : " b ") +
               (castle.empty() ? "-" : castle) + " - 0 1";
        auto p = Position::FromFen(fen);
        if (p.ok())
          pos = *p;
        else
          Say("tellusererror Illegal position " + fen);
      } else if (line.size() == 3) {
        const int sq = (7 - (line[2] - '1')) * 8 + (line[1] - 'a');
        if (sq >= 0 && sq < 64)
          board[sq] = char(edit_color == 'w' ? line[0] : std::tolower(line[0]));
      }
      continue;
    }
    if (line == "edit") {
      editing = true;
      edit_color = 'w';
      std::fill(board, board + 64, ' ');
    } else if (line == "uci") {
      if (f.uci_error) Say("Error (unknown command): uci");
    } else if (line == "protover 2") {
      if (f.no_features) continue;
      Say(std::string("feature ping=1 usermove=1 myname=\"cecp test\" san=") + (f.san ? "1" : "0") +
          " setboard=" + (f.no_setboard ? "0" : "1") + " done=0");
      Say("feature option=\"Style -combo Solid /// Wild\"");
      Say("feature done=1");
    } else if (line == "new") {
      pos = Position::StartPosition();
      force = false;
    } else if (line == "force") {
      force = true;
    } else if (line == "go") {
      force = false;
      think_and_move();
    } else if (line == "?") {
      // Moves at once anyway (it never thinks long), unless hanging.
    } else if (line.rfind("ping ", 0) == 0) {
      Say("pong " + line.substr(5));
    } else if (line.rfind("setboard ", 0) == 0) {
      auto p = Position::FromFen(line.substr(9));
      if (p.ok())
        pos = *p;
      else
        Say("tellusererror Illegal position");
    } else if (line == "easy" && f.error_easy) {
      Say("Error (unknown command): easy");
    } else if (line == "quit") {
      return 0;
    } else {
      std::string text = line.rfind("usermove ", 0) == 0 ? line.substr(9) : line;
      auto m = arbiter::ParseUciMove(pos, text);
      if (!m.ok()) m = arbiter::ParseSanMove(pos, text);
      if (!m.ok()) continue;  // xboard, accepted, level, time, otim, post, easy, option, ...
      if (f.reject_moves) {
        Say("Illegal move: " + text);
        continue;
      }
      arbiter::UndoInfo u;
      pos.DoMove(*m, u);
      if (!force) think_and_move();
    }
  }
  return 0;
}

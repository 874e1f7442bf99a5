// One game between two UCI engines, arbitrated move by move (rules.md): every move is checked
// by the core, the clocks run from `go` sent to `bestmove` read, faults lose, and the result
// carries the reason the game ended.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "engine/position.h"
#include "engine/rules.h"
#include "match/time_control.h"
#include "match/uci_engine.h"

namespace arbiter::match {

// Why a game ended, as the match reports it.
enum class GameEnd {
  kNormal,        // the board: mate, stalemate, dead position, repetition, 50/75 moves
  kTimeForfeit,   // a flag fell (a loss, or a draw when the opponent cannot mate)
  kIllegalMove,   // an illegal or unparsable bestmove
  kDisconnect,    // the engine exited, closed its output or could not be started
  kStall,         // no bestmove even after `stop` and the grace period
  kAdjudication,  // resign/draw by scores, or the maximum length
  kResignation,   // the engine to move resigned (CECP `resign`)
  kAborted,       // the match stopped before the game finished (not scored)
};
std::string_view GameEndName(GameEnd end);
// The PGN Termination tag value ("normal", "time forfeit", "rules infraction", ...).
std::string_view GameEndPgnTag(GameEnd end);
// Whether the end is one side's fault: a time forfeit, an illegal move, a disconnect, a stall.
bool IsFault(GameEnd end);

// Faults of one engine over a match, by kind (the local runner's count and the coordinator's).
struct FaultCounts {
  uint64_t time_losses = 0, disconnects = 0, stalls = 0, illegal_moves = 0;
  // Counts `end` when it is a fault (IsFault); other ends count nothing.
  void Add(GameEnd end);
};

struct Adjudication {
  int draw_move_number = 0;   // draw adjudication from this full move on (with draw_move_count)
  int draw_move_count = 0;    // 0 = off; moves (per engine) in a row with |score| <= draw_score
  int draw_score = 0;         // centipawns
  int resign_move_count = 0;  // 0 = off; moves (per engine) in a row both engines agree ...
  int resign_score = 0;       // ... that one side is ahead by at least this much
  int max_moves = 0;          // 0 = off; full moves after which the game is drawn
};

struct GameSettings {
  TimeControl tc[2];               // per colour (the per-engine override already applied)
  Millis margin{50};               // overruns up to this are forgiven
  Millis stop_grace{1000};         // after `stop` (or the flag) the wait for `bestmove`
  Millis no_clock_timeout{60000};  // depth/nodes searches: longest wait before `stop`
  bool chess960 = false;
  Adjudication adjudication;
  // Counts every move played (book moves aside), for a worker's heartbeats; null: not counted.
  std::atomic<uint64_t>* plies = nullptr;
};

struct Opening {
  Position start = Position::StartPosition();
  std::vector<Move> moves;  // book moves played before the engines take over
};

struct MoveRecord {
  Move move;
  std::string san;
  UciScore score;  // from the mover's point of view
  int depth = -1;
  Millis time{0};
  bool book = false;
  bool auto_move = false;  // made by the arbiter after a per-move expiry
};

struct GameRecord {
  std::string white, black;
  Position start = Position::StartPosition();
  std::vector<MoveRecord> moves;
  GameResult result = GameResult::kOngoing;
  GameEnd end = GameEnd::kAborted;
  Termination board = Termination::kNone;  // kNormal: which rule
  std::string reason;                      // e.g. "Black's flag fell (overrun 12 ms)"
  Color faulty = kWhite;                   // the side at fault (faults and time forfeits)
  Millis overrun{0};
  std::string illegal_move;  // kIllegalMove: the text the engine sent
  std::string illegal_fen;   // ... and the position it was sent in
  TimeControl tc[2];
  // Timing for the overhead report: engine think time and wall time of the move loop.
  std::chrono::microseconds think{0}, wall{0};
  int engine_moves = 0;
  // Why the engine at fault could not be (re)started, take its options or answer `ucinewgame`
  // (empty when it could).
  std::string start_error;
};

// A fault before the faulty engine's first move: it could not start, handshake or take its
// options, or it exited before moving. Not a game: it is never counted, scored or rated.
bool Unplayed(const GameRecord& record);

// Plays one game. `engines[c]` plays colour c; each is (re)started if needed and given
// ucinewgame. `abort` (optional) ends the game early as kAborted.
GameRecord PlayGame(UciEngine* engines[2], const Opening& opening, const GameSettings& settings,
                    const std::atomic<bool>* abort = nullptr);

}  // namespace arbiter::match

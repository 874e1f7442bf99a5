// Time controls (the `--tc` syntax) and the chess clock that enforces them (rules.md, "Clocks").
//
//   ASSIGN_OR_RETURN(TimeControl tc, ParseTimeControl("40/7200:20/3600:1800"));
//   Clock clock(tc);
//   GoLimits go = clock.ForGo();            // what to send in `go`
//   MoveVerdict v = clock.Finish(used, margin);  // after `bestmove`
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace arbiter::match {

using Millis = std::chrono::milliseconds;

struct TcPeriod {
  int moves = 0;        // moves in this period; 0 = the rest of the game
  Millis time{0};       // added when the period starts
  Millis increment{0};  // Fischer increment or delay for each move of this period
};

struct TimeControl {
  enum class Kind { kClock, kMoveTime, kDepth, kNodes };
  // How the clock gives time back after a move (kClock only).
  enum class Bonus { kNone, kFischer, kBronstein, kSimpleDelay };

  Kind kind = Kind::kClock;
  std::vector<TcPeriod> periods;  // kClock; the last repeats when it has a move count
  Bonus bonus = Bonus::kNone;     // the kind of every period's increment
  bool sandclock = false;  // kClock, one period: the time a side uses goes to the other (`*60`)
  Millis movetime{0};      // kMoveTime: the limit per move
  int forfeit_after = 0;   // kMoveTime online variant: N expiries in a row lose (0: first)
  int depth = 0;
  uint64_t nodes = 0;

  bool HasClock() const { return kind == Kind::kClock || kind == Kind::kMoveTime; }
  // The canonical `--tc` text ("40/7200:20/3600:1800", "10+0.1b", "40/60+1:30+1", "*60",
  // "movetime=1", ...): every period's increment is written once any period has one.
  std::string ToString() const;
  // The PGN TimeControl tag value as the PGN standard reads it ("40/7200:1800", "40/60+1:30+1",
  // "*60", "-" for depth/nodes), or "?" when the standard cannot express the clock (Bronstein,
  // simple delay, a fixed time per move): PgnExtension then holds the exact control.
  std::string ToPgn() const;
  // The `ArbiterTimeControl` tag value (the `--tc` text) when ToPgn does not say the whole
  // clock (Bronstein, delay, movetime, depth, nodes); empty otherwise (docs/rules.md, "Clocks").
  std::string PgnExtension() const;
};

// `tc` with every time in it (periods, increment or delay, movetime) multiplied by `factor` and
// rounded to the millisecond (at least 1 ms where there was time); depth and nodes unchanged.
// Fair clocks: a worker at half the reference speed plays with twice the time.
TimeControl ScaleTimeControl(TimeControl tc, double factor);
// The clock scales a worker may use (reference / measured speed); outside, it refuses the job.
inline constexpr double kMinClockScale = 0.01;
inline constexpr double kMaxClockScale = 100;

// Parses every `--tc` form of docs/rules.md; errors name the part that is wrong. An increment
// written only on the last of several periods applies to every period ("40/60:30+1" is
// "40/60+1:30+1"); once an earlier period has one, each period has its own ("40/60+1:30" has
// none in the second period, "40/60+0:30+1" none in the first).
absl::StatusOr<TimeControl> ParseTimeControl(std::string_view text);

// What the side to move is told in `go` about its own clock.
struct GoLimits {
  Millis time{0};       // remaining main time (kClock)
  Millis increment{0};  // Fischer increment, or the delay (rules.md: delay sent as increment)
  int movestogo = 0;    // moves left in the period; 0 = not sent
};

// The outcome of one move on the clock.
struct MoveVerdict {
  bool flag_fell = false;  // the move came too late (kClock; kMoveTime after N expiries)
  bool expired = false;    // kMoveTime online variant: this move expired (auto-move)
  Millis overrun{0};       // how far past the allowance (and margin) the move came
};

class Clock {
 public:
  explicit Clock(const TimeControl& tc);

  const TimeControl& tc() const { return tc_; }
  GoLimits ForGo() const;
  // Longest the move may take before the flag falls (margin not included).
  Millis Allowance() const;
  // Books a move that took `used`; the margin absorbs transport jitter.
  MoveVerdict Finish(Millis used, Millis margin);
  // A sandclock (hourglass): the opponent used `used`, which runs into this side's glass.
  void CreditOpponentTime(Millis used);
  // Main time left (may be negative after a flag fall).
  Millis Remaining() const { return remaining_; }
  int MovesPlayed() const { return moves_; }

 private:
  TimeControl tc_;
  Millis remaining_{0};
  size_t period_ = 0;
  int moves_in_period_ = 0;
  int moves_ = 0;
  int expiries_in_row_ = 0;
};

}  // namespace arbiter::match

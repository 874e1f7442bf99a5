// Game-state rules (docs/rules.md, "How a game ends"): checkmate, stalemate, dead
// position, fivefold / threefold repetition, 75- and 50-move rules, and whether a side can still
// mate at all (flag falls). Usage:
//   Game game(Position::StartPosition());
//   RETURN_IF_ERROR(game.PlayUci("e2e4"));
//   if (game.Outcome().IsOver()) ... ResultString(game.Outcome().result) ...
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

enum class GameResult : uint8_t { kOngoing, kWhiteWins, kBlackWins, kDraw };

// Why the board ended the game (the order is the order rules.md checks them in).
enum class Termination : uint8_t {
  kNone,
  kCheckmate,
  kStalemate,
  kDeadPosition,
  kFivefoldRepetition,
  kSeventyFiveMoveRule,
  kThreefoldRepetition,
  kFiftyMoveRule,
};

struct GameOutcome {
  GameResult result = GameResult::kOngoing;
  Termination termination = Termination::kNone;

  bool IsOver() const { return result != GameResult::kOngoing; }
  // The winning colour, or nullopt for a draw or an unfinished game.
  std::optional<Color> Winner() const;
  bool operator==(const GameOutcome&) const = default;
};

// "1-0", "0-1", "1/2-1/2" or "*" (PGN result tokens).
std::string_view ResultString(GameResult result);
// Lower-case words for logs and PGN comments: "checkmate", "threefold repetition", ...
std::string_view TerminationName(Termination termination);

// True when `side` can give checkmate by some series of legal moves (the opponent cooperating).
// Decided from material only, and "cannot" is answered only when it is certain:
//   - a bare king never mates;
//   - king + one knight mates only with the help of an enemy blocker that cannot capture or
//     block the knight: any enemy pawn, knight, bishop or rook (enemy queens alone do not help:
//     a queen on a flight square always takes the checking knight or leaves a flight square);
//   - kings + bishops all on one square colour mate only if the enemy has a pawn, a knight or a
//     bishop on the other colour to block a flight square (enemy rooks and queens do not help:
//     they capture or interpose);
//   - anything else (a pawn, rook or queen, two knights, knight + bishop, bishops of both
//     colours) counts as able to mate.
// Blocked-pawn fortresses are not analysed: such positions count as "can mate".
bool CanCheckmate(const Position& pos, Color side);

// Dead position: neither side can checkmate (covers K v K, K+N v K, K+B v K and any number of
// same-coloured bishops on both sides).
bool IsDeadPosition(const Position& pos);

// Checkmate, stalemate and dead position: what a single position decides by itself.
GameOutcome PositionOutcome(const Position& pos);

// The key repetition compares: piece placement, side to move, castling rights, and the en
// passant file only when an en passant capture is legal. (Position::Key() counts the ep file as
// soon as a pawn attacks the square, even if the capture would be illegal.)
Key128 RepetitionKey(const Position& pos);

// A game from a start position: the moves played, the repetition keys, the outcome.
class Game {
 public:
  explicit Game(const Position& start);
  static absl::StatusOr<Game> FromFen(std::string_view fen);

  // Plays a move; fails (leaving the game unchanged) if the move is illegal or the game is over.
  absl::Status Play(Move m);
  absl::Status PlayUci(std::string_view uci);
  absl::Status PlaySan(std::string_view san);

  // The outcome after the last move, checked in rules.md's order. Threefold repetition and the
  // 50-move rule count only while draws are claimed automatically (the default).
  GameOutcome Outcome() const { return outcome_; }
  // A draw the side to move could claim now (threefold / 50-move), whether or not auto-claim is on.
  GameOutcome ClaimableDraw() const;
  void SetAutoClaimDraws(bool on);
  bool AutoClaimDraws() const { return auto_claim_; }

  // How often the current position (by RepetitionKey) has occurred in this game, counting now.
  int RepetitionCount() const;

  const Position& Start() const { return start_; }
  const Position& Current() const { return current_; }
  const std::vector<Move>& Moves() const { return moves_; }
  int Plies() const { return int(moves_.size()); }

 private:
  GameOutcome Evaluate() const;
  absl::Status CheckNotOver(std::string_view move_text) const;

  Position start_;
  Position current_;
  std::vector<Move> moves_;
  std::vector<Key128> keys_;  // keys_[i]: repetition key after i plies (keys_[0] = start)
  bool auto_claim_ = true;
  GameOutcome outcome_;
};

}  // namespace arbiter

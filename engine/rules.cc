#include "engine/rules.h"

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"

namespace arbiter {
namespace {

// Half-move clock values at which the 50- and 75-move rules apply.
constexpr int kFiftyMovePlies = 100;
constexpr int kSeventyFiveMovePlies = 150;

}  // namespace

std::optional<Color> GameOutcome::Winner() const {
  if (result == GameResult::kWhiteWins) return kWhite;
  if (result == GameResult::kBlackWins) return kBlack;
  return std::nullopt;
}

std::string_view ResultString(GameResult result) {
  switch (result) {
    case GameResult::kWhiteWins:
      return "1-0";
    case GameResult::kBlackWins:
      return "0-1";
    case GameResult::kDraw:
      return "1/2-1/2";
    case GameResult::kOngoing:
      break;
  }
  return "*";
}

std::string_view TerminationName(Termination termination) {
  switch (termination) {
    case Termination::kNone:
      return "none";
    case Termination::kCheckmate:
      return "checkmate";
    case Termination::kStalemate:
      return "stalemate";
    case Termination::kDeadPosition:
      return "dead position";
    case Termination::kFivefoldRepetition:
      return "fivefold repetition";
    case Termination::kSeventyFiveMoveRule:
      return "75-move rule";
    case Termination::kThreefoldRepetition:
      return "threefold repetition";
    case Termination::kFiftyMoveRule:
      return "50-move rule";
  }
  return "unknown";
}

bool CanCheckmate(const Position& pos, Color side) {
  const Color them = ~side;
  if (pos.Pieces(side, kPawn) | pos.Pieces(side, kRook) | pos.Pieces(side, kQueen)) return true;
  const Bitboard knights = pos.Pieces(side, kKnight), bishops = pos.Pieces(side, kBishop);
  if (!knights && !bishops) return false;  // bare king
  if (knights) {
    if (bishops || MoreThanOne(knights)) return true;
    // A single knight needs an enemy blocker that does not simply take it: anything but queens.
    return (pos.Pieces(them) & ~pos.Pieces(them, kKing) & ~pos.Pieces(them, kQueen)) != 0;
  }
  // Bishops only: all on one colour, or mate is possible (bishop pair, even vs a bare king).
  const bool dark = bishops & kDarkSquares, light = bishops & ~kDarkSquares;
  if (dark && light) return true;
  const Bitboard other_colour = dark ? ~kDarkSquares : kDarkSquares;
  return (pos.Pieces(them, kPawn) | pos.Pieces(them, kKnight) |
          (pos.Pieces(them, kBishop) & other_colour)) != 0;
}

bool IsDeadPosition(const Position& pos) {
  return !CanCheckmate(pos, kWhite) && !CanCheckmate(pos, kBlack);
}

GameOutcome PositionOutcome(const Position& pos) {
  if (CountLegal(pos) == 0) {
    if (pos.InCheck())
      return {pos.SideToMove() == kWhite ? GameResult::kBlackWins : GameResult::kWhiteWins,
              Termination::kCheckmate};
    return {GameResult::kDraw, Termination::kStalemate};
  }
  if (IsDeadPosition(pos)) return {GameResult::kDraw, Termination::kDeadPosition};
  return {};
}

Key128 RepetitionKey(const Position& pos) {
  Key128 key = pos.Key();
  const Square ep = pos.EpSquare();
  const Color us = pos.SideToMove();
  // The incremental key holds the ep file whenever one of our pawns attacks the square.
  if (ep != kNoSquare && (PawnAttacks(~us, ep) & pos.Pieces(us, kPawn)) && !pos.EpCaptureLegal())
    key.Toggle(zobrist::kZobrist.ep_file[FileOf(ep)]);
  return key;
}

Game::Game(const Position& start) : start_(start), current_(start) {
  keys_.push_back(RepetitionKey(current_));
  outcome_ = Evaluate();
}

absl::StatusOr<Game> Game::FromFen(std::string_view fen) {
  absl::StatusOr<Position> pos = Position::FromFen(fen);
  if (!pos.ok()) return pos.status();
  return Game(*pos);
}

absl::Status Game::CheckNotOver(std::string_view move_text) const {
  if (!outcome_.IsOver()) return absl::OkStatus();
  return absl::FailedPreconditionError(Cat("move ", move_text, " after the game ended (",
                                           TerminationName(outcome_.termination), ", ",
                                           ResultString(outcome_.result), ")"));
}

absl::Status Game::Play(Move m) {
  RETURN_IF_ERROR(CheckNotOver(MoveToUci(current_, m)));
  if (!IsLegal(current_, m))
    return absl::InvalidArgumentError(
        Cat("illegal move ", MoveToUci(current_, m), " in position ", current_.Fen()));
  UndoInfo undo;
  current_.DoMove(m, undo);
  moves_.push_back(m);
  keys_.push_back(RepetitionKey(current_));
  outcome_ = Evaluate();
  return absl::OkStatus();
}

absl::Status Game::PlayUci(std::string_view uci) {
  RETURN_IF_ERROR(CheckNotOver(uci));
  absl::StatusOr<Move> m = ParseUciMove(current_, uci);
  if (!m.ok()) return m.status();
  return Play(*m);
}

absl::Status Game::PlaySan(std::string_view san) {
  RETURN_IF_ERROR(CheckNotOver(san));
  absl::StatusOr<Move> m = ParseSanMove(current_, san);
  if (!m.ok()) return m.status();
  return Play(*m);
}

void Game::SetAutoClaimDraws(bool on) {
  auto_claim_ = on;
  outcome_ = Evaluate();
}

int Game::RepetitionCount() const {
  // Only positions since the last capture or pawn move can match; those with the same side to
  // move lie an even number of plies back. Keys are 128 bits, so a false match is negligible.
  const int last = int(keys_.size()) - 1;
  const int window = std::min(current_.HalfmoveClock(), last);
  int count = 1;
  for (int back = 2; back <= window; back += 2)
    if (keys_[last - back] == keys_[last]) ++count;
  return count;
}

GameOutcome Game::ClaimableDraw() const {
  if (PositionOutcome(current_).IsOver()) return {};
  if (RepetitionCount() >= 3) return {GameResult::kDraw, Termination::kThreefoldRepetition};
  if (current_.HalfmoveClock() >= kFiftyMovePlies)
    return {GameResult::kDraw, Termination::kFiftyMoveRule};
  return {};
}

GameOutcome Game::Evaluate() const {
  // Mate and stalemate come first, so a mate on the move that reaches the 50/75-move count stands.
  GameOutcome out = PositionOutcome(current_);
  if (out.IsOver()) return out;
  const int repetitions = RepetitionCount();
  if (repetitions >= 5) return {GameResult::kDraw, Termination::kFivefoldRepetition};
  if (current_.HalfmoveClock() >= kSeventyFiveMovePlies)
    return {GameResult::kDraw, Termination::kSeventyFiveMoveRule};
  if (auto_claim_) {
    if (repetitions >= 3) return {GameResult::kDraw, Termination::kThreefoldRepetition};
    if (current_.HalfmoveClock() >= kFiftyMovePlies)
      return {GameResult::kDraw, Termination::kFiftyMoveRule};
  }
  return {};
}

}  // namespace arbiter

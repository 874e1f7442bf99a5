#include "engine/perft_lane.h"

#include <array>

#include "base/strings.h"

namespace arbiter {

uint64_t HashWords(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x243f6a8885a308d3;
  for (uint64_t w : words) h = Fold(h ^ w, 0x9e3779b97f4a7c15);
  return h;
}

namespace {

// One side's pieces, by type.
using SidePieces = std::array<Bitboard, 6>;
SidePieces PiecesOf(const Position& pos, Color c) {
  SidePieces b;
  for (int pt = kPawn; pt <= kKing; ++pt) b[pt] = pos.Pieces(c, PieceType(pt));
  return b;
}
uint64_t KeyOf(const SidePieces& b) {
  return HashWords({b[kPawn], b[kKnight], b[kBishop], b[kRook], b[kQueen], b[kKing]}) >> 1;
}

}  // namespace

uint64_t ShardKey(const Position& pos) { return KeyOf(PiecesOf(pos, ~pos.SideToMove())); }

uint64_t ShardKeyAfter(const Position& pos, Move m) {
  const Color us = pos.SideToMove();
  SidePieces b = PiecesOf(pos, us);
  const Square from = m.From(), to = m.To();
  auto bit = [](Square s) { return Bitboard{1} << s; };
  if (m.KindOf() == Move::kCastling) {  // king takes its own rook; either may stay where it is
    const bool king_side = to > from;
    b[kKing] ^= bit(from) ^ bit(Position::CastlingKingTo(us, king_side));
    b[kRook] ^= bit(to) ^ bit(Position::CastlingRookTo(us, king_side));
  } else {
    const PieceType pt = TypeOf(pos.PieceOn(from));
    b[pt] ^= bit(from) | bit(to);  // a capture takes nothing of the mover's
    if (m.KindOf() == Move::kPromotion) {
      b[kPawn] ^= bit(to);
      b[m.Promotion()] ^= bit(to);
    }
  }
  return KeyOf(b);
}

absl::Status CheckPerftLane(PerftLane lane, int depth) {
  if (!lane.active()) return absl::OkStatus();
  if (lane.begin >= lane.end || lane.end > kShardKeyEnd)
    return absl::InvalidArgumentError(
        Cat("lane [", lane.begin, ", ", lane.end, ") is not a non-empty range of keys below 2^63"));
  if (depth < kLanePlies)
    return absl::InvalidArgumentError(Cat("a lane needs a perft depth of at least ", kLanePlies,
                                          " (it picks positions ", kLanePlies,
                                          " plies below each one), got ", depth));
  return absl::OkStatus();
}

}  // namespace arbiter

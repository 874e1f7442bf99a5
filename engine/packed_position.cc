#include "engine/packed_position.h"

#include "base/strings.h"

namespace arbiter {

PackedPosition PackPosition(const Position& pos) {
  PackedPosition p{};
  for (int s = 0; s < 64; s += 2)
    p[s / 2] = uint8_t(pos.PieceOn(Square(s)) | (pos.PieceOn(Square(s + 1)) << 4));
  p[32] = uint8_t(pos.SideToMove() | (pos.CastlingRights() << 1));
  p[33] = uint8_t(pos.EpSquare());
  return p;
}

absl::StatusOr<Position> UnpackPosition(std::string_view bytes, const Position& game) {
  if (bytes.size() != kPackedPositionSize)
    return absl::InvalidArgumentError(
        Cat("a packed position has ", kPackedPositionSize, " bytes, got ", bytes.size()));
  Position::Parts parts;
  for (int s = 0; s < 64; ++s)
    parts.board[s] = Piece((uint8_t(bytes[s / 2]) >> (4 * (s & 1))) & 15);
  const uint8_t state = uint8_t(bytes[32]);
  if (state >> 5)
    return absl::InvalidArgumentError(Cat("packed position: bad state byte ", int(state)));
  parts.side = Color(state & 1);
  for (int idx = 0; idx < 4; ++idx) {
    if (!(state & (2 << idx))) continue;
    if (!game.CanCastle(idx))
      return absl::InvalidArgumentError(
          Cat("packed position: castling right ", idx, " that the game's root does not have"));
    parts.castling_rooks[idx] = game.CastlingRook(idx);
  }
  parts.ep = Square(uint8_t(bytes[33]));
  parts.chess960 = game.IsChess960();
  absl::StatusOr<Position> pos = Position::FromParts(parts);
  if (!pos.ok())
    return absl::InvalidArgumentError(Cat("packed ", std::string(pos.status().message())));
  return pos;
}

}  // namespace arbiter

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
  static constexpr char kChars[] = "PNBRQK";
  std::string fen;
  fen.reserve(90);
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      const int s = rank * 8 + file;
      const int code = (uint8_t(bytes[s / 2]) >> (4 * (s & 1))) & 15;
      if (code == kNoPiece) {
        ++empty;
        continue;
      }
      if (TypeOf(Piece(code)) > kKing)
        return absl::InvalidArgumentError(
            Cat("packed position: bad piece code ", code, " on square ", s));
      if (empty) fen += char('0' + empty), empty = 0;
      const char ch = kChars[TypeOf(Piece(code))];
      fen += ColorOf(Piece(code)) == kWhite ? ch : char(ch - 'A' + 'a');
    }
    if (empty) fen += char('0' + empty);
    if (rank) fen += '/';
  }
  const uint8_t state = uint8_t(bytes[32]);
  if (state >> 5)
    return absl::InvalidArgumentError(Cat("packed position: bad state byte ", int(state)));
  fen += (state & 1) ? " b " : " w ";
  const int rights = state >> 1;
  if (!rights) fen += '-';
  for (int idx = 0; idx < 4; ++idx) {
    if (!(rights & (1 << idx))) continue;
    char ch;
    if (game.IsChess960())
      ch = char('A' + FileOf(game.CastlingRook(idx)));  // Shredder-FEN: the rook's file
    else
      ch = idx % 2 == 0 ? 'K' : 'Q';
    fen += idx < 2 ? ch : char(ch - 'A' + 'a');
  }
  const int ep = uint8_t(bytes[33]);
  if (ep > kNoSquare)
    return absl::InvalidArgumentError(Cat("packed position: bad en passant square ", ep));
  fen += ' ';
  if (ep == kNoSquare) {
    fen += '-';
  } else {
    fen += char('a' + (ep & 7));
    fen += char('1' + (ep >> 3));
  }
  fen += " 0 1";
  absl::StatusOr<Position> pos = Position::FromFen(fen);
  if (!pos.ok())
    return absl::InvalidArgumentError(
        Cat("packed position '", fen, "': ", std::string(pos.status().message())));
  pos->SetChess960(game.IsChess960());
  return pos;
}

}  // namespace arbiter

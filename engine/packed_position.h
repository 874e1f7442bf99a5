// A position in 34 bytes, exact for perft: two squares a byte (a1 first, low nibble = the even
// square, piece codes as in types.h), then side to move | castling rights << 1, then the en
// passant square. The move clocks are not kept (they do not change a perft count).
//
//   PackedPosition p = PackPosition(pos);
//   absl::StatusOr<Position> back = UnpackPosition(AsBytes(p), root);  // root: same game
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

inline constexpr size_t kPackedPositionSize = 34;
using PackedPosition = std::array<uint8_t, kPackedPositionSize>;

PackedPosition PackPosition(const Position& pos);

// The piece code of square `s` in packed bytes (kNoPiece where empty; not checked).
inline Piece PackedPieceOn(const uint8_t* bytes, int s) {
  return Piece((bytes[s / 2] >> (4 * (s & 1))) & 15);
}

inline std::string_view AsBytes(const PackedPosition& p) {
  return std::string_view(reinterpret_cast<const char*>(p.data()), p.size());
}

// Rebuilds a packed position (exactly kPackedPositionSize bytes). The castling rooks and the
// variant (Chess960 or not) are those of `game`, any position of the same game, e.g. its root;
// the move clocks are 0 and 1. Bad bytes give INVALID_ARGUMENT.
absl::StatusOr<Position> UnpackPosition(std::string_view bytes, const Position& game);
// The same into `out` (any position; unspecified on error), with no copy of a Position.
absl::Status UnpackPosition(std::string_view bytes, const Position& game, Position& out);

}  // namespace arbiter

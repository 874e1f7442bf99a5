#include "engine/packed_position.h"

#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/status_macros.h"
#include "base/strings.h"

namespace arbiter {

PackedPosition PackPosition(const Position& pos) {
  // Eight squares (one piece code a byte, each < 16) at a time: the low nibbles of the odd
  // bytes move up into the even ones, then the even bytes are gathered into four.
  PackedPosition p;
  const uint8_t* board = pos.Board();
  for (int w = 0; w < 8; w += 2) {
    uint64_t out = 0;
    for (int half = 0; half < 2; ++half) {
      uint64_t x;
      std::memcpy(&x, board + 8 * (w + half), 8);
      x = (x | (x >> 4)) & 0x00ff00ff00ff00ffULL;
      x = (x | (x >> 8)) & 0x0000ffff0000ffffULL;
      x = (x | (x >> 16)) & 0x00000000ffffffffULL;
      out |= x << (32 * half);
    }
    std::memcpy(p.data() + 4 * w, &out, 8);
  }
  p[32] = uint8_t(pos.SideToMove() | (pos.CastlingRights() << 1));
  p[33] = uint8_t(pos.EpSquare());
  return p;
}

absl::StatusOr<Position> UnpackPosition(std::string_view bytes, const Position& game) {
  Position pos = game;
  RETURN_IF_ERROR(UnpackPosition(bytes, game, pos));
  return pos;
}

absl::Status UnpackPosition(std::string_view bytes, const Position& game, Position& out) {
  if (bytes.size() != kPackedPositionSize)
    return absl::InvalidArgumentError(
        Cat("a packed position has ", kPackedPositionSize, " bytes, got ", bytes.size()));
  Position::Parts parts;
  static_assert(sizeof(parts.board) == 64);
#ifdef __SSE2__
  // Byte k holds squares 2k (low nibble) and 2k + 1: the nibbles of 16 bytes interleaved.
  const __m128i low = _mm_set1_epi8(0x0f);
  for (int half = 0; half < 2; ++half) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes.data() + 16 * half));
    const __m128i even = _mm_and_si128(x, low), odd = _mm_and_si128(_mm_srli_epi16(x, 4), low);
    auto* out = reinterpret_cast<__m128i*>(parts.board.data() + 32 * half);
    _mm_storeu_si128(out, _mm_unpacklo_epi8(even, odd));
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi8(even, odd));
  }
#else
  for (int s = 0; s < 64; ++s)
    parts.board[s] = PackedPieceOn(reinterpret_cast<const uint8_t*>(bytes.data()), s);
#endif
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
  if (absl::Status s = Position::FromParts(parts, out); !s.ok())
    return absl::InvalidArgumentError(Cat("packed ", std::string(s.message())));
  return absl::OkStatus();
}

}  // namespace arbiter

// Core chess types: colours, pieces, squares and the 16-bit move.
#pragma once

#include <cstdint>

namespace arbiter {

using Bitboard = uint64_t;

enum Color : uint8_t { kWhite = 0, kBlack = 1 };
constexpr Color operator~(Color c) { return Color(c ^ 1); }

enum PieceType : uint8_t { kPawn, kKnight, kBishop, kRook, kQueen, kKing, kNoPieceType };

// A piece is (colour << 3) | type; kNoPiece marks an empty square.
enum Piece : uint8_t { kNoPiece = 7 };
constexpr Piece MakePiece(Color c, PieceType pt) { return Piece((c << 3) | pt); }
constexpr PieceType TypeOf(Piece p) { return PieceType(p & 7); }
constexpr Color ColorOf(Piece p) { return Color(p >> 3); }

// Squares a1 = 0 ... h8 = 63; kNoSquare = 64.
enum Square : uint8_t { kNoSquare = 64 };
constexpr Square MakeSquare(int file, int rank) { return Square(rank * 8 + file); }
constexpr int FileOf(Square s) { return s & 7; }
constexpr int RankOf(Square s) { return s >> 3; }
constexpr Bitboard SquareBb(Square s) { return Bitboard{1} << s; }
// Rank as seen from `c` (0 = own back rank).
constexpr int RelativeRank(Color c, Square s) { return c == kWhite ? RankOf(s) : 7 - RankOf(s); }
constexpr Square FlipRank(Square s) { return Square(s ^ 56); }
constexpr int kPawnPush[2] = {8, -8};

// A move in 16 bits:
//   bits 0-5   origin square
//   bits 6-11  destination square (castling: the castling rook's square)
//   bits 12-13 promotion piece - kKnight (0 = N, 1 = B, 2 = R, 3 = Q)
//   bits 14-15 kind: 0 normal, 1 promotion, 2 en passant, 3 castling
class Move {
 public:
  enum Kind : uint16_t {
    kNormal = 0,
    kPromotion = 1 << 14,
    kEnPassant = 2 << 14,
    kCastling = 3 << 14
  };

  constexpr Move() = default;
  constexpr explicit Move(uint16_t raw) : raw_(raw) {}
  constexpr Move(Square from, Square to) : raw_(uint16_t(from | (to << 6))) {}
  static constexpr Move Make(Kind kind, Square from, Square to, PieceType promo = kKnight) {
    return Move(uint16_t(kind | ((promo - kKnight) << 12) | (to << 6) | from));
  }
  static constexpr Move None() { return Move(); }

  constexpr Square From() const { return Square(raw_ & 63); }
  constexpr Square To() const { return Square((raw_ >> 6) & 63); }
  constexpr Kind KindOf() const { return Kind(raw_ & (3 << 14)); }
  constexpr PieceType Promotion() const { return PieceType(((raw_ >> 12) & 3) + kKnight); }
  constexpr uint16_t Raw() const { return raw_; }
  constexpr bool IsNone() const { return raw_ == 0; }
  constexpr bool operator==(const Move&) const = default;

 private:
  uint16_t raw_ = 0;
};

// Fixed-capacity move buffer: generation never allocates. 256 exceeds the legal maximum (218).
struct MoveList {
  Move moves[256];
  int size = 0;
  const Move* begin() const { return moves; }
  const Move* end() const { return moves + size; }
  void Push(Move m) { moves[size++] = m; }
  bool Contains(Move m) const {
    for (int i = 0; i < size; ++i)
      if (moves[i] == m) return true;
    return false;
  }
};

// Castling right indices: colour * 2 + side (0 = king side / towards h, 1 = queen side / towards
// a).
enum CastlingSide : uint8_t { kKingSide = 0, kQueenSide = 1 };
constexpr int CastlingIndex(Color c, CastlingSide side) { return c * 2 + side; }
constexpr uint8_t CastlingBit(Color c, CastlingSide side) {
  return uint8_t(1 << CastlingIndex(c, side));
}

}  // namespace arbiter

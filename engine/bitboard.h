// Bitboard helpers and attack tables: PEXT-indexed sliders on BMI2 builds, magics otherwise.
// See https://www.chessprogramming.org/Magic_Bitboards and .../BMI2#PEXTBitboards.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__BMI2__)
#include <immintrin.h>
#define ARBITER_USE_PEXT 1
#else
#define ARBITER_USE_PEXT 0
#endif

#include "engine/types.h"

namespace arbiter {

constexpr Bitboard kFileA = 0x0101010101010101ULL;
constexpr Bitboard kFileH = kFileA << 7;
constexpr Bitboard kRank1 = 0xFFULL;
constexpr Bitboard kRank2 = kRank1 << 8;
constexpr Bitboard kRank3 = kRank1 << 16;
constexpr Bitboard kRank4 = kRank1 << 24;
constexpr Bitboard kRank5 = kRank1 << 32;
constexpr Bitboard kRank6 = kRank1 << 40;
constexpr Bitboard kRank7 = kRank1 << 48;
constexpr Bitboard kRank8 = kRank1 << 56;
constexpr Bitboard kDarkSquares = 0xAA55AA55AA55AA55ULL;

constexpr Bitboard FileBb(int file) { return kFileA << file; }
constexpr Bitboard RankBb(int rank) { return kRank1 << (8 * rank); }

inline int PopCount(Bitboard b) { return std::popcount(b); }
inline Square Lsb(Bitboard b) { return Square(std::countr_zero(b)); }
inline Square PopLsb(Bitboard& b) {
  Square s = Lsb(b);
  b &= b - 1;
  return s;
}
constexpr bool MoreThanOne(Bitboard b) { return b & (b - 1); }

// Shift every bit one step in a direction, dropping what leaves the board.
template <int kDelta>
constexpr Bitboard Shift(Bitboard b) {
  if constexpr (kDelta == 8) return b << 8;
  if constexpr (kDelta == -8) return b >> 8;
  if constexpr (kDelta == 16) return b << 16;
  if constexpr (kDelta == -16) return b >> 16;
  if constexpr (kDelta == 7) return (b & ~kFileA) << 7;
  if constexpr (kDelta == 9) return (b & ~kFileH) << 9;
  if constexpr (kDelta == -7) return (b & ~kFileH) >> 7;
  if constexpr (kDelta == -9) return (b & ~kFileA) >> 9;
  return 0;
}

template <Color c>
constexpr Bitboard PawnAttacksBb(Bitboard pawns) {
  return c == kWhite ? Shift<7>(pawns) | Shift<9>(pawns) : Shift<-7>(pawns) | Shift<-9>(pawns);
}

// One sliding piece's table entry for a square.
struct SliderEntry {
  Bitboard mask;
  Bitboard magic;
  const Bitboard* attacks;
  unsigned shift;

  unsigned Index(Bitboard occupied) const {
#if ARBITER_USE_PEXT
    return unsigned(_pext_u64(occupied, mask));
#else
    return unsigned(((occupied & mask) * magic) >> shift);
#endif
  }
};

// All precomputed tables; filled once, before main, by bitboard.cc (read-only afterwards).
struct AttackTables {
  Bitboard pawn[2][64];
  Bitboard knight[64];
  Bitboard king[64];
  Bitboard between[64][64];    // squares strictly between two aligned squares, else 0
  Bitboard line[64][64];       // the whole line through two aligned squares, else 0
  Bitboard pseudo_bishop[64];  // attacks on an empty board
  Bitboard pseudo_rook[64];
  SliderEntry bishop[64];
  SliderEntry rook[64];
};
extern AttackTables kAttacks;

inline Bitboard PawnAttacks(Color c, Square s) { return kAttacks.pawn[c][s]; }
inline Bitboard KnightAttacks(Square s) { return kAttacks.knight[s]; }
inline Bitboard KingAttacks(Square s) { return kAttacks.king[s]; }
inline Bitboard BishopAttacks(Square s, Bitboard occupied) {
  const SliderEntry& e = kAttacks.bishop[s];
  return e.attacks[e.Index(occupied)];
}
inline Bitboard RookAttacks(Square s, Bitboard occupied) {
  const SliderEntry& e = kAttacks.rook[s];
  return e.attacks[e.Index(occupied)];
}
inline Bitboard QueenAttacks(Square s, Bitboard occupied) {
  return BishopAttacks(s, occupied) | RookAttacks(s, occupied);
}
inline Bitboard PseudoBishopAttacks(Square s) { return kAttacks.pseudo_bishop[s]; }
inline Bitboard PseudoRookAttacks(Square s) { return kAttacks.pseudo_rook[s]; }
inline Bitboard Between(Square a, Square b) { return kAttacks.between[a][b]; }
inline Bitboard Line(Square a, Square b) { return kAttacks.line[a][b]; }
inline Bitboard Attacks(PieceType pt, Square s, Bitboard occupied) {
  switch (pt) {
    case kKnight:
      return KnightAttacks(s);
    case kBishop:
      return BishopAttacks(s, occupied);
    case kRook:
      return RookAttacks(s, occupied);
    case kQueen:
      return QueenAttacks(s, occupied);
    case kKing:
      return KingAttacks(s);
    default:
      return 0;
  }
}

// "pext" or "magic": which slider indexing this build uses.
const char* SliderIndexing();

}  // namespace arbiter

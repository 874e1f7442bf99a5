// Bitboard helpers and attack tables. Slider attacks come from one of two tables built at
// start-up: PEXT-indexed, read by code compiled for BMI2 (x86-64-v3 and up: the v3 and v4 perft
// cores, or a whole --native build), and magic-indexed, read by everything else.
// See https://www.chessprogramming.org/Magic_Bitboards and .../BMI2#PEXTBitboards.
#pragma once

#include <bit>
#include <cstdint>

#if defined(__BMI2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__BMI2__)
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
  if constexpr (kDelta == 1) return (b & ~kFileH) << 1;
  if constexpr (kDelta == -1) return (b & ~kFileA) >> 1;
  return 0;
}

template <Color c>
constexpr Bitboard PawnAttacksBb(Bitboard pawns) {
  return c == kWhite ? Shift<7>(pawns) | Shift<9>(pawns) : Shift<-7>(pawns) | Shift<-9>(pawns);
}

// One sliding piece's table entry for a square.
struct SliderEntry {
  Bitboard mask;
  Bitboard magic;  // 0 in the PEXT tables
  const Bitboard* attacks;
  unsigned shift;

  unsigned MagicIndex(Bitboard occupied) const {
    return unsigned(((occupied & mask) * magic) >> shift);
  }
  // The attacks for `occupied` in an entry of this build level's table (BishopTable, RookTable):
  // PEXT indexing with BMI2, else magic multiplication.
  Bitboard Attacks(Bitboard occupied) const {
#if ARBITER_USE_PEXT
    return attacks[unsigned(_pext_u64(occupied, mask))];
#else
    return attacks[MagicIndex(occupied)];
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
  SliderEntry magic_bishop[64];
  SliderEntry magic_rook[64];
  SliderEntry pext_bishop[64];  // built without BMI2 (the subsets are enumerated in PEXT order)
  SliderEntry pext_rook[64];
};
extern AttackTables kAttacks;

inline Bitboard PawnAttacks(Color c, Square s) { return kAttacks.pawn[c][s]; }
inline Bitboard KnightAttacks(Square s) { return kAttacks.knight[s]; }
inline Bitboard KingAttacks(Square s) { return kAttacks.king[s]; }
// The slider tables this build level reads: the PEXT ones with BMI2, else the magic ones.
inline const SliderEntry* BishopTable() {
  return ARBITER_USE_PEXT ? kAttacks.pext_bishop : kAttacks.magic_bishop;
}
inline const SliderEntry* RookTable() {
  return ARBITER_USE_PEXT ? kAttacks.pext_rook : kAttacks.magic_rook;
}
inline Bitboard BishopAttacks(Square s, Bitboard occupied) {
  return BishopTable()[s].Attacks(occupied);
}
inline Bitboard RookAttacks(Square s, Bitboard occupied) {
  return RookTable()[s].Attacks(occupied);
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

#if defined(__AVX512F__) && defined(__AVX512VPOPCNTDQ__)
#define ARBITER_SIMD_SLIDERS 1
// GCC 12's _mm512_rolv_epi64 starts from _mm512_undefined_epi32(), which -Wuninitialized
// reports once inlined; the value is fully overwritten.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// Sliding attacks in one AVX-512 register: each 64-bit lane fills one of the eight directions
// from a set of sliders (a Kogge-Stone occluded fill with rotates; a mask per lane drops the
// squares a step in that direction cannot reach, i.e. wraps around the board's edge). Lanes:
// N, S, E, W from `straight`, NE, NW, SE, SW from `diagonal`.
inline __m512i SliderRays(Bitboard diagonal, Bitboard straight, Bitboard empty) {
  const __m512i rot = _mm512_set_epi64(55, 57, 7, 9, 63, 1, 56, 8);  // rotate-left per lane
  const __m512i rot2 = _mm512_set_epi64(46, 50, 14, 18, 62, 2, 48, 16);
  const __m512i rot4 = _mm512_set_epi64(28, 36, 28, 36, 60, 4, 32, 32);
  constexpr Bitboard kNotA = ~0x0101010101010101ULL, kNotH = ~0x8080808080808080ULL;
  constexpr Bitboard kNot1 = ~0xFFULL, kNot8 = ~(0xFFULL << 56);
  const __m512i reach = _mm512_set_epi64(kNotH & kNot8, kNotA & kNot8, kNotH & kNot1, kNotA & kNot1,
                                         kNotH, kNotA, kNot8, kNot1);
  __m512i gen =
      _mm512_mask_blend_epi64(0xF0, _mm512_set1_epi64(straight), _mm512_set1_epi64(diagonal));
  __m512i pro = _mm512_and_si512(_mm512_set1_epi64(empty), reach);
  // gen |= pro & rot(gen): ternary logic 0xF8 is a | (b & c).
  gen = _mm512_ternarylogic_epi64(gen, pro, _mm512_rolv_epi64(gen, rot), 0xF8);
  pro = _mm512_and_si512(pro, _mm512_rolv_epi64(pro, rot));
  gen = _mm512_ternarylogic_epi64(gen, pro, _mm512_rolv_epi64(gen, rot2), 0xF8);
  pro = _mm512_and_si512(pro, _mm512_rolv_epi64(pro, rot2));
  gen = _mm512_ternarylogic_epi64(gen, pro, _mm512_rolv_epi64(gen, rot4), 0xF8);
  return _mm512_and_si512(_mm512_rolv_epi64(gen, rot), reach);
}

// Knight jumps in one AVX-512 register, one lane per jump direction (+17, +15, +10, +6, -6,
// -10, -15, -17), each masked to the squares that jump can reach without wrapping.
inline __m512i KnightJumps(Bitboard knights) {
  const __m512i rot = _mm512_set_epi64(47, 49, 54, 58, 6, 10, 15, 17);
  constexpr Bitboard kA = 0x0101010101010101ULL, kB = kA << 1, kG = kA << 6, kH = kA << 7;
  constexpr Bitboard k1 = 0xFFULL, k2 = k1 << 8, k7 = k1 << 48, k8 = k1 << 56;
  const __m512i reach =
      _mm512_set_epi64(~(kH | k7 | k8), ~(kA | k7 | k8), ~(kG | kH | k8), ~(kA | kB | k8),
                       ~(kG | kH | k1), ~(kA | kB | k1), ~(kH | k1 | k2), ~(kA | k1 | k2));
  return _mm512_and_si512(_mm512_rolv_epi64(_mm512_set1_epi64(knights), rot), reach);
}

// Number of moves of the sliders to `target` squares. Rays of different sliders in the same
// direction never overlap (each stops at the first occupied square), so a popcount per lane
// sums the moves piece by piece, as a lookup per slider would.
// Knights' jumps to distinct squares in one direction are distinct moves too.
inline int PieceMoveCount(Bitboard knights, Bitboard diagonal, Bitboard straight, Bitboard empty,
                          Bitboard target) {
  const __m512i t = _mm512_set1_epi64(target);
  const __m512i counts = _mm512_add_epi64(
      _mm512_popcnt_epi64(_mm512_and_si512(KnightJumps(knights), t)),
      _mm512_popcnt_epi64(_mm512_and_si512(SliderRays(diagonal, straight, empty), t)));
  // Each lane's count is below 256: narrow the lanes to bytes and sum them with one SAD.
  const __m128i bytes = _mm512_cvtepi64_epi8(counts);
  return int(_mm_cvtsi128_si64(_mm_sad_epu8(bytes, _mm_setzero_si128())));
}

// Every square the knights and sliders attack.
inline Bitboard PieceAttacks(Bitboard knights, Bitboard diagonal, Bitboard straight,
                             Bitboard empty) {
  return Bitboard(_mm512_reduce_or_epi64(
      _mm512_or_si512(KnightJumps(knights), SliderRays(diagonal, straight, empty))));
}
#pragma GCC diagnostic pop
#else
#define ARBITER_SIMD_SLIDERS 0
#endif

// "pext" or "magic": which slider indexing the code outside the perft cores uses (the perft
// counter's own is engine/perft_path.h's).
const char* SliderIndexing();

}  // namespace arbiter

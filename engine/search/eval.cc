#include "engine/search/eval.h"

#include <algorithm>
#include <cstdlib>

namespace arbiter::search {
namespace {

// Piece-square tables, written from White's side with rank 8 on the first row (so a white piece
// on square s reads entry s ^ 56, a black piece entry s). Middlegame only where the endgame is
// derived from centralisation below.
// clang-format off
constexpr int kPawnMg[64] = {
    0,   0,   0,   0,   0,   0,   0,   0,
   55,  65,  65,  70,  70,  65,  65,  55,
   12,  18,  26,  32,  32,  26,  18,  12,
    0,   4,  10,  24,  24,  10,   4,   0,
   -4,   0,   6,  18,  18,   4,   0,  -4,
   -4,  -2,   3,   6,   6,  -4,  -2,  -4,
   -6,   2,   0, -14, -14,  10,  10,  -6,
    0,   0,   0,   0,   0,   0,   0,   0};
constexpr int kPawnEg[64] = {
    0,   0,   0,   0,   0,   0,   0,   0,
   45,  45,  42,  40,  40,  42,  45,  45,
   26,  26,  22,  20,  20,  22,  26,  26,
   12,  12,  10,   8,   8,  10,  12,  12,
    4,   4,   3,   2,   2,   3,   4,   4,
    0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0,
    0,   0,   0,   0,   0,   0,   0,   0};
constexpr int kKnightMg[64] = {
  -60, -30, -20, -15, -15, -20, -30, -60,
  -25, -10,   5,  10,  10,   5, -10, -25,
  -15,   5,  15,  22,  22,  15,   5, -15,
  -10,  10,  20,  25,  25,  20,  10, -10,
  -10,   5,  15,  20,  20,  15,   5, -10,
  -20,   0,  10,  12,  12,  10,   0, -20,
  -25, -15,  -5,   2,   2,  -5, -15, -25,
  -50, -22, -20, -15, -15, -20, -22, -50};
constexpr int kBishopMg[64] = {
  -15,  -5, -10, -10, -10, -10,  -5, -15,
   -5,   5,   0,   0,   0,   0,   5,  -5,
   -5,   5,   8,  10,  10,   8,   5,  -5,
   -5,  10,  10,  15,  15,  10,  10,  -5,
    0,   8,  12,  15,  15,  12,   8,   0,
    0,  10,  10,  10,  10,  10,  10,   0,
    0,  15,   6,   5,   5,   6,  15,   0,
  -15,  -5, -12, -10, -10, -12,  -5, -15};
constexpr int kRookMg[64] = {
   10,  10,  12,  15,  15,  12,  10,  10,
   20,  25,  25,  25,  25,  25,  25,  20,
    0,   5,   5,   5,   5,   5,   5,   0,
   -5,   0,   0,   0,   0,   0,   0,  -5,
   -8,   0,   0,   0,   0,   0,   0,  -8,
  -10,   0,   0,   0,   0,   0,   0, -10,
  -15,  -5,   0,   0,   0,   0,  -5, -15,
   -6,  -2,   4,  10,  10,   6,  -2,  -6};
constexpr int kQueenMg[64] = {
  -20, -10, -10,  -5,  -5, -10, -10, -20,
  -10,  -5,   0,   0,   0,   0,  -5, -10,
  -10,   0,   5,   5,   5,   5,   0, -10,
   -5,   0,   5,   5,   5,   5,   0,  -5,
   -5,   0,   5,   5,   5,   5,   0,  -5,
  -10,   2,   5,   5,   5,   5,   0, -10,
  -10,   0,   2,   2,   0,   0,   0, -10,
  -20, -10,  -8,   0,  -4, -10, -10, -20};
constexpr int kKingMg[64] = {
  -50, -55, -55, -65, -65, -55, -55, -50,
  -45, -50, -50, -60, -60, -50, -50, -45,
  -40, -45, -50, -60, -60, -50, -45, -40,
  -35, -40, -45, -55, -55, -45, -40, -35,
  -30, -35, -40, -50, -50, -40, -35, -30,
  -20, -25, -30, -40, -40, -30, -25, -20,
    0,   0, -12, -25, -25, -15,   5,   5,
   12,  28,   8, -12,   0, -12,  30,  18};
// clang-format on

// 0 on the edge, 3 on the four centre squares.
constexpr int Centralisation(int sq) {
  const int f = sq & 7, r = sq >> 3;
  const int df = f < 4 ? f : 7 - f, dr = r < 4 ? r : 7 - r;
  return df < dr ? df : dr;
}

struct Tables {
  int mg[6][64];
  int eg[6][64];
};

constexpr Tables BuildTables() {
  Tables t{};
  for (int s = 0; s < 64; ++s) {
    const int c = Centralisation(s);
    t.mg[kPawn][s] = kPawnMg[s];
    t.eg[kPawn][s] = kPawnEg[s];
    t.mg[kKnight][s] = kKnightMg[s];
    t.eg[kKnight][s] = 12 * c - 18;
    t.mg[kBishop][s] = kBishopMg[s];
    t.eg[kBishop][s] = 6 * c - 9;
    t.mg[kRook][s] = kRookMg[s];
    t.eg[kRook][s] = 0;
    t.mg[kQueen][s] = kQueenMg[s];
    t.eg[kQueen][s] = 8 * c - 12;
    t.mg[kKing][s] = kKingMg[s];
    t.eg[kKing][s] = 16 * c - 30;
  }
  return t;
}
constexpr Tables kPst = BuildTables();

constexpr int kPhaseWeight[6] = {0, 1, 1, 2, 4, 0};

// Mobility per reachable square above a typical count, per piece type (mg, eg).
constexpr int kMobilityBase[6] = {0, 4, 6, 6, 12, 0};
constexpr int kMobilityMg[6] = {0, 4, 5, 2, 1, 0};
constexpr int kMobilityEg[6] = {0, 4, 5, 4, 2, 0};

// King attack units per attacked king-zone square, and the share counted by number of attackers.
constexpr int kAttackUnits[6] = {0, 20, 20, 40, 80, 0};
constexpr int kAttackerScale[8] = {0, 0, 50, 75, 88, 94, 97, 99};

constexpr int kPassedMg[8] = {0, 5, 8, 15, 30, 50, 80, 0};
constexpr int kPassedEg[8] = {0, 10, 15, 30, 55, 90, 140, 0};

struct Score {
  int mg = 0, eg = 0;
  void Add(int m, int e) {
    mg += m;
    eg += e;
  }
};

int Distance(Square a, Square b) {
  return std::max(std::abs(FileOf(a) - FileOf(b)), std::abs(RankOf(a) - RankOf(b)));
}

// Squares in front of a pawn of colour c on any of the files of `files`, strictly ahead of rank.
Bitboard ForwardRanks(Color c, Square s) {
  const int r = RankOf(s);
  if (c == kWhite) return r == 7 ? 0 : ~Bitboard{0} << (8 * (r + 1));
  return r == 0 ? 0 : ~Bitboard{0} >> (8 * (8 - r));
}

Bitboard AdjacentFiles(int file) {
  return (file > 0 ? FileBb(file - 1) : 0) | (file < 7 ? FileBb(file + 1) : 0);
}

template <Color Us>
Score EvaluateSide(const Position& pos, const EvalParams& p) {
  constexpr Color Them = ~Us;
  Score s;
  const Bitboard occ = pos.Pieces();
  const Bitboard our_pawns = pos.Pieces(Us, kPawn), their_pawns = pos.Pieces(Them, kPawn);
  const Bitboard their_pawn_attacks = PawnAttacksBb<Them>(their_pawns);
  const Bitboard mobility_area = ~pos.Pieces(Us) & ~their_pawn_attacks;
  const Square their_king = pos.KingSquare(Them), our_king = pos.KingSquare(Us);
  const Bitboard king_zone =
      KingAttacks(their_king) | SquareBb(their_king) |
      (Them == kWhite ? KingAttacks(their_king) << 8 : KingAttacks(their_king) >> 8);

  // Material, piece-square tables, mobility and attacks on the enemy king.
  int attack_units = 0, attackers = 0;
  for (int pt = kPawn; pt <= kKing; ++pt) {
    for (Bitboard b = pos.Pieces(Us, PieceType(pt)); b;) {
      const Square sq = PopLsb(b);
      const int idx = Us == kWhite ? sq ^ 56 : sq;
      s.Add(p.piece_mg[pt] + kPst.mg[pt][idx], p.piece_eg[pt] + kPst.eg[pt][idx]);
      if (pt == kPawn || pt == kKing) continue;
      // Sliders see through their own queen (batteries).
      Bitboard x_occ = occ;
      if (pt == kBishop || pt == kRook) x_occ ^= pos.Pieces(Us, kQueen);
      const Bitboard att = Attacks(PieceType(pt), sq, x_occ);
      const int mob = PopCount(att & mobility_area) - kMobilityBase[pt];
      s.Add(kMobilityMg[pt] * mob * p.mobility_percent / 100,
            kMobilityEg[pt] * mob * p.mobility_percent / 100);
      if (const Bitboard zone_hits = att & king_zone) {
        ++attackers;
        attack_units += kAttackUnits[pt] * PopCount(zone_hits);
      }
      if (pt == kRook) {
        const Bitboard file = FileBb(FileOf(sq));
        if (!(file & our_pawns)) {
          if (!(file & their_pawns))
            s.Add(25, 10);
          else
            s.Add(12, 6);
        }
      }
    }
  }
  if (PopCount(pos.Pieces(Us, kBishop)) >= 2) s.Add(30, 50);
  const int attack = attack_units * kAttackerScale[std::min(attackers, 7)] / 100;
  s.Add(attack * p.king_safety_percent / 100, 0);

  // Pawn structure: doubled, isolated, connected and passed pawns.
  Score pawns;
  for (Bitboard b = our_pawns; b;) {
    const Square sq = PopLsb(b);
    const int file = FileOf(sq), rr = RelativeRank(Us, sq);
    const Bitboard ahead = ForwardRanks(Us, sq);
    if (ahead & FileBb(file) & our_pawns) pawns.Add(-12, -20);
    if (!(AdjacentFiles(file) & our_pawns)) pawns.Add(-10, -15);
    const Bitboard phalanx_or_support = (AdjacentFiles(file) & RankBb(RankOf(sq)) & our_pawns) |
                                        (PawnAttacks(Them, sq) & our_pawns);
    if (phalanx_or_support) pawns.Add(4 + rr * 2, 4 + rr * 2);
    const Bitboard blockers_zone = ahead & (FileBb(file) | AdjacentFiles(file));
    if (!(blockers_zone & their_pawns) && !(ahead & FileBb(file) & our_pawns)) {
      const Square front = Square(sq + kPawnPush[Us]);
      int eg = kPassedEg[rr];
      // Kings near the square in front of a passer matter in the endgame.
      eg += (Distance(their_king, front) * 5 - Distance(our_king, front) * 2) * rr / 2;
      if (pos.PieceOn(front) != kNoPiece) eg -= kPassedEg[rr] / 3;
      pawns.Add(kPassedMg[rr], eg);
    }
  }
  s.Add(pawns.mg * p.pawn_structure_percent / 100, pawns.eg * p.pawn_structure_percent / 100);

  // Pawn shield and open files in front of our own king (middlegame only).
  int shield = 0;
  const int kf = std::clamp(FileOf(our_king), 1, 6);
  for (int f = kf - 1; f <= kf + 1; ++f) {
    const Bitboard file_pawns = FileBb(f) & our_pawns;
    const Bitboard in_front = file_pawns & ForwardRanks(Us, our_king);
    if (!in_front) {
      shield -= (FileBb(f) & their_pawns) ? 12 : 25;
      continue;
    }
    const Square nearest = Us == kWhite ? Lsb(in_front) : Square(63 - std::countl_zero(in_front));
    const int dist = std::abs(RankOf(nearest) - RankOf(our_king));
    shield += dist == 1 ? 12 : dist == 2 ? 5 : -5;
  }
  s.Add(shield * p.king_safety_percent / 100, 0);
  return s;
}

}  // namespace

int GamePhase(const Position& pos) {
  int phase = 0;
  for (int pt = kKnight; pt <= kQueen; ++pt)
    phase += kPhaseWeight[pt] * PopCount(pos.Pieces(PieceType(pt)));
  return std::min(phase, kMaxPhase);
}

int Evaluate(const Position& pos, const EvalParams& params) {
  const Score w = EvaluateSide<kWhite>(pos, params);
  const Score b = EvaluateSide<kBlack>(pos, params);
  const int mg = w.mg - b.mg, eg = w.eg - b.eg;
  const int phase = GamePhase(pos);
  int eg_scaled = eg;
  // Without pawns, the side ahead needs more than a minor piece's advantage to win.
  const Color strong = eg > 0 ? kWhite : kBlack;
  if (!pos.Pieces(strong, kPawn)) {
    auto non_pawn = [&](Color c) {
      return PopCount(pos.Pieces(c, kKnight) | pos.Pieces(c, kBishop)) * 3 +
             PopCount(pos.Pieces(c, kRook)) * 5 + PopCount(pos.Pieces(c, kQueen)) * 9;
    };
    if (non_pawn(strong) - non_pawn(~strong) <= 3) eg_scaled = eg / 4;
  }
  const int score = (mg * phase + eg_scaled * (kMaxPhase - phase)) / kMaxPhase;
  return (pos.SideToMove() == kWhite ? score : -score) + params.tempo;
}

}  // namespace arbiter::search

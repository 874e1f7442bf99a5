// The perft counting core: everything a count does below the root, compiled once per x86-64 level
// (CMake builds this file three times, for x86-64-v2, -v3 and -v4, and renames every symbol of
// each copy but its PerftPath: see engine/CMakeLists.txt and scripts/perft-core-object.sh), so that
// one binary carries magic sliders, PEXT sliders and the AVX-512 counter and engine/perft_path.cc
// picks the best the CPU runs. Builds for one CPU level (--native, --march, sanitizers) compile it
// once. Keep it free of anything not needed in the inner loop.
#include "engine/perft_core.h"

#include "engine/movegen.h"
#include "engine/perft_table.h"

namespace arbiter {
namespace {

// The bitboards of a position one ply below a full Position: enough to count its legal moves.
// Built by copying a snapshot of the parent's bitboards (one per colour and piece type, so that
// the counter reads each set with one load) and applying one move: no mailbox, no undo, which
// is cheaper than DoMove/UndoMove for the last interior ply.
class LeafBoard {
 public:
  // The parent's own bitboards, taken once and copied for each of its moves.
  explicit LeafBoard(const Position& parent) : parent_(parent) {
    for (Color c : {kWhite, kBlack}) {
      for (int pt = 0; pt < 6; ++pt) bb_[c][pt] = parent.Pieces(c, PieceType(pt));
      occ_[c] = parent.Pieces(c);
    }
    castling_ = parent.CastlingRights();
  }
  template <Color Us>
  LeafBoard After(Move m) const {
    LeafBoard b(*this);
    b.Apply<Us>(m);
    return b;
  }

 private:
  template <Color Us>
  void Apply(Move m) {
    constexpr Color Them = ~Us;
    const Position& parent = parent_;
    const Square from = m.From(), to = m.To();
    const PieceType pt = TypeOf(parent.PieceOn(from));
    const Bitboard from_to = SquareBb(from) | SquareBb(to);
    switch (m.KindOf()) {
      case Move::kNormal: {
        const Piece captured = parent.PieceOn(to);
        if (captured != kNoPiece) {
          bb_[Them][TypeOf(captured)] ^= SquareBb(to);
          occ_[Them] ^= SquareBb(to);
        }
        bb_[Us][pt] ^= from_to;
        occ_[Us] ^= from_to;
        if (pt == kPawn && (from ^ to) == 16) {
          const Square ep = Square((from + to) / 2);
          if (PawnAttacks(Us, ep) & bb_[Them][kPawn]) ep_ = ep;
        }
        break;
      }
      case Move::kPromotion: {
        const Piece captured = parent.PieceOn(to);
        if (captured != kNoPiece) {
          bb_[Them][TypeOf(captured)] ^= SquareBb(to);
          occ_[Them] ^= SquareBb(to);
        }
        bb_[Us][kPawn] ^= SquareBb(from);
        bb_[Us][m.Promotion()] ^= SquareBb(to);
        occ_[Us] ^= from_to;
        break;
      }
      case Move::kEnPassant: {
        const Bitboard cap = SquareBb(Square(to - kPawnPush[Us]));
        bb_[Us][kPawn] ^= from_to;
        bb_[Them][kPawn] ^= cap;
        occ_[Us] ^= from_to;
        occ_[Them] ^= cap;
        break;
      }
      case Move::kCastling: {
        // Remove both, then place both: in Chess960 a piece may start on its own target square.
        const bool king_side = to > from;
        const Bitboard king_to = SquareBb(Position::CastlingKingTo(Us, king_side));
        const Bitboard rook_to = SquareBb(Position::CastlingRookTo(Us, king_side));
        bb_[Us][kKing] = king_to;
        bb_[Us][kRook] = (bb_[Us][kRook] & ~SquareBb(to)) | rook_to;
        occ_[Us] = (occ_[Us] & ~from_to) | king_to | rook_to;
        break;
      }
    }
    castling_ &= ~parent.CastlingLossMask(from, to);
  }

 public:
  Bitboard Pieces() const { return occ_[0] | occ_[1]; }
  Bitboard Pieces(Color c) const { return occ_[c]; }
  Bitboard Pieces(Color c, PieceType pt) const { return bb_[c][pt]; }
  Bitboard Pieces(Color c, PieceType a, PieceType b) const { return bb_[c][a] | bb_[c][b]; }
  Square KingSquare(Color c) const { return Lsb(bb_[c][kKing]); }
  Square EpSquare() const { return ep_; }
  bool CanCastle(int index) const { return castling_ & (1 << index); }
  Square CastlingRook(int index) const { return parent_.CastlingRook(index); }
  Bitboard CastlingPath(int index) const { return parent_.CastlingPath(index); }
  Bitboard CastlingKingPath(int index) const { return parent_.CastlingKingPath(index); }
  Bitboard AttackersTo(Square s, Color by, Bitboard occupied) const {
    return AttackersOf(*this, s, by, occupied);
  }

 private:
  Bitboard bb_[2][6];
  Bitboard occ_[2];
  const Position& parent_;
  Square ep_ = kNoSquare;
  uint8_t castling_;
};

using movegen_detail::Generate;
using movegen_detail::kAll;

// The squares the diagonal and the straight sliders attack through `occupied`, apart.
inline void SliderSight(Bitboard diagonal, Bitboard straight, Bitboard occupied, Bitboard& diag_out,
                        Bitboard& straight_out) {
#if ARBITER_SIMD_SLIDERS
  // Lanes 0-3 hold the straight rays, 4-7 the diagonal ones (SliderRays).
  alignas(64) Bitboard lanes[8];
  _mm512_store_si512(lanes, SliderRays(diagonal, straight, ~occupied));
  straight_out = lanes[0] | lanes[1] | lanes[2] | lanes[3];
  diag_out = lanes[4] | lanes[5] | lanes[6] | lanes[7];
#else
  diag_out = straight_out = 0;
  for (Bitboard b = diagonal; b;) diag_out |= BishopAttacks(PopLsb(b), occupied);
  for (Bitboard b = straight; b;) straight_out |= RookAttacks(PopLsb(b), occupied);
#endif
}

// The last interior ply's moves after which the opponent's move count is the one it has in the
// parent position itself (as if the side to move passed): a quiet move far from everything the
// opponent's moves depend on. Then the parent's count stands for the child's and no leaf board is
// built. The test is conservative: a move it does not pass is counted in full.
//
// Us moves, Them's moves are counted. Them's count in the child depends on: Them's pieces (a quiet
// move captures nothing); the occupancy, which changes on the move's two squares only; and Us's
// attacks, checks and pins. So a move passes when neither square
//  - lies on a line through Them's king that holds a slider of Us of that line's kind (pins and
//    discovered checks), nor on a castling path of Them (which must be empty);
//  - is a square Them's pawns push to (one or two steps) or capture on;
//  - is seen by a slider of Them (its rays would grow or shrink);
//  - is seen both from the squares Them's king may step or castle to (the zone) and by a slider of
//    Us of the same kind (Us's attacks on the zone would change), with Them's king and castling
//    rooks lifted off the board, as the counter lifts them;
// and the moved piece attacks no square of the zone nor the king before or after the move, does
// not land on a line through the king of its own kind (a new pin or check), is not a king, and a
// pawn's double step gives Them no en passant capture.
template <Color Us>
class QuietMoves {
 public:
  static constexpr Color Them = ~Us;

  explicit QuietMoves(const Position& pos) : pos_(pos) {
    const Bitboard occ = pos.Pieces();
    ksq_ = pos.KingSquare(Them);
    const Bitboard bq = pos.Pieces(Us, kBishop, kQueen), rq = pos.Pieces(Us, kRook, kQueen);
    Bitboard zone = KingAttacks(ksq_), lifted = occ ^ SquareBb(ksq_);
    for (CastlingSide side : {kKingSide, kQueenSide}) {
      const int idx = CastlingIndex(Them, side);
      if (!pos.CanCastle(idx)) continue;
      zone |= pos.CastlingKingPath(idx);
      forbid_ |= pos.CastlingPath(idx);
      lifted &= ~SquareBb(pos.CastlingRook(idx));
    }
    zone_ = zone;
    for (Bitboard s = (PseudoRookAttacks(ksq_) & rq) | (PseudoBishopAttacks(ksq_) & bq); s;)
      forbid_ |= Line(ksq_, PopLsb(s));
    const Bitboard their_pawns = pos.Pieces(Them, kPawn);
    constexpr Bitboard kStart = Them == kWhite ? kRank2 : kRank7;
    const Bitboard push = Them == kWhite ? their_pawns << 8 : their_pawns >> 8;
    const Bitboard push2 =
        Them == kWhite ? (push & (kStart << 8)) << 8 : (push & (kStart >> 8)) >> 8;
    forbid_ |= push | push2 | PawnAttacksBb<Them>(their_pawns);
    Bitboard d, st;
    SliderSight(pos.Pieces(Them, kBishop, kQueen), pos.Pieces(Them, kRook, kQueen), occ, d, st);
    forbid_ |= d | st;
    Bitboard zone_d, zone_st, ours_d, ours_st;
    SliderSight(zone, zone, lifted, zone_d, zone_st);
    SliderSight(bq, rq, lifted, ours_d, ours_st);
    forbid_ |= (zone_d & ours_d) | (zone_st & ours_st);
    const Bitboard target = zone | SquareBb(ksq_);
    // The squares from which a knight or a pawn of Us attacks the zone or the king.
    knight_reach_ = 0;
    for (Bitboard t = target; t;) knight_reach_ |= KnightAttacks(PopLsb(t));
    pawn_reach_ = PawnAttacksBb<Them>(target);
    lifted_ = lifted;
  }

  bool Passes(Move m) const {
    if (m.KindOf() != Move::kNormal) return false;
    const Square from = m.From(), to = m.To();
    if (pos_.PieceOn(to) != kNoPiece) return false;
    const Bitboard both = SquareBb(from) | SquareBb(to);
    if (both & forbid_) return false;
    const Bitboard target = zone_ | SquareBb(ksq_);
    switch (TypeOf(pos_.PieceOn(from))) {
      case kPawn:
        if (both & pawn_reach_) return false;
        if ((from ^ to) == 16 &&
            (PawnAttacks(Us, Square((from + to) / 2)) & pos_.Pieces(Them, kPawn)))
          return false;
        return true;
      case kKnight:
        return !(both & knight_reach_);
      case kBishop:
        return !(PseudoBishopAttacks(ksq_) & SquareBb(to)) &&
               !(BishopAttacks(from, lifted_) & target) &&
               !(BishopAttacks(to, lifted_ ^ both) & target);
      case kRook:
        return !(PseudoRookAttacks(ksq_) & SquareBb(to)) &&
               !(RookAttacks(from, lifted_) & target) &&
               !(RookAttacks(to, lifted_ ^ both) & target);
      case kQueen:
        return !((PseudoBishopAttacks(ksq_) | PseudoRookAttacks(ksq_)) & SquareBb(to)) &&
               !(QueenAttacks(from, lifted_) & target) &&
               !(QueenAttacks(to, lifted_ ^ both) & target);
      default:
        return false;
    }
  }

 private:
  const Position& pos_;
  Square ksq_;
  Bitboard zone_ = 0, forbid_ = 0, knight_reach_ = 0, pawn_reach_ = 0, lifted_ = 0;
};

// Room for n values of T left uninitialised: Move and Key128 zero themselves, which cost every
// interior node a 512-byte `rep stos` (1.5 % of startpos perft(7)) for slots it then overwrites.
template <class T, int n>
union Uninitialised {
  Uninitialised() {}
  T at[n];
};

template <Color Us, bool kHash>
uint64_t PerftRecurse(Position& pos, int depth, PerftTable* table) {
  constexpr Color Them = ~Us;
  Uninitialised<Move, 256> move_buffer;
  Move* const moves = move_buffer.at;
  const int n = Generate<Us, kAll>(pos, moves);
  UndoInfo undo;
  uint64_t nodes = 0;
  if (depth == 2) {
    const LeafBoard parent(pos);
    const QuietMoves<Us> quiet(pos);
    // Them's count in the parent itself (no en passant: Us moved last).
    const uint64_t unchanged =
        uint64_t(movegen_detail::Generate<Them, movegen_detail::kCount>(parent, nullptr));
    for (int i = 0; i < n; ++i) {
      if (quiet.Passes(moves[i])) {
        nodes += unchanged;
        continue;
      }
      const LeafBoard child = parent.After<Us>(moves[i]);
      nodes += movegen_detail::Generate<Them, movegen_detail::kCount>(child, nullptr);
    }
    return nodes;
  }
  if constexpr (kHash) {
    // First pass: the children's keys, with their table lines prefetched, so that the probes
    // of the second pass overlap their memory latency instead of paying it one by one.
    Uninitialised<Key128, 256> key_buffer;
    Key128* const keys = key_buffer.at;
    for (int i = 0; i < n; ++i) {
      keys[i] = pos.KeyAfter(moves[i]);
      table->Prefetch(keys[i]);
    }
    for (int i = 0; i < n; ++i) {
      uint64_t cached;
      if (table->Probe(keys[i], depth - 1, cached)) {
        nodes += cached;
        continue;
      }
      pos.DoMove<true>(moves[i], undo);
      uint64_t c = PerftRecurse<Them, kHash>(pos, depth - 1, table);
      pos.UndoMove<true>(moves[i], undo);
      table->Store(keys[i], depth - 1, c);
      nodes += c;
    }
  } else {
    for (int i = 0; i < n; ++i) {
      pos.DoMove<false>(moves[i], undo);
      nodes += PerftRecurse<Them, kHash>(pos, depth - 1, table);
      pos.UndoMove<false>(moves[i], undo);
    }
  }
  return nodes;
}

// Counts the subtree below `pos` (depth >= 1), using the table when there is one.
// `own_entry` false: pos's own count is neither looked up nor stored (only its subtree's are).
uint64_t CountSubtree(Position& pos, int depth, PerftTable* table, bool own_entry) {
  if (depth == 0) return 1;
  if (depth == 1) return CountLegal(pos);
  uint64_t cached;
  if (table && own_entry && table->Probe(pos.Key(), depth, cached)) return cached;
  uint64_t c;
  if (pos.SideToMove() == kWhite)
    c = table ? PerftRecurse<kWhite, true>(pos, depth, table)
              : PerftRecurse<kWhite, false>(pos, depth, table);
  else
    c = table ? PerftRecurse<kBlack, true>(pos, depth, table)
              : PerftRecurse<kBlack, false>(pos, depth, table);
  if (table && own_entry) table->Store(pos.Key(), depth, c);
  return c;
}

}  // namespace

#define ARBITER_CORE_CAT2(a, b) a##b
#define ARBITER_CORE_CAT(a, b) ARBITER_CORE_CAT2(a, b)
#ifndef ARBITER_PERFT_CORE
#define ARBITER_PERFT_CORE Single
#endif

extern const PerftPath ARBITER_CORE_CAT(kPerftPath, ARBITER_PERFT_CORE);
const PerftPath ARBITER_CORE_CAT(kPerftPath, ARBITER_PERFT_CORE) = {
    .name = ARBITER_SIMD_SLIDERS ? "v4"
            : ARBITER_USE_PEXT   ? "v3"
                                 : "v2",
    .pext = ARBITER_USE_PEXT != 0,
    .avx512 = ARBITER_SIMD_SLIDERS != 0,
    .count = &CountSubtree,
};

}  // namespace arbiter

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

// Every square a knight on one of `b`'s squares attacks.
constexpr Bitboard KnightSpread(Bitboard b) {
  const Bitboard one = ((b >> 1) & ~kFileH) | ((b << 1) & ~kFileA);
  const Bitboard two = ((b >> 2) & ~(kFileH | kFileH >> 1)) | ((b << 2) & ~(kFileA | kFileA << 1));
  return (one << 16) | (one >> 16) | (two << 8) | (two >> 8);
}

// `b` and every square a king on one of its squares attacks.
constexpr Bitboard KingSpread(Bitboard b) {
  const Bitboard row = b | Shift<1>(b) | Shift<-1>(b);
  return row | Shift<8>(row) | Shift<-8>(row);
}
static_assert(KnightSpread(1) == ((Bitboard{1} << 17) | (Bitboard{1} << 10)));  // a1: b3, c2
static_assert(KnightSpread(Bitboard{1} << 63) == ((Bitboard{1} << 46) | (Bitboard{1} << 53)));
static_assert(KingSpread(1) == 0x303);                            // a1: a1, b1, a2, b2
static_assert(KingSpread(Bitboard{1} << 63) == 0xC0C0ULL << 48);  // h8: g7, h7, g8, h8

// Counts the leaves below a node of the last interior ply (depth 2). After most moves there, the
// opponent's move count is the one it has in the node itself (as if the side to move passed),
// give or take its sliders' and pawns' moves through the move's two squares: a quiet move far
// from everything else the opponent's moves depend on. Then the node's count, corrected, stands
// for the child's and no leaf board is built; and when neither square needs the correction, the
// moves are counted in bulk, from each piece's set of targets, without listing them. The test is
// conservative: a move it does not pass is counted in full.
//
// Us moves, Them's moves are counted. Them's count in the child depends on: Them's pieces (a quiet
// move captures nothing); the occupancy, which changes on the move's two squares only; and Us's
// attacks, checks and pins. So a move passes when neither square
//  - lies between Them's king and a slider of Us on a line of that slider's kind (pins and
//    discovered checks), nor on a castling path of Them (which must be empty);
//  - is seen both from the squares Them's king may step or castle to (the zone: not those of
//    Them's own pieces, which a quiet move never frees) and by a slider of Us of the same kind
//    (Us's attacks on the zone would change), with Them's king and castling rooks lifted off the
//    board, as the counter lifts them;
// and the moved piece attacks no square of the zone nor the king before or after the move, does
// not stand or land where a slider of its kind sees the king through at most one piece (a pin or
// check, made or ended), and a pawn's double step gives Them no en passant capture. The sliders of
// Them that see either square (their rays grow through the square left and stop at the square
// taken) are counted again, before and after, and so are Them's pawns when a square is one they
// push to or capture on: those differences are the correction (pins of Them stay as they were, and
// Them is not in check).
//
// It is the sink of movegen_detail::GenerateInto: Us's legal moves arrive as target sets.
template <Color Us>
class LastInteriorPly {
 public:
  static constexpr Color Them = ~Us;

  explicit LastInteriorPly(const Position& pos) : pos_(pos), parent_(pos) {
    const Bitboard occ = pos.Pieces();
    ksq_ = pos.KingSquare(Them);
    const Bitboard bq = pos.Pieces(Us, kBishop, kQueen), rq = pos.Pieces(Us, kRook, kQueen);
    // The squares Them's king may step to: not its own pieces' (a quiet move of Us never frees
    // them, so attacks on them change nothing).
    Bitboard zone = KingAttacks(ksq_) & ~pos.Pieces(Them), lifted = occ ^ SquareBb(ksq_);
    Bitboard forbid = 0;
    for (CastlingSide side : {kKingSide, kQueenSide}) {
      const int idx = CastlingIndex(Them, side);
      if (!pos.CanCastle(idx)) continue;
      zone |= pos.CastlingKingPath(idx);
      forbid |= pos.CastlingPath(idx);
      lifted &= ~SquareBb(pos.CastlingRook(idx));
    }
    // A slider of Us on a line through Them's king: a piece arriving or leaving between them
    // changes Them's pins and checks, and so does the slider leaving (squares beyond either end
    // change neither).
    for (Bitboard b = (PseudoRookAttacks(ksq_) & rq) | (PseudoBishopAttacks(ksq_) & bq); b;) {
      const Square s = PopLsb(b);
      forbid |= Between(ksq_, s) | SquareBb(s);
    }
    // Seen from the zone or the king (where a slider of Us would attack them from) and by a
    // slider of Us of the same kind.
    const Bitboard target = zone | SquareBb(ksq_);
    Bitboard from_target_d, from_target_st, ours_d, ours_st;
    SliderSight(target, target, lifted, from_target_d, from_target_st);
    SliderSight(bq, rq, lifted, ours_d, ours_st);
    forbid |= (from_target_d & ours_d) | (from_target_st & ours_st);
    // Where the moved piece must be neither before nor after, by its type: squares from which it
    // would attack the zone or the king, lines through the king of a slider's kind, and for a
    // pawn the squares next to Them's pawns on its double step's rank (en passant).
    const Bitboard their_pawns = pos.Pieces(Them, kPawn);
    constexpr Bitboard kDoubleStepRank = Us == kWhite ? kRank4 : kRank5;
    const Bitboard beside = Shift<1>(their_pawns) | Shift<-1>(their_pawns);
    // A slider of Us pins or checks from where it sees Them's king through at most one piece (a
    // quiet move never takes a piece off a line, so the ones behind two stay harmless; the
    // mover's own square between them is its from-square, forbidden here then).
    const Bitboard bishop = from_target_d | BishopAttacks(ksq_, occ & ~BishopAttacks(ksq_, occ));
    const Bitboard rook = from_target_st | RookAttacks(ksq_, occ & ~RookAttacks(ksq_, occ));
    not_by_type_[kPawn] = forbid | PawnAttacksBb<Them>(target) | (beside & kDoubleStepRank);
    not_by_type_[kKnight] = forbid | KnightSpread(target);
    not_by_type_[kBishop] = forbid | bishop;
    not_by_type_[kRook] = forbid | rook;
    not_by_type_[kQueen] = forbid | bishop | rook;
    not_by_type_[kKing] = forbid | KingSpread(target);
    // What the correction needs: Them's sliders and what they see, Them's pins, Them's pawn
    // moves and the squares they move to.
    constexpr Bitboard kStart = Them == kWhite ? kRank2 : kRank7;
    constexpr int kUp = Them == kWhite ? 8 : -8;
    const Bitboard push = Shift<kUp>(their_pawns);
    pawn_zone_ = push | Shift<kUp>(push & Shift<kUp>(kStart)) | PawnAttacksBb<Them>(their_pawns);
    their_bq_ = pos.Pieces(Them, kBishop, kQueen);
    their_rq_ = pos.Pieces(Them, kRook, kQueen);
    Bitboard d, st;
    SliderSight(their_bq_, their_rq_, occ, d, st);
    seen_ = d | st;
    pinned_ = movegen_detail::PinnedPieces<Them>(pos, ksq_, occ);
    if (pawn_zone_) pawns_before_ = PawnCount(occ, pos.Pieces(Us));
    corrected_ = seen_ | pawn_zone_;
    // Them's count in the node itself (no en passant: Us moved last).
    unchanged_ = uint64_t(movegen_detail::Generate<Them, movegen_detail::kCount>(parent_, nullptr));
  }

  uint64_t Count() {
    movegen_detail::GenerateInto<Us, movegen_detail::kAll>(pos_, *this);
    return nodes_;
  }

  // The sink's interface. A piece's moves from `from`.
  void Add(Square from, Bitboard targets) {
    const Bitboard forbid = not_by_type_[TypeOf(pos_.PieceOn(from))];
    const Bitboard pass = forbid & SquareBb(from) ? 0 : targets & ~pos_.Pieces() & ~forbid;
    for (Bitboard b = targets & ~pass; b;) Full(Move(from, PopLsb(b)));
    const Bitboard correct = corrected_ & SquareBb(from) ? pass : pass & corrected_;
    nodes_ += unchanged_ * PopCount(pass & ~correct);
    for (Bitboard b = correct; b;) nodes_ += Corrected(from, PopLsb(b));
  }
  // Pawn moves by `delta`: pushes arrive here (by 8 or 16), and captures, which do not pass.
  void AddPawn(int delta, Bitboard targets) {
    const auto forward = [delta](Bitboard b) { return delta > 0 ? b << delta : b >> -delta; };
    const Bitboard forbid = not_by_type_[kPawn];
    const Bitboard pass = targets & ~pos_.Pieces() & ~forbid & ~forward(forbid);
    for (Bitboard b = targets & ~pass; b;) {
      const Square to = PopLsb(b);
      Full(Move(Square(to - delta), to));
    }
    const Bitboard correct = pass & (corrected_ | forward(corrected_));
    nodes_ += unchanged_ * PopCount(pass & ~correct);
    for (Bitboard b = correct; b;) {
      const Square to = PopLsb(b);
      nodes_ += Corrected(Square(to - delta), to);
    }
  }
  void AddPromotions(int delta, Bitboard targets) {
    while (targets) {
      const Square to = PopLsb(targets), from = Square(to - delta);
      for (PieceType pt : {kQueen, kKnight, kRook, kBishop})
        Full(Move::Make(Move::kPromotion, from, to, pt));
    }
  }
  void AddSpecial(Move m) { Full(m); }

 private:
  // Them's count after m, from a leaf board.
  void Full(Move m) {
    nodes_ += movegen_detail::Generate<Them, movegen_detail::kCount>(parent_.After<Us>(m), nullptr);
  }

  // Them's count after a passing move that needs the correction.
  uint64_t Corrected(Square from, Square to) const {
    const Bitboard both = SquareBb(from) | SquareBb(to);
    int delta = 0;
    if (both & seen_) delta = SliderDelta(from, to, both);
    if (both & pawn_zone_)
      delta += PawnCount(pos_.Pieces() ^ both, pos_.Pieces(Us) ^ both) - pawns_before_;
    return uint64_t(int64_t(unchanged_) + delta);
  }

  // Them's pawn moves (Them not in check, no en passant) with `occ` occupied, Us's pieces on
  // `ours`.
  int PawnCount(Bitboard occ, Bitboard ours) const {
    movegen_detail::Sink<movegen_detail::kCount> sink{nullptr};
    movegen_detail::PawnMoves<Them, movegen_detail::kCount>(sink, pos_.Pieces(Them, kPawn), pinned_,
                                                            occ, ours, ~Bitboard{0}, ksq_);
    return sink.count;
  }

  // The change in the moves of Them's sliders that see `from` or `to` when a piece goes from one
  // to the other.
  int SliderDelta(Square from, Square to, Bitboard both) const {
    const Bitboard occ = pos_.Pieces(), after = occ ^ both, target = ~pos_.Pieces(Them);
    int delta = 0;
    for (Bitboard b = ((BishopAttacks(from, occ) | BishopAttacks(to, occ)) & their_bq_) |
                      ((RookAttacks(from, occ) | RookAttacks(to, occ)) & their_rq_);
         b;) {
      const Square s = PopLsb(b);
      const Bitboard mask = pinned_ & SquareBb(s) ? target & Line(ksq_, s) : target;
      Bitboard before = 0, now = 0;
      if (their_bq_ & SquareBb(s)) {
        before = BishopAttacks(s, occ);
        now = BishopAttacks(s, after);
      }
      if (their_rq_ & SquareBb(s)) {
        before |= RookAttacks(s, occ);
        now |= RookAttacks(s, after);
      }
      delta += PopCount(now & mask) - PopCount(before & mask);
    }
    return delta;
  }

  const Position& pos_;
  const LeafBoard parent_;
  Square ksq_;
  Bitboard not_by_type_[6];
  Bitboard their_bq_ = 0, their_rq_ = 0, seen_ = 0, pinned_ = 0, pawn_zone_ = 0, corrected_ = 0;
  int pawns_before_ = 0;
  uint64_t unchanged_ = 0, nodes_ = 0;
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
  if (depth == 2) return LastInteriorPly<Us>(pos).Count();
  Uninitialised<Move, 256> move_buffer;
  Move* const moves = move_buffer.at;
  const int n = Generate<Us, kAll>(pos, moves);
  UndoInfo undo;
  uint64_t nodes = 0;
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

// Legal move generation with check and pin masks; the same code counts moves without
// listing them (perft's bulk counting). See https://www.chessprogramming.org/Move_Generation.
#pragma once

#include "engine/position.h"

namespace arbiter {

// Appends all legal moves of the side to move; returns how many there are.
int GenerateLegal(const Position& pos, MoveList& list);
// Number of legal moves of the side to move, without listing them.
int CountLegal(const Position& pos);
// Legal captures and queen promotions (for quiescence search).
int GenerateTactical(const Position& pos, MoveList& list);
// True when `m` is legal in `pos` (any 16-bit value is accepted and checked).
bool IsLegal(const Position& pos, Move m);

namespace movegen_detail {

// kCount: only count; kAll: every legal move; kTactical: captures and promotions to a queen.
enum Mode { kCount, kAll, kTactical };

template <Mode kMode>
struct Sink {
  Move* out;
  int count = 0;
  void Add(Square from, Bitboard targets) {
    if constexpr (kMode == kCount) {
      count += PopCount(targets);
    } else {
      while (targets) out[count++] = Move(from, PopLsb(targets));
    }
  }
  void AddPawn(int delta, Bitboard targets) {
    if constexpr (kMode == kCount) {
      count += PopCount(targets);
    } else {
      while (targets) {
        Square to = PopLsb(targets);
        out[count++] = Move(Square(to - delta), to);
      }
    }
  }
  void AddPromotions(int delta, Bitboard targets) {
    if constexpr (kMode == kCount) {
      count += 4 * PopCount(targets);
    } else {
      while (targets) {
        Square to = PopLsb(targets), from = Square(to - delta);
        out[count++] = Move::Make(Move::kPromotion, from, to, kQueen);
        if constexpr (kMode == kAll) {
          out[count++] = Move::Make(Move::kPromotion, from, to, kKnight);
          out[count++] = Move::Make(Move::kPromotion, from, to, kRook);
          out[count++] = Move::Make(Move::kPromotion, from, to, kBishop);
        }
      }
    }
  }
  void AddSpecial(Move m) {
    if constexpr (kMode == kCount) {
      ++count;
    } else {
      out[count++] = m;
    }
  }
};

// Enemy sliders that would attack `ksq` if it were empty are the only possible pinners.
template <Color Us, class Board>
inline Bitboard PinnedPieces(const Board& pos, Square ksq, Bitboard occ) {
  constexpr Color Them = ~Us;
  Bitboard pinned = 0;
  Bitboard snipers = (PseudoRookAttacks(ksq) & pos.Pieces(Them, kRook, kQueen)) |
                     (PseudoBishopAttacks(ksq) & pos.Pieces(Them, kBishop, kQueen));
  while (snipers) {
    Square s = PopLsb(snipers);
    Bitboard b = Between(ksq, s) & occ;
    if (b && !MoreThanOne(b)) pinned |= b;
  }
  return pinned & pos.Pieces(Us);
}

// The moves of Us's pawns but en passant (that needs the position): unpinned ones in bulk; pinned
// ones only along the line through the king at `ksq`; only to `check_mask` squares.
template <Color Us, Mode kMode, class SinkT>
inline void PawnMoves(SinkT& sink, Bitboard pawns, Bitboard pinned, Bitboard occ, Bitboard them,
                      Bitboard check_mask, Square ksq) {
  constexpr int Up = Us == kWhite ? 8 : -8;
  constexpr int UpLeft = Us == kWhite ? 7 : -9;
  constexpr int UpRight = Us == kWhite ? 9 : -7;
  constexpr Bitboard Rank3 = Us == kWhite ? kRank3 : kRank6;
  constexpr Bitboard Rank7 = Us == kWhite ? kRank7 : kRank2;
  const Bitboard free_pawns = pawns & ~pinned;
  const Bitboard empty = ~occ;
  const Bitboard file_pinned = pawns & pinned & FileBb(FileOf(ksq));
  const Bitboard diag_pinned = pawns & pinned & ~FileBb(FileOf(ksq));

  // Pushes: free pawns plus pawns pinned on the king's file (they stay on it).
  const Bitboard pushers = (free_pawns | file_pinned) & ~Rank7;
  Bitboard single = Shift<Up>(pushers) & empty;
  Bitboard dbl = Shift<Up>(single & Rank3) & empty & check_mask;
  single &= check_mask;
  if constexpr (kMode != kTactical) {
    sink.AddPawn(Up, single);
    sink.AddPawn(2 * Up, dbl);
  }
  // Captures by free pawns; pinned pawns (diagonal pins) checked one by one.
  const Bitboard cap_targets = them & check_mask;
  const Bitboard free_low = free_pawns & ~Rank7;
  sink.AddPawn(UpLeft, Shift<UpLeft>(free_low) & cap_targets);
  sink.AddPawn(UpRight, Shift<UpRight>(free_low) & cap_targets);
  for (Bitboard b = diag_pinned; b;) {
    Square from = PopLsb(b);
    Bitboard t = PawnAttacks(Us, from) & cap_targets & Line(ksq, from);
    if (t & (kRank1 | kRank8))
      sink.AddPromotions(int(Lsb(t)) - int(from), t);
    else
      sink.Add(from, t);
  }
  // Promotions (pushes and captures); a pinned pawn on rank 7 can only capture its pinner.
  const Bitboard promo_pawns = free_pawns & Rank7;
  if (promo_pawns) {
    sink.AddPromotions(Up, Shift<Up>(promo_pawns) & empty & check_mask);
    sink.AddPromotions(UpLeft, Shift<UpLeft>(promo_pawns) & cap_targets);
    sink.AddPromotions(UpRight, Shift<UpRight>(promo_pawns) & cap_targets);
  }
}

// Hands every legal move of Us (by kMode) to `sink`: a Sink<kMode>, or any type with its Add,
// AddPawn, AddPromotions and AddSpecial (kCount also adds to its `count`). Board is Position, or
// any type with the same read accessors (perft's leaf board).
template <Color Us, Mode kMode, class Board, class SinkT>
inline void GenerateInto(const Board& pos, SinkT& sink) {
  constexpr Color Them = ~Us;
  constexpr int Up = Us == kWhite ? 8 : -8;

  const Bitboard occ = pos.Pieces();
  const Bitboard us = pos.Pieces(Us), them = pos.Pieces(Them);
  const Square ksq = pos.KingSquare(Us);
  const Bitboard capture_mask = kMode == kTactical ? them : ~us;
  const Bitboard bq = pos.Pieces(Them, kBishop, kQueen), rq = pos.Pieces(Them, kRook, kQueen);
  // Enemy sliders on the king's lines (ignoring blockers): without them there are no slider
  // checks and no pins, and the slider lookups are skipped.
  const Bitboard snipers = (PseudoRookAttacks(ksq) & rq) | (PseudoBishopAttacks(ksq) & bq);
  Bitboard checkers = (PawnAttacks(Us, ksq) & pos.Pieces(Them, kPawn)) |
                      (KnightAttacks(ksq) & pos.Pieces(Them, kKnight));
  if (snipers) checkers |= (BishopAttacks(ksq, occ) & bq) | (RookAttacks(ksq, occ) & rq);

  // Castling candidates by the cheap tests (right held, path empty but for king and rook),
  // combined without branches: they change from position to position.
  constexpr int kK = CastlingIndex(Us, kKingSide), kQ = CastlingIndex(Us, kQueenSide);
  bool king_side = false, queen_side = false;
  if constexpr (kMode != kTactical) {
    king_side = pos.CanCastle(kK) & !(pos.CastlingPath(kK) & occ);
    queen_side = pos.CanCastle(kQ) & !(pos.CastlingPath(kQ) & occ);
  }
  // Squares enemy pawns, knights and king attack: no king move may go there, nor may castling
  // cross them. Sliders are tested square by square, with the king lifted off the board.
  Bitboard danger = 0;
  Bitboard king_targets = KingAttacks(ksq) & capture_mask;
  if (king_targets | (king_side | queen_side)) {
    danger = PawnAttacksBb<Them>(pos.Pieces(Them, kPawn)) | KingAttacks(pos.KingSquare(Them));
    const Bitboard occ_no_king = occ ^ SquareBb(ksq);
#if ARBITER_SIMD_SLIDERS
    // With the king lifted; castling retests sliders with its rook lifted too (that can only
    // add attacks, so what is attacked here stays attacked there).
    danger |= PieceAttacks(pos.Pieces(Them, kKnight), bq, rq, ~occ_no_king);
    sink.Add(ksq, king_targets & ~danger);
#else
    for (Bitboard n = pos.Pieces(Them, kKnight); n;) danger |= KnightAttacks(PopLsb(n));
    king_targets &= ~danger;
    Bitboard safe = 0;
    while (king_targets) {
      const Square to = PopLsb(king_targets);
      if ((PseudoBishopAttacks(to) & bq) && (BishopAttacks(to, occ_no_king) & bq)) continue;
      if ((PseudoRookAttacks(to) & rq) && (RookAttacks(to, occ_no_king) & rq)) continue;
      safe |= SquareBb(to);
    }
    sink.Add(ksq, safe);
#endif
  }
  if (MoreThanOne(checkers)) return;

  // Squares a non-king move must reach: block or capture a single checker.
  const Bitboard check_mask = checkers ? Between(ksq, Lsb(checkers)) | checkers : ~Bitboard{0};
  const Bitboard target = capture_mask & check_mask;
  const Bitboard pinned = snipers ? PinnedPieces<Us>(pos, ksq, occ) : 0;

  // Pawns: all but en passant, then en passant.
  {
    const Bitboard pawns = pos.Pieces(Us, kPawn);
    PawnMoves<Us, kMode>(sink, pawns, pinned, occ, them, check_mask, ksq);
    // En passant: rare, so each candidate is verified by replaying the occupancy change.
    const Square ep = pos.EpSquare();
    if (ep != kNoSquare) {
      const Square captured = Square(ep - Up);
      if (check_mask & (SquareBb(captured) | SquareBb(ep))) {
        for (Bitboard b = PawnAttacks(Them, ep) & pawns; b;) {
          Square from = PopLsb(b);
          Bitboard after = (occ ^ SquareBb(from) ^ SquareBb(captured)) | SquareBb(ep);
          Bitboard attackers = (RookAttacks(ksq, after) & pos.Pieces(Them, kRook, kQueen)) |
                               (BishopAttacks(ksq, after) & pos.Pieces(Them, kBishop, kQueen));
          if (!attackers &&
              !(checkers & ~SquareBb(captured) &
                ~(pos.Pieces(Them, kRook, kQueen) | pos.Pieces(Them, kBishop, kQueen))))
            sink.AddSpecial(Move::Make(Move::kEnPassant, from, ep));
        }
      }
    }
  }

  // Knights (a pinned knight never moves) and sliders (pinned ones stay on the line through
  // the king).
  const Bitboard diagonal = pos.Pieces(Us, kBishop, kQueen),
                 straight = pos.Pieces(Us, kRook, kQueen);
#if ARBITER_SIMD_SLIDERS
  if constexpr (kMode == kCount) {
    sink.count += PieceMoveCount(pos.Pieces(Us, kKnight) & ~pinned, diagonal & ~pinned,
                                 straight & ~pinned, ~occ, target);
  } else
#endif
  {
    for (Bitboard b = pos.Pieces(Us, kKnight) & ~pinned; b;) {
      Square from = PopLsb(b);
      sink.Add(from, KnightAttacks(from) & target);
    }
    for (Bitboard b = diagonal & ~pinned; b;) {
      Square from = PopLsb(b);
      sink.Add(from, BishopAttacks(from, occ) & target);
    }
    for (Bitboard b = straight & ~pinned; b;) {
      Square from = PopLsb(b);
      sink.Add(from, RookAttacks(from, occ) & target);
    }
  }
  if (pinned & (diagonal | straight)) {
    for (Bitboard b = diagonal & pinned; b;) {
      Square from = PopLsb(b);
      sink.Add(from, BishopAttacks(from, occ) & target & Line(ksq, from));
    }
    for (Bitboard b = straight & pinned; b;) {
      Square from = PopLsb(b);
      sink.Add(from, RookAttacks(from, occ) & target & Line(ksq, from));
    }
  }

  // Castling: not in check, path empty but for king and rook, king's squares unattacked
  // (sliders tested with the castling rook lifted, which matters in Chess960).
  if constexpr (kMode != kTactical) {
    king_side &= !(pos.CastlingKingPath(kK) & danger);
    queen_side &= !(pos.CastlingKingPath(kQ) & danger);
    if ((king_side | queen_side) & !checkers) {
      for (CastlingSide side : {kKingSide, kQueenSide}) {
        if (!(side == kKingSide ? king_side : queen_side)) continue;
        const int idx = CastlingIndex(Us, side);
        const Square rook = pos.CastlingRook(idx);
        const Bitboard lifted = occ ^ SquareBb(rook) ^ SquareBb(ksq);
        bool safe = true;
        for (Bitboard p = pos.CastlingKingPath(idx); p && safe;) {
          const Square sq = PopLsb(p);
          safe = !(BishopAttacks(sq, lifted) & bq) && !(RookAttacks(sq, lifted) & rq);
        }
        if (safe) sink.AddSpecial(Move::Make(Move::kCastling, ksq, rook));
      }
    }
  }
}

template <Color Us, Mode kMode, class Board = Position>
inline int Generate(const Board& pos, Move* out) {
  Sink<kMode> sink{out};
  GenerateInto<Us, kMode>(pos, sink);
  return sink.count;
}

}  // namespace movegen_detail

template <Color Us>
inline int CountLegalFor(const Position& pos) {
  return movegen_detail::Generate<Us, movegen_detail::kCount>(pos, nullptr);
}

inline int CountLegal(const Position& pos) {
  return pos.SideToMove() == kWhite ? CountLegalFor<kWhite>(pos) : CountLegalFor<kBlack>(pos);
}

}  // namespace arbiter

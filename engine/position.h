// A chess position (standard and Chess960): board, FEN I/O, Zobrist keys, make/unmake.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/bitboard.h"
#include "engine/types.h"

namespace arbiter {

// 128-bit position hash: `lo` indexes tables, `hi` is stored to verify a hit.
struct Key128 {
  uint64_t lo = 0, hi = 0;
  void Toggle(const Key128& k) {
    lo ^= k.lo;
    hi ^= k.hi;
  }
  bool operator==(const Key128&) const = default;
};

// What DoMove must remember so that UndoMove restores the position exactly.
struct UndoInfo {
  Key128 key;
  Piece captured;
  Square ep;
  uint8_t castling;
  uint16_t halfmove;
};

// Pieces of colour `by` on `board` that attack `s` given the occupancy; `board` is a Position
// or any type with the same Pieces() accessors (perft's leaf board).
template <class Board>
inline Bitboard AttackersOf(const Board& board, Square s, Color by, Bitboard occupied) {
  return (PawnAttacks(~by, s) & board.Pieces(by, kPawn)) |
         (KnightAttacks(s) & board.Pieces(by, kKnight)) |
         (BishopAttacks(s, occupied) & board.Pieces(by, kBishop, kQueen)) |
         (RookAttacks(s, occupied) & board.Pieces(by, kRook, kQueen)) |
         (KingAttacks(s) & board.Pieces(by, kKing));
}

class Position {
 public:
  static constexpr std::string_view kStartFen =
      "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

  // Parses FEN, X-FEN or Shredder-FEN (4 fields as in EPD, or 6); rejects impossible positions
  // with a message naming the field and the problem.
  static absl::StatusOr<Position> FromFen(std::string_view fen);

  // A position from its parts, checked by the rules FromFen applies to a FEN (the message names
  // what is wrong). Move clocks are 0 and 1.
  struct Parts {
    std::array<Piece, 64> board;  // a1 first; kNoPiece where empty
    Color side = kWhite;
    // The rook of each castling right (CastlingIndex order), kNoSquare where there is none.
    std::array<Square, 4> castling_rooks = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
    Square ep = kNoSquare;  // en passant target square
    bool chess960 = false;
  };
  static absl::StatusOr<Position> FromParts(const Parts& parts);
  // The same into `out` (any position; unspecified on error): no Position is copied on the way
  // (a worker builds every position of its jobs so).
  static absl::Status FromParts(const Parts& parts, Position& out);
  static Position StartPosition();

  // FEN with castling written the way it was read (KQkq / X-FEN letters, or Shredder files).
  std::string Fen() const;

  Color SideToMove() const { return side_; }
  Piece PieceOn(Square s) const { return Piece(board_[s]); }
  // The piece code of every square, a1 first (kNoPiece where empty).
  const uint8_t* Board() const { return board_; }
  Bitboard Pieces() const { return by_color_[0] | by_color_[1]; }
  Bitboard Pieces(Color c) const { return by_color_[c]; }
  Bitboard Pieces(PieceType pt) const { return by_type_[pt]; }
  Bitboard Pieces(Color c, PieceType pt) const { return by_color_[c] & by_type_[pt]; }
  Bitboard Pieces(Color c, PieceType a, PieceType b) const {
    return by_color_[c] & (by_type_[a] | by_type_[b]);
  }
  Square KingSquare(Color c) const { return Lsb(Pieces(c, kKing)); }
  // The en passant target square as read or set by a double push (kNoSquare if none).
  Square EpSquare() const { return ep_; }
  uint8_t CastlingRights() const { return castling_; }
  bool CanCastle(int index) const { return castling_ & (1 << index); }
  Square CastlingRook(int index) const { return castling_rook_[index]; }
  // Squares that must be empty (but for king and rook) and squares the king passes, per right.
  Bitboard CastlingPath(int index) const { return castling_path_[index]; }
  Bitboard CastlingKingPath(int index) const { return castling_king_path_[index]; }
  // Castling rights lost by a move between these squares.
  uint8_t CastlingLossMask(Square from, Square to) const {
    return castling_mask_[from] | castling_mask_[to];
  }
  int HalfmoveClock() const { return halfmove_; }
  int FullmoveNumber() const { return fullmove_; }
  bool IsChess960() const { return chess960_; }
  void SetChess960(bool on) { chess960_ = on; }
  const Key128& Key() const { return key_; }

  // Pieces of colour `by` that attack `s`, given the occupancy.
  Bitboard AttackersTo(Square s, Color by, Bitboard occupied) const {
    return AttackersOf(*this, s, by, occupied);
  }
  Bitboard Checkers() const { return AttackersTo(KingSquare(side_), ~side_, Pieces()); }
  bool InCheck() const { return Checkers() != 0; }
  bool IsCapture(Move m) const {
    return m.KindOf() == Move::kEnPassant ||
           (m.KindOf() != Move::kCastling && PieceOn(m.To()) != kNoPiece);
  }
  // True when an en passant capture is legal right now (what repetition compares).
  bool EpCaptureLegal() const;

  // Plays a legal move (as generated). kKeys=false skips hash updates (perft without hash).
  template <bool kKeys = true>
  void DoMove(Move m, UndoInfo& undo);
  template <bool kKeys = true>
  void UndoMove(Move m, const UndoInfo& undo);
  // The key DoMove(m) gives, without making the move (perft's hash looks up all children
  // before it descends into any).
  Key128 KeyAfter(Move m) const;
  // Passes the turn (null move for search); undo with UndoNullMove.
  void DoNullMove(UndoInfo& undo);
  void UndoNullMove(const UndoInfo& undo);

  // Where king and rook land for a castling move (king-takes-rook encoded).
  static Square CastlingKingTo(Color c, bool king_side) {
    return MakeSquare(king_side ? 6 : 2, c == kWhite ? 0 : 7);
  }
  static Square CastlingRookTo(Color c, bool king_side) {
    return MakeSquare(king_side ? 5 : 3, c == kWhite ? 0 : 7);
  }

  // Recomputes the key from scratch (tests compare it with the incremental one).
  Key128 ComputeKey() const;

 private:
  Position() = default;
  void PutPiece(Piece p, Square s) {
    board_[s] = p;
    by_type_[TypeOf(p)] |= SquareBb(s);
    by_color_[ColorOf(p)] |= SquareBb(s);
  }
  void RemovePiece(Square s) {
    Piece p = Piece(board_[s]);
    by_type_[TypeOf(p)] ^= SquareBb(s);
    by_color_[ColorOf(p)] ^= SquareBb(s);
    board_[s] = kNoPiece;
  }
  void MovePiece(Square from, Square to) {
    Piece p = Piece(board_[from]);
    Bitboard ft = SquareBb(from) | SquareBb(to);
    by_type_[TypeOf(p)] ^= ft;
    by_color_[ColorOf(p)] ^= ft;
    board_[from] = kNoPiece;
    board_[to] = p;
  }
  void AddCastlingRight(Color c, Square rook);
  bool EpAttackable(Square ep, Color us) const;

  Bitboard by_type_[6] = {};
  Bitboard by_color_[2] = {};
  uint8_t board_[64];
  Color side_ = kWhite;
  uint8_t castling_ = 0;
  Square ep_ = kNoSquare;
  uint16_t halfmove_ = 0;
  int fullmove_ = 1;
  Key128 key_;
  Square castling_rook_[4] = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
  Bitboard castling_path_[4] = {};
  Bitboard castling_king_path_[4] = {};
  uint8_t castling_mask_[64] = {};  // rights lost when a move starts or ends on the square
  bool chess960_ = false;
  bool shredder_castling_ = false;
};

namespace zobrist {
struct Tables {
  Key128 piece[16][64];
  Key128 castling[16];
  Key128 ep_file[8];
  Key128 side;
  // The rook a castling right belongs to (CastlingIndex, square): zero for the standard corner
  // rook, so that standard keys are those of the rights alone, and a key otherwise, so that two
  // Chess960 positions whose right belongs to different rooks have different keys.
  Key128 castling_rook[4][64];
};
extern Tables kZobrist;
}  // namespace zobrist

template <bool kKeys>
inline void Position::DoMove(Move m, UndoInfo& undo) {
  const Color us = side_, them = ~us;
  const Square from = m.From();
  Square to = m.To();
  const Piece pc = Piece(board_[from]);
  undo.key = key_;
  undo.ep = ep_;
  undo.castling = castling_;
  undo.halfmove = halfmove_;
  undo.captured = kNoPiece;
  // The key's updates live in KeyAfter alone (it reads the position before the move).
  if constexpr (kKeys) key_ = KeyAfter(m);
  ep_ = kNoSquare;
  ++halfmove_;
  fullmove_ += us;

  if (m.KindOf() == Move::kCastling) {
    const bool king_side = to > from;
    const Square rook_from = to, king_to = CastlingKingTo(us, king_side),
                 rook_to = CastlingRookTo(us, king_side);
    const Piece rook = Piece(board_[rook_from]);
    RemovePiece(from);
    RemovePiece(rook_from);
    PutPiece(pc, king_to);
    PutPiece(rook, rook_to);
  } else {
    Square cap_sq = to;
    if (m.KindOf() == Move::kEnPassant) cap_sq = Square(to - kPawnPush[us]);
    const Piece captured = Piece(board_[cap_sq]);
    if (captured != kNoPiece) {
      RemovePiece(cap_sq);
      undo.captured = captured;
      halfmove_ = 0;
    }
    MovePiece(from, to);
    if (TypeOf(pc) == kPawn) {
      halfmove_ = 0;
      if ((to ^ from) == 16) {
        Square ep = Square((to + from) / 2);
        if (EpAttackable(ep, them)) ep_ = ep;
      } else if (m.KindOf() == Move::kPromotion) {
        Piece promo = MakePiece(us, m.Promotion());
        RemovePiece(to);
        PutPiece(promo, to);
      }
    }
  }
  const uint8_t lost = castling_ & (castling_mask_[from] | castling_mask_[to]);
  castling_ ^= lost;
  side_ = them;
}

template <bool kKeys>
inline void Position::UndoMove(Move m, const UndoInfo& undo) {
  side_ = ~side_;
  const Color us = side_;
  fullmove_ -= us;
  const Square from = m.From(), to = m.To();
  if (m.KindOf() == Move::kCastling) {
    const bool king_side = to > from;
    const Square king_to = CastlingKingTo(us, king_side), rook_to = CastlingRookTo(us, king_side);
    const Piece king = Piece(board_[king_to]), rook = Piece(board_[rook_to]);
    RemovePiece(king_to);
    RemovePiece(rook_to);
    PutPiece(king, from);
    PutPiece(rook, to);
  } else {
    if (m.KindOf() == Move::kPromotion) {
      RemovePiece(to);
      PutPiece(MakePiece(us, kPawn), to);
    }
    MovePiece(to, from);
    if (undo.captured != kNoPiece) {
      Square cap_sq = m.KindOf() == Move::kEnPassant ? Square(to - kPawnPush[us]) : to;
      PutPiece(undo.captured, cap_sq);
    }
  }
  key_ = undo.key;
  ep_ = undo.ep;
  castling_ = undo.castling;
  halfmove_ = undo.halfmove;
}

inline Key128 Position::KeyAfter(Move m) const {
  using zobrist::kZobrist;
  const Color us = side_, them = ~us;
  const Square from = m.From(), to = m.To();
  const Piece pc = Piece(board_[from]);
  Key128 key = key_;
  key.Toggle(kZobrist.side);
  if (ep_ != kNoSquare && EpAttackable(ep_, us)) key.Toggle(kZobrist.ep_file[FileOf(ep_)]);
  key.Toggle(kZobrist.piece[pc][from]);
  if (m.KindOf() == Move::kCastling) {
    // King takes own rook: the rook leaves `to`, both land on their castling squares.
    const bool king_side = to > from;
    const Piece rook = Piece(board_[to]);
    key.Toggle(kZobrist.piece[pc][CastlingKingTo(us, king_side)]);
    key.Toggle(kZobrist.piece[rook][to]);
    key.Toggle(kZobrist.piece[rook][CastlingRookTo(us, king_side)]);
  } else {
    const Square cap_sq = m.KindOf() == Move::kEnPassant ? Square(to - kPawnPush[us]) : to;
    const Piece captured = Piece(board_[cap_sq]);
    if (captured != kNoPiece) key.Toggle(kZobrist.piece[captured][cap_sq]);
    const Piece lands = m.KindOf() == Move::kPromotion ? MakePiece(us, m.Promotion()) : pc;
    key.Toggle(kZobrist.piece[lands][to]);
    if (TypeOf(pc) == kPawn && (to ^ from) == 16) {
      const Square ep = Square((to + from) / 2);
      if (EpAttackable(ep, them)) key.Toggle(kZobrist.ep_file[FileOf(ep)]);
    }
  }
  if (const uint8_t lost = castling_ & (castling_mask_[from] | castling_mask_[to])) {
    key.Toggle(kZobrist.castling[castling_]);
    key.Toggle(kZobrist.castling[castling_ ^ lost]);
    for (uint8_t b = lost; b; b &= b - 1) {
      const int idx = __builtin_ctz(b);
      key.Toggle(kZobrist.castling_rook[idx][castling_rook_[idx]]);
    }
  }
  return key;
}

// True when a pawn of `us` stands where it could capture en passant on `ep` (pseudo-legal).
inline bool Position::EpAttackable(Square ep, Color us) const {
  return PawnAttacks(~us, ep) & Pieces(us, kPawn);
}

}  // namespace arbiter

// Switchable move-generator bugs for the test engine: the legal move list of arbiter's core with
// one classic mistake put in, so `arbiter movegen-check` and `perft-diff` have real wrong engines
// to find. Moves a bug adds count as one node at any depth (some leave a king en prise or move a
// captured rook: nothing sensible follows them); moves it drops are never counted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "engine/bitboard.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/position.h"

namespace arbiter::test_engine {

enum class MovegenBug {
  kNone,
  kNoEpOutOfCheck,        // "no-ep-evasion": en passant never generated while in check
  kCastleThroughAttack,   // "castle-through-check": only the king's landing square is tested
  kKeepRightsRookTaken,   // "keep-castling-rights": a captured rook's castling right stays
  kNoUnderpromotion,      // "no-underpromotion": pawns promote to a queen only
  kEpRankPin,             // "ep-rank-pin": en passant allowed with both pawns pinned on the rank
  kChess960KingOnRookTo,  // "c960-king-on-rook-square": no castling when the king stands on the
                          // rook's destination square (it counts itself as a blocker)
};

inline bool ParseMovegenBug(std::string_view s, MovegenBug& out) {
  static constexpr std::pair<std::string_view, MovegenBug> kNames[] = {
      {"no-ep-evasion", MovegenBug::kNoEpOutOfCheck},
      {"castle-through-check", MovegenBug::kCastleThroughAttack},
      {"keep-castling-rights", MovegenBug::kKeepRightsRookTaken},
      {"no-underpromotion", MovegenBug::kNoUnderpromotion},
      {"ep-rank-pin", MovegenBug::kEpRankPin},
      {"c960-king-on-rook-square", MovegenBug::kChess960KingOnRookTo}};
  for (auto& [name, bug] : kNames)
    if (s == name) return out = bug, true;
  return false;
}

// A position plus what the buggy generator remembers beyond it: castling rights it wrongly kept.
struct BuggyState {
  Position pos = Position::StartPosition();
  uint8_t phantom = 0;  // CastlingIndex bits of rights kept after the rook was taken
  Square phantom_rook[4] = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
};

// Plays `m`, keeping the phantom rights up to date.
inline void PlayBuggy(BuggyState& s, Move m, MovegenBug bug) {
  const Position& pos = s.pos;
  const Color us = pos.SideToMove(), them = ~us;
  uint8_t newly = 0;
  if (bug == MovegenBug::kKeepRightsRookTaken && m.KindOf() != Move::kCastling) {
    for (CastlingSide side : {kKingSide, kQueenSide}) {
      const int idx = CastlingIndex(them, side);
      if (pos.CanCastle(idx) && pos.CastlingRook(idx) == m.To())
        newly |= uint8_t(1 << idx), s.phantom_rook[idx] = m.To();
    }
  }
  if (TypeOf(pos.PieceOn(m.From())) == kKing)
    s.phantom &= uint8_t(~(3 << (us * 2)));  // a king move loses every right, kept or not
  UndoInfo u;
  s.pos.DoMove(m, u);
  s.phantom |= newly;
}

inline bool Attacked(const Position& pos, Square sq, Color by, Bitboard occ) {
  return pos.AttackersTo(sq, by, occ) != 0;
}

// The buggy move list: moves the core generates (played by PlayBuggy) and moves the bug adds
// (text only: they may leave a king in check, so nothing is generated below them).
inline void GenerateBuggy(const BuggyState& s, MovegenBug bug, std::vector<Move>& moves,
                          std::vector<std::string>& phantoms) {
  const Position& pos = s.pos;
  const Color us = pos.SideToMove(), them = ~us;
  const Square ksq = pos.KingSquare(us);
  MoveList list;
  GenerateLegal(pos, list);
  moves.clear();
  phantoms.clear();
  const bool in_check = pos.InCheck();
  for (Move m : list) {
    if (bug == MovegenBug::kNoEpOutOfCheck && in_check && m.KindOf() == Move::kEnPassant) continue;
    if (bug == MovegenBug::kNoUnderpromotion && m.KindOf() == Move::kPromotion &&
        m.Promotion() != kQueen)
      continue;
    if (bug == MovegenBug::kChess960KingOnRookTo && m.KindOf() == Move::kCastling &&
        ksq == Position::CastlingRookTo(us, /*king_side=*/m.To() > ksq))
      continue;
    moves.push_back(m);
  }
  auto listed = [&](Move m) { return list.Contains(m); };
  auto add = [&](Move m) {
    if (!listed(m)) phantoms.push_back(MoveToUci(pos, m));
  };
  const Bitboard occ = pos.Pieces();
  if (bug == MovegenBug::kCastleThroughAttack && !in_check) {
    for (CastlingSide side : {kKingSide, kQueenSide}) {
      const int idx = CastlingIndex(us, side);
      if (!pos.CanCastle(idx)) continue;
      const Square rook = pos.CastlingRook(idx);
      const Bitboard lifted = occ ^ SquareBb(rook) ^ SquareBb(ksq);
      if (pos.CastlingPath(idx) & lifted) continue;
      if (Attacked(pos, Position::CastlingKingTo(us, side == kKingSide), them, lifted)) continue;
      add(Move::Make(Move::kCastling, ksq, rook));
    }
  }
  if (bug == MovegenBug::kEpRankPin && !in_check && pos.EpSquare() != kNoSquare) {
    const Square ep = pos.EpSquare();
    const Square victim = Square(us == kWhite ? ep - 8 : ep + 8);
    for (Bitboard b = PawnAttacks(them, ep) & pos.Pieces(us, kPawn); b;) {
      const Square from = PopLsb(b);
      if (RankOf(ksq) == RankOf(victim)) add(Move::Make(Move::kEnPassant, from, ep));
    }
  }
  if (bug == MovegenBug::kKeepRightsRookTaken && !in_check) {
    for (CastlingSide side : {kKingSide, kQueenSide}) {
      const int idx = CastlingIndex(us, side);
      if (!(s.phantom & (1 << idx)) || pos.CanCastle(idx)) continue;
      const Square rook = s.phantom_rook[idx];
      const Square kto = Position::CastlingKingTo(us, side == kKingSide),
                   rto = Position::CastlingRookTo(us, side == kKingSide);
      // The checks it still makes: king on its rank, squares up to the rook and both landing
      // squares empty (the captor on the rook's square does not bother it), landing unattacked.
      if (RankOf(ksq) != RankOf(rook)) continue;
      const Bitboard need =
          (Between(ksq, rook) | SquareBb(kto) | SquareBb(rto)) & ~SquareBb(ksq) & ~SquareBb(rook);
      if (need & occ) continue;
      if (Attacked(pos, kto, them, occ ^ SquareBb(ksq))) continue;
      phantoms.push_back(Cat(SquareToString(ksq), SquareToString(pos.IsChess960() ? rook : kto)));
    }
  }
}

inline uint64_t PerftBuggy(const BuggyState& s, int depth, MovegenBug bug) {
  std::vector<Move> moves;
  std::vector<std::string> phantoms;
  GenerateBuggy(s, bug, moves, phantoms);
  if (depth <= 1) return moves.size() + phantoms.size();
  uint64_t n = phantoms.size();
  for (Move m : moves) {
    BuggyState next = s;
    PlayBuggy(next, m, bug);
    n += PerftBuggy(next, depth - 1, bug);
  }
  return n;
}

// Divide lines ("move: count") of the buggy generator, in generation order.
inline std::vector<std::pair<std::string, uint64_t>> DivideBuggy(const BuggyState& s, int depth,
                                                                 MovegenBug bug) {
  std::vector<std::pair<std::string, uint64_t>> out;
  std::vector<Move> moves;
  std::vector<std::string> phantoms;
  GenerateBuggy(s, bug, moves, phantoms);
  for (Move m : moves) {
    BuggyState next = s;
    PlayBuggy(next, m, bug);
    out.emplace_back(MoveToUci(s.pos, m), depth <= 1 ? 1 : PerftBuggy(next, depth - 1, bug));
  }
  for (auto& p : phantoms) out.emplace_back(p, 1);
  return out;
}

}  // namespace arbiter::test_engine

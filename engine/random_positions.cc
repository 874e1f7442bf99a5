#include "engine/random_positions.h"

#include <random>

#include "base/strings.h"
#include "engine/bitboard.h"
#include "engine/movegen.h"

namespace arbiter {

Position Chess960Start(int n) {
  char rank[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  auto place = [&](char piece, int nth_empty) {
    for (int f = 0; f < 8; ++f)
      if (!rank[f] && nth_empty-- == 0) return rank[f] = piece, void();
  };
  n = ((n % 960) + 960) % 960;
  rank[(n % 4) * 2 + 1] = 'B';
  n /= 4;
  rank[(n % 4) * 2] = 'B';
  n /= 4;
  place('Q', n % 6);
  n /= 6;
  static constexpr int kKnights[10][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2},
                                          {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}};
  // Place the second knight first so the first one's index still counts the same empties.
  place('N', kKnights[n][1]);
  place('N', kKnights[n][0]);
  place('R', 0);
  place('K', 0);
  place('R', 0);
  std::string white(rank, 8), black;
  for (char c : white) black += char(c - 'A' + 'a');
  std::string rooks;
  for (int f = 7; f >= 0; --f)
    if (white[f] == 'R') rooks += char('A' + f);
  std::string rights = rooks;
  for (char c : rooks) rights += char(c - 'A' + 'a');
  auto pos =
      Position::FromFen(Cat(black, "/pppppppp/8/8/8/8/PPPPPPPP/", white, " w ", rights, " - 0 1"));
  Position p = pos.ok() ? *pos : Position::StartPosition();
  p.SetChess960(true);
  return p;
}

namespace {

bool GivesCheck(const Position& pos, Move m, int& checkers) {
  Position next = pos;
  UndoInfo u;
  next.DoMove(m, u);
  checkers = PopCount(next.Checkers());
  return checkers > 0;
}

int Weight(const Position& pos, Move m) {
  const Color us = pos.SideToMove(), them = ~us;
  const Piece piece = pos.PieceOn(m.From());
  int w = 1;
  int checkers = 0;
  if (GivesCheck(pos, m, checkers)) w += checkers > 1 ? 20 : 6;
  if (m.KindOf() == Move::kEnPassant) w += 12;
  if (m.KindOf() == Move::kCastling) w += 8;
  if (m.KindOf() == Move::kPromotion) {
    w += 10;
    if (pos.PieceOn(m.To()) != kNoPiece) w += 10;
    if (checkers) w += 10;
  }
  if (TypeOf(piece) == kPawn && RelativeRank(us, m.To()) >= 4)
    w += 4 * (RelativeRank(us, m.To()) - 3);  // pawns run toward promotion
  if (TypeOf(piece) == kPawn && (m.To() ^ m.From()) == 16) {
    const Bitboard side = SquareBb(m.To()) << 1 | SquareBb(m.To()) >> 1;
    const Bitboard same_rank = Bitboard(0xFF) << (8 * RankOf(m.To()));
    if (side & same_rank & pos.Pieces(them, kPawn)) w += 12;
  }
  for (CastlingSide s : {kKingSide, kQueenSide}) {
    const int idx = CastlingIndex(us, s), their = CastlingIndex(them, s);
    if (TypeOf(piece) == kRook && !pos.CanCastle(idx) &&
        m.To() == (us == kWhite ? MakeSquare(s == kKingSide ? 7 : 0, 0)
                                : MakeSquare(s == kKingSide ? 7 : 0, 7)))
      w += 8;
    if (pos.CanCastle(their) && pos.CastlingRook(their) == m.To() && m.KindOf() != Move::kCastling)
      w += 3;
    if (pos.CanCastle(idx) && (TypeOf(piece) == kKing || TypeOf(piece) == kRook) &&
        m.KindOf() != Move::kCastling)
      w += 6;
  }
  return w;
}

// True when the position is interesting enough to stop at (see the header).
bool Interesting(const Position& pos) {
  if (pos.InCheck() || pos.EpCaptureLegal()) return true;
  MoveList list;
  GenerateLegal(pos, list);
  for (Move m : list)
    if (m.KindOf() == Move::kPromotion || m.KindOf() == Move::kCastling) return true;
  return false;
}

}  // namespace

std::vector<Position> RandomPositions(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Position> out;
  out.reserve(count > 0 ? count : 0);
  for (int i = 0; out.size() < size_t(std::max(count, 0)); ++i) {
    Position pos = i % 2 ? Chess960Start(int(rng() % 960)) : Position::StartPosition();
    const int plies = 6 + int(rng() % 75);
    Position last = pos;
    for (int ply = 0; ply < plies; ++ply) {
      MoveList list;
      GenerateLegal(pos, list);
      if (list.size == 0) break;
      int total = 0;
      int weights[256];
      for (int k = 0; k < list.size; ++k) total += weights[k] = Weight(pos, list.moves[k]);
      int pick = int(rng() % uint64_t(total)), k = 0;
      while (pick >= weights[k]) pick -= weights[k++];
      UndoInfo u;
      pos.DoMove(list.moves[k], u);
      if (CountLegal(pos) == 0) break;
      last = pos;
      if (ply >= 4 && Interesting(pos) && rng() % 2) break;
    }
    out.push_back(last);
  }
  return out;
}

}  // namespace arbiter

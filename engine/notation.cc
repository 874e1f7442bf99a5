#include "engine/notation.h"

#include "base/strings.h"
#include "engine/movegen.h"

namespace arbiter {
namespace {

constexpr char kPromoChars[] = " nbrq";
constexpr char kSanPieces[] = " NBRQK";

}  // namespace

std::string SquareToString(Square s) { return {char('a' + FileOf(s)), char('1' + RankOf(s))}; }

std::string MoveToUci(const Position& pos, Move m) {
  if (m.IsNone()) return "0000";
  Square to = m.To();
  if (m.KindOf() == Move::kCastling && !pos.IsChess960())
    to = Position::CastlingKingTo(pos.SideToMove(), m.To() > m.From());
  std::string s = SquareToString(m.From()) + SquareToString(to);
  if (m.KindOf() == Move::kPromotion) s += kPromoChars[m.Promotion()];
  return s;
}

absl::StatusOr<Move> ParseUciMove(const Position& pos, std::string_view text) {
  MoveList list;
  GenerateLegal(pos, list);
  for (Move m : list) {
    if (MoveToUci(pos, m) == text) return m;
    // Accept the other castling spelling too (king-takes-rook in standard chess, e1g1 in 960).
    if (m.KindOf() == Move::kCastling) {
      Square king_to = Position::CastlingKingTo(pos.SideToMove(), m.To() > m.From());
      if (text == SquareToString(m.From()) + SquareToString(m.To()) ||
          (text == SquareToString(m.From()) + SquareToString(king_to) && king_to != m.From()))
        return m;
    }
  }
  bool well_formed = (text.size() == 4 || text.size() == 5) && text[0] >= 'a' && text[0] <= 'h' &&
                     text[1] >= '1' && text[1] <= '8' && text[2] >= 'a' && text[2] <= 'h' &&
                     text[3] >= '1' && text[3] <= '8';
  if (!well_formed) return absl::InvalidArgumentError(Cat("'", text, "' is not a UCI move"));
  return absl::InvalidArgumentError(Cat("illegal move '", text, "' in position ", pos.Fen()));
}

std::string MoveToSan(const Position& pos, Move m) {
  std::string san;
  const Piece pc = pos.PieceOn(m.From());
  if (m.KindOf() == Move::kCastling) {
    san = m.To() > m.From() ? "O-O" : "O-O-O";
  } else {
    const PieceType pt = TypeOf(pc);
    const bool capture = pos.IsCapture(m);
    if (pt == kPawn) {
      if (capture) san += char('a' + FileOf(m.From()));
    } else {
      san += kSanPieces[pt];
      // Disambiguate among other pieces of the same type that can reach the square.
      MoveList list;
      GenerateLegal(pos, list);
      bool same_file = false, same_rank = false, ambiguous = false;
      for (Move o : list) {
        if (o == m || o.To() != m.To() || o.From() == m.From() || o.KindOf() == Move::kCastling ||
            pos.PieceOn(o.From()) != pc)
          continue;
        ambiguous = true;
        same_file |= FileOf(o.From()) == FileOf(m.From());
        same_rank |= RankOf(o.From()) == RankOf(m.From());
      }
      if (ambiguous) {
        if (!same_file)
          san += char('a' + FileOf(m.From()));
        else if (!same_rank)
          san += char('1' + RankOf(m.From()));
        else
          san += SquareToString(m.From());
      }
    }
    if (capture) san += 'x';
    san += SquareToString(m.To());
    if (m.KindOf() == Move::kPromotion) {
      san += '=';
      san += kSanPieces[m.Promotion()];
    }
  }
  Position after = pos;
  UndoInfo undo;
  after.DoMove(m, undo);
  if (after.InCheck()) {
    MoveList replies;
    san += GenerateLegal(after, replies) == 0 ? '#' : '+';
  }
  return san;
}

absl::StatusOr<Move> ParseSanMove(const Position& pos, std::string_view text) {
  std::string_view core = text;
  while (!core.empty() &&
         (core.back() == '+' || core.back() == '#' || core.back() == '!' || core.back() == '?'))
    core.remove_suffix(1);
  if (core.empty()) return absl::InvalidArgumentError(Cat("'", text, "' is not a SAN move"));
  std::string normalized(core);
  if (normalized == "0-0") normalized = "O-O";
  if (normalized == "0-0-0") normalized = "O-O-O";
  MoveList list;
  GenerateLegal(pos, list);
  Move found;
  int matches = 0;
  for (Move m : list) {
    std::string san = MoveToSan(pos, m);
    while (!san.empty() && (san.back() == '+' || san.back() == '#')) san.pop_back();
    // Also accept promotions written without '=' (e8Q) and over-disambiguated moves.
    std::string no_eq = san;
    if (auto eq = no_eq.find('='); eq != std::string::npos) no_eq.erase(eq, 1);
    if (san == normalized || no_eq == normalized) {
      found = m;
      ++matches;
    }
  }
  if (matches == 1) return found;
  if (matches == 0) {
    // Fall back to long forms like Ng1f3 / Ng1-f3 / e2-e4.
    std::string compact;
    for (char c : normalized)
      if (c != '-' && c != 'x') compact += c;
    for (Move m : list) {
      if (m.KindOf() == Move::kCastling) continue;
      PieceType pt = TypeOf(pos.PieceOn(m.From()));
      std::string lng = pt == kPawn ? "" : std::string(1, kSanPieces[pt]);
      lng += SquareToString(m.From()) + SquareToString(m.To());
      if (m.KindOf() == Move::kPromotion) lng += kSanPieces[m.Promotion()];
      std::string lng_eq = lng;
      if (m.KindOf() == Move::kPromotion)
        lng_eq = Cat(std::string_view(lng).substr(0, lng.size() - 1), '=', lng.back());
      if (lng == compact || lng_eq == compact) return m;
    }
    return absl::InvalidArgumentError(
        Cat("illegal or unknown SAN move '", text, "' in position ", pos.Fen()));
  }
  return absl::InvalidArgumentError(Cat("ambiguous SAN move '", text, "' in position ", pos.Fen()));
}

}  // namespace arbiter

#include "engine/position.h"

#include <cstring>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"

namespace arbiter {
namespace zobrist {

Tables kZobrist;

namespace {
// Fixed-seed splitmix64: keys are the same in every process, so hashes can be compared anywhere.
struct Initializer {
  Initializer() {
    uint64_t s = 0x2545F4914F6CDD1DULL;
    auto next = [&s] {
      uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return z ^ (z >> 31);
    };
    auto key = [&] { return Key128{next(), next()}; };
    for (auto& p : kZobrist.piece)
      for (auto& k : p) k = key();
    Key128 rights[4];
    for (auto& r : rights) r = key();
    for (int mask = 0; mask < 16; ++mask) {
      kZobrist.castling[mask] = Key128{};
      for (int i = 0; i < 4; ++i)
        if (mask & (1 << i)) kZobrist.castling[mask].Toggle(rights[i]);
    }
    for (auto& k : kZobrist.ep_file) k = key();
    kZobrist.side = key();
    // Drawn last, so that the keys above stay what they were before these existed.
    for (int idx = 0; idx < 4; ++idx) {
      const Square corner = MakeSquare(idx % 2 == kKingSide ? 7 : 0, idx < 2 ? 0 : 7);
      for (int sq = 0; sq < 64; ++sq) {
        const Key128 k = key();
        kZobrist.castling_rook[idx][sq] = sq == corner ? Key128{} : k;
      }
    }
  }
};
Initializer initializer;
}  // namespace
}  // namespace zobrist

namespace {

absl::Status FenError(int field, std::string_view what) {
  return absl::InvalidArgumentError(Cat("FEN field ", field, ": ", what));
}

std::string SquareName(Square s) { return {char('a' + FileOf(s)), char('1' + RankOf(s))}; }

constexpr std::string_view kPieceChars = "PNBRQK";

// What is wrong with the pieces alone (one king a side, at most 16 pieces and 8 pawns, no pawn on
// rank 1 or 8); empty if nothing.
std::string MaterialProblem(const Position& pos) {
  for (Color c : {kWhite, kBlack}) {
    const char* name = c == kWhite ? "white" : "black";
    int kings = PopCount(pos.Pieces(c, kKing));
    if (kings != 1) return Cat(kings == 0 ? "missing " : "more than one ", name, " king");
    if (PopCount(pos.Pieces(c)) > 16)
      return Cat(name, " has ", PopCount(pos.Pieces(c)), " pieces; at most 16 are possible");
    if (PopCount(pos.Pieces(c, kPawn)) > 8) return Cat(name, " has more than 8 pawns");
  }
  if (pos.Pieces(kPawn) & (kRank1 | kRank8))
    return Cat("pawn on ", SquareName(Lsb(pos.Pieces(kPawn) & (kRank1 | kRank8))),
               " (no pawn can stand on rank 1 or 8)");
  return {};
}

// What is wrong with `s` as the en passant target square of `pos` (its side to move and pieces
// already set); empty if nothing.
std::string EpProblem(const Position& pos, Square s) {
  const int needed_rank = pos.SideToMove() == kWhite ? 5 : 2;
  if (RankOf(s) != needed_rank)
    return Cat("en passant square ", SquareName(s), " is not on rank ", needed_rank + 1, " (",
               pos.SideToMove() == kWhite ? "white" : "black", " to move)");
  const Color mover = ~pos.SideToMove();
  const Square pawn = Square(s + kPawnPush[mover]), origin = Square(s - kPawnPush[mover]);
  if (pos.PieceOn(pawn) != MakePiece(mover, kPawn) || pos.PieceOn(s) != kNoPiece ||
      pos.PieceOn(origin) != kNoPiece)
    return Cat("en passant square ", SquareName(s),
               " but no pawn has just moved two squares past it");
  return {};
}

// What is wrong with the position as a whole (checks); empty if nothing. The field of a FEN it
// concerns goes to `field`.
std::string CheckProblem(const Position& pos, int& field) {
  // The side not to move must not be in check (it would mean its king could be captured).
  const Color side = pos.SideToMove();
  if (pos.AttackersTo(pos.KingSquare(~side), side, pos.Pieces())) {
    field = 2;
    return Cat("the side not to move (", side == kWhite ? "black" : "white", ") is in check");
  }
  field = 1;
  if (PopCount(pos.Checkers()) > 2) return "the side to move is in check from more than two pieces";
  return {};
}

}  // namespace

Position Position::StartPosition() { return *FromFen(kStartFen); }

void Position::AddCastlingRight(Color c, Square rook) {
  const Square king = KingSquare(c);
  const bool king_side = rook > king;
  const int idx = CastlingIndex(c, king_side ? kKingSide : kQueenSide);
  castling_ |= 1 << idx;
  castling_rook_[idx] = rook;
  castling_mask_[king] |= CastlingBit(c, kKingSide) | CastlingBit(c, kQueenSide);
  castling_mask_[rook] |= 1 << idx;
  const Square king_to = CastlingKingTo(c, king_side), rook_to = CastlingRookTo(c, king_side);
  castling_path_[idx] =
      (Between(king, king_to) | Between(rook, rook_to) | SquareBb(king_to) | SquareBb(rook_to)) &
      ~(SquareBb(king) | SquareBb(rook));
  castling_king_path_[idx] = Between(king, king_to) | SquareBb(king_to);
  if (FileOf(king) != 4 || (FileOf(rook) != 0 && FileOf(rook) != 7)) chess960_ = true;
}

absl::StatusOr<Position> Position::FromFen(std::string_view fen) {
  std::vector<std::string_view> fields = SplitWords(fen);
  if (fields.size() < 4)
    return absl::InvalidArgumentError(
        Cat("FEN has ", fields.size(), " fields; expected 6 (or 4 as in EPD)"));
  if (fields.size() == 5)
    return FenError(6, "missing fullmove number (5 fields; expected 6, or 4 as in EPD)");
  if (fields.size() > 6)
    return absl::InvalidArgumentError(
        Cat("FEN has trailing garbage after field 6: '", fields[6], "'"));

  Position pos;
  for (auto& sq : pos.board_) sq = kNoPiece;

  // Field 1: piece placement, rank 8 first.
  std::vector<std::string_view> ranks = Split(fields[0], '/');
  if (ranks.size() != 8) return FenError(1, Cat("has ", ranks.size(), " ranks; expected 8"));
  for (int r = 0; r < 8; ++r) {
    int file = 0;
    const int rank = 7 - r;
    for (char ch : ranks[r]) {
      if (ch >= '1' && ch <= '8') {
        file += ch - '0';
      } else {
        size_t idx = kPieceChars.find(char(std::toupper(static_cast<unsigned char>(ch))));
        if (idx == std::string_view::npos)
          return FenError(1, Cat("bad character '", std::string(1, ch), "' in rank ", rank + 1));
        if (file > 7) {
          file = 9;  // a piece beyond the h-file
          break;
        }
        Color c = std::isupper(static_cast<unsigned char>(ch)) ? kWhite : kBlack;
        pos.PutPiece(MakePiece(c, PieceType(idx)), MakeSquare(file, rank));
        ++file;
      }
      if (file > 8) break;
    }
    if (file != 8)
      return FenError(
          1, Cat("rank ", rank + 1, " has ", file > 8 ? "more" : "fewer", " than 8 squares"));
  }
  if (std::string problem = MaterialProblem(pos); !problem.empty()) return FenError(1, problem);

  // Field 2: side to move.
  if (fields[1] == "w")
    pos.side_ = kWhite;
  else if (fields[1] == "b")
    pos.side_ = kBlack;
  else
    return FenError(2, Cat("side to move '", fields[1], "' is not 'w' or 'b'"));

  // Field 3: castling rights, as KQkq, X-FEN or Shredder-FEN letters.
  if (fields[2] != "-") {
    // Shredder-FEN names every rook by its file; X-FEN uses KQkq and letters only when needed.
    pos.shredder_castling_ = true;
    for (char ch : fields[2])
      if (std::toupper(static_cast<unsigned char>(ch)) == 'K' ||
          std::toupper(static_cast<unsigned char>(ch)) == 'Q')
        pos.shredder_castling_ = false;
    for (char ch : fields[2]) {
      Color c = std::isupper(static_cast<unsigned char>(ch)) ? kWhite : kBlack;
      char up = char(std::toupper(static_cast<unsigned char>(ch)));
      const int back = c == kWhite ? 0 : 7;
      const char* name = c == kWhite ? "white" : "black";
      Square king = pos.KingSquare(c);
      if (up != 'K' && up != 'Q' && (up < 'A' || up > 'H'))
        return FenError(3, Cat("bad castling character '", std::string(1, ch), "'"));
      if (RankOf(king) != back)
        return FenError(3, Cat("castling right '", std::string(1, ch), "' but the ", name,
                               " king is not on its back rank"));
      Piece rook_piece = MakePiece(c, kRook);
      Square rook = kNoSquare;
      if (up == 'K' || up == 'Q') {
        // X-FEN: the outermost rook on that side of the king.
        if (up == 'K') {
          for (int f = 7; f > FileOf(king); --f)
            if (pos.PieceOn(MakeSquare(f, back)) == rook_piece) {
              rook = MakeSquare(f, back);
              break;
            }
        } else {
          for (int f = 0; f < FileOf(king); ++f)
            if (pos.PieceOn(MakeSquare(f, back)) == rook_piece) {
              rook = MakeSquare(f, back);
              break;
            }
        }
        if (rook == kNoSquare)
          return FenError(
              3, Cat("castling right '", std::string(1, ch), "' but no ", name, " rook on the ",
                     up == 'K' ? "king" : "queen", " side of the king"));
      } else {
        rook = MakeSquare(up - 'A', back);
        if (pos.PieceOn(rook) != rook_piece)
          return FenError(3, Cat("castling right '", std::string(1, ch), "' but no ", name,
                                 " rook on ", SquareName(rook)));
        if (rook == king)
          return FenError(
              3, Cat("castling right '", std::string(1, ch), "' names the king's own file"));
      }
      int idx = CastlingIndex(c, rook > king ? kKingSide : kQueenSide);
      if (pos.castling_ & (1 << idx))
        return FenError(
            3, Cat("castling right '", std::string(1, ch), "' repeats a right already given"));
      pos.AddCastlingRight(c, rook);
    }
  }

  // Field 4: en passant target square.
  if (fields[3] != "-") {
    std::string_view ep = fields[3];
    if (ep.size() != 2 || ep[0] < 'a' || ep[0] > 'h' || ep[1] < '1' || ep[1] > '8')
      return FenError(4, Cat("en passant square '", ep, "' is not a square"));
    Square s = MakeSquare(ep[0] - 'a', ep[1] - '1');
    if (std::string problem = EpProblem(pos, s); !problem.empty()) return FenError(4, problem);
    pos.ep_ = s;
  }

  // Fields 5 and 6: counters (EPD omits them).
  if (fields.size() == 6) {
    int halfmove = 0, fullmove = 0;
    if (!ParseNumber(fields[4], halfmove) || halfmove < 0 || halfmove > 2000)
      return FenError(5, Cat("halfmove clock '", fields[4], "' is not a number 0..2000"));
    if (!ParseNumber(fields[5], fullmove) || fullmove < 1 || fullmove > 100000)
      return FenError(6, Cat("fullmove number '", fields[5], "' is not a number 1..100000"));
    pos.halfmove_ = uint16_t(halfmove);
    pos.fullmove_ = fullmove;
  }

  int field = 0;
  if (std::string problem = CheckProblem(pos, field); !problem.empty())
    return FenError(field, problem);
  pos.key_ = pos.ComputeKey();
  return pos;
}

absl::StatusOr<Position> Position::FromParts(const Parts& parts) {
  Position pos;
  RETURN_IF_ERROR(FromParts(parts, pos));
  return pos;
}

absl::Status Position::FromParts(const Parts& parts, Position& out) {
  auto error = [](std::string_view what) {
    return absl::InvalidArgumentError(Cat("position: ", what));
  };
  out = Position();
  Position& pos = out;
  // The four bits of every square's piece code as four bitboards (bit planes), without a branch
  // per square: a piece's type is its three low bits, its colour the fourth (types.h).
  Bitboard plane[4] = {}, high = 0;
#ifdef __SSE2__
  for (int q = 0; q < 4; ++q) {
    const __m128i x =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(parts.board.data() + 16 * q));
    // Bit k of each byte to its top bit (a 16-bit shift moves both bytes' bits alike).
    plane[0] |= Bitboard(uint16_t(_mm_movemask_epi8(_mm_slli_epi16(x, 7)))) << (16 * q);
    plane[1] |= Bitboard(uint16_t(_mm_movemask_epi8(_mm_slli_epi16(x, 6)))) << (16 * q);
    plane[2] |= Bitboard(uint16_t(_mm_movemask_epi8(_mm_slli_epi16(x, 5)))) << (16 * q);
    plane[3] |= Bitboard(uint16_t(_mm_movemask_epi8(_mm_slli_epi16(x, 4)))) << (16 * q);
    // Codes above 15: any of the high four bits.
    high |= uint16_t(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(x, _mm_set1_epi8(char(0xf0))),
                                                      _mm_setzero_si128())) ^
                     0xffff);
  }
#else
  for (int s = 0; s < 64; ++s) {
    for (int k = 0; k < 4; ++k) plane[k] |= Bitboard((parts.board[s] >> k) & 1) << s;
    high |= Bitboard(parts.board[s] >> 4);
  }
#endif
  // Codes 6, 14 and 15 are no piece (both middle bits set, but not the empty square's 7).
  const Bitboard bad = (plane[1] & plane[2] & ~(plane[0] & ~plane[3])) | (high ? ~Bitboard{0} : 0);
  if (bad) {
    for (int s = 0; s < 64; ++s) {
      const Piece p = parts.board[s];
      if (p > 15 || (p != kNoPiece && TypeOf(p) > kKing))
        return error(Cat("bad piece code ", int(p), " on ", SquareName(Square(s))));
    }
  }
  const Bitboard empty = plane[0] & plane[1] & plane[2] & ~plane[3];
  for (int t = kPawn; t <= kKing; ++t) {
    Bitboard b = ~empty;
    for (int k = 0; k < 3; ++k) b &= (t >> k) & 1 ? plane[k] : ~plane[k];
    pos.by_type_[t] = b;
  }
  pos.by_color_[kWhite] = ~empty & ~plane[3];
  pos.by_color_[kBlack] = plane[3];
  std::memcpy(pos.board_, parts.board.data(), 64);
  if (std::string problem = MaterialProblem(pos); !problem.empty()) return error(problem);
  if (parts.side != kWhite && parts.side != kBlack)
    return error(Cat("bad side to move ", int(parts.side)));
  pos.side_ = parts.side;
  for (int idx = 0; idx < 4; ++idx) {
    const Square rook = parts.castling_rooks[idx];
    if (rook == kNoSquare) continue;
    const Color c = Color(idx / 2);
    const char* name = c == kWhite ? "white" : "black";
    const Square king = pos.KingSquare(c);
    if (rook > kNoSquare || RankOf(rook) != (c == kWhite ? 0 : 7))
      return error(
          Cat(name, " castling right with a rook square (", int(rook), ") off the back rank"));
    if (RankOf(king) != RankOf(rook))
      return error(Cat(name, " castling right but the ", name, " king is not on its back rank"));
    if (pos.PieceOn(rook) != MakePiece(c, kRook))
      return error(Cat(name, " castling right but no ", name, " rook on ", SquareName(rook)));
    if ((rook > king) != (idx % 2 == kKingSide))
      return error(Cat(name, " castling right ", idx, ": the rook on ", SquareName(rook),
                       " is on the wrong side of the king"));
    pos.AddCastlingRight(c, rook);
  }
  pos.shredder_castling_ = parts.chess960 && pos.castling_ != 0;
  pos.chess960_ = parts.chess960;
  if (parts.ep != kNoSquare) {
    if (parts.ep > kNoSquare) return error(Cat("bad en passant square ", int(parts.ep)));
    if (std::string problem = EpProblem(pos, parts.ep); !problem.empty()) return error(problem);
    pos.ep_ = parts.ep;
  }
  int field = 0;
  if (std::string problem = CheckProblem(pos, field); !problem.empty()) return error(problem);
  pos.key_ = pos.ComputeKey();
  return absl::OkStatus();
}

std::string Position::Fen() const {
  std::string out;
  for (int rank = 7; rank >= 0; --rank) {
    int empty = 0;
    for (int file = 0; file < 8; ++file) {
      Piece p = PieceOn(MakeSquare(file, rank));
      if (p == kNoPiece) {
        ++empty;
        continue;
      }
      if (empty) out += char('0' + empty), empty = 0;
      char ch = kPieceChars[TypeOf(p)];
      out += ColorOf(p) == kWhite ? ch : char(std::tolower(ch));
    }
    if (empty) out += char('0' + empty);
    if (rank) out += '/';
  }
  out += side_ == kWhite ? " w " : " b ";
  if (!castling_) out += '-';
  for (int idx = 0; idx < 4; ++idx) {
    if (!CanCastle(idx)) continue;
    const Color c = Color(idx / 2);
    const bool king_side = idx % 2 == kKingSide;
    const Square rook = castling_rook_[idx];
    // X-FEN writes K/Q unless another rook stands further out on the same side.
    bool outermost = true;
    const Bitboard rooks = Pieces(c, kRook) & RankBb(RankOf(rook));
    for (Bitboard b = rooks; b;) {
      Square r = PopLsb(b);
      if (king_side ? r > rook : (r < rook && r != rook)) outermost = false;
    }
    char ch;
    if (!shredder_castling_ && outermost)
      ch = king_side ? 'K' : 'Q';
    else
      ch = char('A' + FileOf(rook));
    out += c == kWhite ? ch : char(std::tolower(ch));
  }
  out += ' ';
  out += ep_ == kNoSquare ? "-" : SquareName(ep_);
  out += Cat(" ", halfmove_, " ", fullmove_);
  return out;
}

Key128 Position::ComputeKey() const {
  using zobrist::kZobrist;
  Key128 k;
  for (Bitboard b = Pieces(); b;) {
    Square s = PopLsb(b);
    k.Toggle(kZobrist.piece[board_[s]][s]);
  }
  k.Toggle(kZobrist.castling[castling_]);
  for (int idx = 0; idx < 4; ++idx)
    if (CanCastle(idx)) k.Toggle(kZobrist.castling_rook[idx][castling_rook_[idx]]);
  if (ep_ != kNoSquare && EpAttackable(ep_, side_)) k.Toggle(kZobrist.ep_file[FileOf(ep_)]);
  if (side_ == kBlack) k.Toggle(kZobrist.side);
  return k;
}

bool Position::EpCaptureLegal() const {
  if (ep_ == kNoSquare) return false;
  const Color us = side_, them = ~us;
  const Square ksq = KingSquare(us), captured = Square(ep_ - kPawnPush[us]);
  for (Bitboard b = PawnAttacks(them, ep_) & Pieces(us, kPawn); b;) {
    Square from = PopLsb(b);
    Bitboard occ = (Pieces() ^ SquareBb(from) ^ SquareBb(captured)) | SquareBb(ep_);
    if (!(AttackersTo(ksq, them, occ) & ~SquareBb(captured))) return true;
  }
  return false;
}

void Position::DoNullMove(UndoInfo& undo) {
  using zobrist::kZobrist;
  undo.key = key_;
  undo.ep = ep_;
  undo.castling = castling_;
  undo.halfmove = halfmove_;
  undo.captured = kNoPiece;
  if (ep_ != kNoSquare && EpAttackable(ep_, side_)) key_.Toggle(kZobrist.ep_file[FileOf(ep_)]);
  ep_ = kNoSquare;
  key_.Toggle(kZobrist.side);
  ++halfmove_;
  side_ = ~side_;
}

void Position::UndoNullMove(const UndoInfo& undo) {
  side_ = ~side_;
  key_ = undo.key;
  ep_ = undo.ep;
  castling_ = undo.castling;
  halfmove_ = undo.halfmove;
}

}  // namespace arbiter

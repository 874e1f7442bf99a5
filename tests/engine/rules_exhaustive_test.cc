// Backs CanCheckmate's "cannot" answers by exhaustion: for each material split it calls hopeless,
// no placement at all has the weaker side's opponent checkmated. Captures only shrink material
// (no pawns, so no promotions), so checking the full material and its subsets settles the claim.
#include <string>
#include <vector>

#include "engine/rules.h"
#include "gtest/gtest.h"

namespace arbiter {
namespace {

constexpr Bitboard kAll = ~Bitboard{0};

struct Placed {
  char piece;  // FEN letter
  Bitboard allowed;
};

// Counts legal positions, black to move, in which black is checkmated, with white's king plus
// `white` and black's king plus `black` (each piece on one of its allowed squares).
class MateCounter {
 public:
  MateCounter(std::vector<Placed> white, std::vector<Placed> black)
      : white_(std::move(white)), black_(std::move(black)) {}

  int Count() {
    mates_ = 0;
    board_.assign(64, 0);
    PlaceWhite(0);
    return mates_;
  }
  long long Examined() const { return examined_; }

 private:
  void PlaceWhite(size_t i) {
    if (i == white_.size() + 1) {
      PlaceBlackKing();
      return;
    }
    const Placed p = i == 0 ? Placed{'K', kAll} : white_[i - 1];
    for (int s = 0; s < 64; ++s) {
      if (board_[s] || !(p.allowed & SquareBb(Square(s)))) continue;
      board_[s] = p.piece;
      PlaceWhite(i + 1);
      board_[s] = 0;
    }
  }

  // Black must be in check: some white piece attacks the king on the board so far (the black
  // pieces placed later can only block, so this is a superset of the final checks).
  void PlaceBlackKing() {
    Bitboard occ = 0;
    for (int s = 0; s < 64; ++s)
      if (board_[s]) occ |= SquareBb(Square(s));
    for (int k = 0; k < 64; ++k) {
      if (board_[k]) continue;
      const Square ks = Square(k);
      const Bitboard occ_k = occ | SquareBb(ks);
      bool check = false;
      for (int s = 0; s < 64 && !check; ++s) {
        const Square from = Square(s);
        switch (board_[s]) {
          case 'N':
            check = KnightAttacks(from) & SquareBb(ks);
            break;
          case 'B':
            check = BishopAttacks(from, occ_k) & SquareBb(ks);
            break;
          case 'R':
            check = RookAttacks(from, occ_k) & SquareBb(ks);
            break;
          case 'Q':
            check = (BishopAttacks(from, occ_k) | RookAttacks(from, occ_k)) & SquareBb(ks);
            break;
          default:
            break;
        }
      }
      if (!check) continue;
      board_[k] = 'k';
      PlaceBlack(0);
      board_[k] = 0;
    }
  }

  void PlaceBlack(size_t i) {
    if (i == black_.size()) {
      Evaluate();
      return;
    }
    for (int s = 0; s < 64; ++s) {
      if (board_[s] || !(black_[i].allowed & SquareBb(Square(s)))) continue;
      board_[s] = black_[i].piece;
      PlaceBlack(i + 1);
      board_[s] = 0;
    }
  }

  void Evaluate() {
    std::string fen;
    for (int rank = 7; rank >= 0; --rank) {
      int empty = 0;
      for (int file = 0; file < 8; ++file) {
        const char c = board_[rank * 8 + file];
        if (!c) {
          ++empty;
          continue;
        }
        if (empty) fen += char('0' + empty), empty = 0;
        fen += c;
      }
      if (empty) fen += char('0' + empty);
      if (rank) fen += '/';
    }
    fen += " b - - 0 1";
    absl::StatusOr<Position> pos =
        Position::FromFen(fen);  // rejects white in check, kings adjacent
    if (!pos.ok()) return;
    ++examined_;
    if (PositionOutcome(*pos).termination == Termination::kCheckmate) {
      if (mates_ == 0) first_mate_ = fen;
      ++mates_;
    }
  }

 public:
  std::string first_mate_;

 private:
  std::vector<Placed> white_, black_;
  std::vector<char> board_;
  int mates_ = 0;
  long long examined_ = 0;
};

struct Split {
  const char* name;
  std::vector<Placed> white, black;
  bool mate_exists;
};

void ExpectSplit(const Split& split) {
  MateCounter counter(split.white, split.black);
  const int mates = counter.Count();
  EXPECT_GT(counter.Examined(), 0) << split.name;
  if (split.mate_exists) {
    EXPECT_GT(mates, 0) << split.name;
  } else {
    EXPECT_EQ(mates, 0) << split.name << ": e.g. " << counter.first_mate_;
  }
}

// The "cannot" claims: no mate exists at all for these splits (and their subsets, listed too).
TEST(CanCheckmateExhaustive, NoMatePositionExistsWhereItSaysCannot) {
  const Split splits[] = {
      {"K+N v K", {{'N', kAll}}, {}, false},
      {"K+N v K+Q", {{'N', kAll}}, {{'q', kAll}}, false},
      {"K+B v K", {{'B', kAll}}, {}, false},
      {"K+B v K+R", {{'B', kAll}}, {{'r', kAll}}, false},
      {"K+B v K+Q", {{'B', kAll}}, {{'q', kAll}}, false},
      {"K+B v K+B same colour", {{'B', kDarkSquares}}, {{'b', kDarkSquares}}, false},
      {"K+BB same colour v K", {{'B', kDarkSquares}, {'B', kDarkSquares}}, {}, false},
  };
  for (const Split& s : splits) ExpectSplit(s);
}

// And the exhaustive search does find mates where CanCheckmate says "can" (so it could fail).
// About as long as the test above: only in the slow run.
#ifdef ARBITER_SLOW_TESTS
TEST(CanCheckmateExhaustive, MatePositionsExistWhereItSaysCan) {
  const Split splits[] = {
      {"K+N v K+R", {{'N', kAll}}, {{'r', kAll}}, true},
      {"K+N v K+N", {{'N', kAll}}, {{'n', kAll}}, true},
      {"K+N v K+B", {{'N', kAll}}, {{'b', kAll}}, true},
      {"K+B v K+N", {{'B', kAll}}, {{'n', kAll}}, true},
      {"K+B v K+B other colour", {{'B', kDarkSquares}}, {{'b', ~kDarkSquares}}, true},
      {"K+R v K", {{'R', kAll}}, {}, true},
  };
  for (const Split& s : splits) ExpectSplit(s);
}
#endif

}  // namespace
}  // namespace arbiter

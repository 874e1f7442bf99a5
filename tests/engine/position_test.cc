#include "engine/position.h"

#include <functional>
#include <tuple>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/packed_position.h"
#include "gtest/gtest.h"
#include "tests/engine/suite_util.h"

namespace arbiter {
namespace {

struct FenErrorCase {
  const char* name;
  const char* fen;
  const char* message_part;  // the error must name the field and the problem
};

class FenErrorTest : public ::testing::TestWithParam<FenErrorCase> {};

TEST_P(FenErrorTest, RejectsWithClearMessage) {
  const FenErrorCase& c = GetParam();
  auto pos = Position::FromFen(c.fen);
  ASSERT_FALSE(pos.ok()) << c.fen << " was accepted";
  EXPECT_EQ(pos.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(pos.status().message()).find(c.message_part), std::string::npos)
      << "message '" << pos.status().message() << "' lacks '" << c.message_part << "'";
}

INSTANTIATE_TEST_SUITE_P(
    Fen, FenErrorTest,
    ::testing::Values(
        FenErrorCase{"MissingWhiteKing", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 1",
                     "field 1: missing white king"},
        FenErrorCase{"ExtraBlackKing", "rnbqkbnr/pppppppp/8/8/3k4/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: more than one black king"},
        FenErrorCase{"PawnOnRank8", "rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQq - 0 1",
                     "field 1: pawn on h8"},
        FenErrorCase{"PawnOnRank1", "rnbqkbnr/ppppppp1/8/8/8/8/PPPPPPP1/RNBQKBNp w Qkq - 0 1",
                     "field 1: pawn on h1"},
        FenErrorCase{"TooManyPieces", "rnbqkbnr/pppppppp/8/8/8/N7/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: white has 17 pieces"},
        FenErrorCase{"ShortRank", "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: rank 7 has fewer than 8 squares"},
        FenErrorCase{"LongRank", "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: rank 7 has more than 8 squares"},
        FenErrorCase{"BadPieceChar", "rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: bad character 'x'"},
        FenErrorCase{"SevenRanks", "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 1: has 7 ranks"},
        FenErrorCase{"BadSide", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
                     "field 2: side to move 'x'"},
        FenErrorCase{"SideNotToMoveInCheck", "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1",
                     "the side not to move (black) is in check"},
        FenErrorCase{"CastlingWithoutRook",
                     "rnbqkbn1/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                     "field 3: castling right 'k' but no black rook on the king side"},
        FenErrorCase{"CastlingKingMoved",
                     "rnbqkbnr/pppppppp/8/8/8/4K3/PPPPPPPP/RNBQ1BNR w KQkq - 0 1",
                     "field 3: castling right 'K' but the white king is not on its back rank"},
        FenErrorCase{"ShredderWithoutRook",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w GAga - 0 1",
                     "field 3: castling right 'G' but no white rook on g1"},
        FenErrorCase{"BadCastlingChar", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkz - 0 1",
                     "field 3: bad castling character 'z'"},
        FenErrorCase{"EpWrongRank", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4 0 1",
                     "field 4: en passant square e4 is not on rank 3"},
        FenErrorCase{"EpNoPawn", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1",
                     "field 4: en passant square e3 but no pawn has just moved two squares"},
        FenErrorCase{"EpNotASquare", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq z9 0 1",
                     "field 4: en passant square 'z9' is not a square"},
        FenErrorCase{"BadHalfmove", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1",
                     "field 5: halfmove clock 'x'"},
        FenErrorCase{"NegativeHalfmove",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -3 1", "field 5"},
        FenErrorCase{"ZeroFullmove", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 0",
                     "field 6: fullmove number '0'"},
        FenErrorCase{"TooFewFields", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq",
                     "FEN has 3 fields"},
        FenErrorCase{"FiveFields", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0",
                     "field 6: missing fullmove number"},
        FenErrorCase{"TrailingGarbage",
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 xyz",
                     "trailing garbage after field 6: 'xyz'"},
        FenErrorCase{"Empty", "", "FEN has 0 fields"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Fen, RoundTripsEverySuitePosition) {
  for (const char* suite : {"standard.epd", "fischer960.epd"}) {
    for (const auto& line : testing::LoadSuite(suite)) {
      auto pos = Position::FromFen(line.fen);
      ASSERT_TRUE(pos.ok()) << line.fen;
      // Suite FENs are 6 fields; writing gives the same text back.
      EXPECT_EQ(pos->Fen(), line.fen);
      auto again = Position::FromFen(pos->Fen());
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(again->Key(), pos->Key());
    }
  }
}

// Calls visit(root, pos) on every `step`-th position of both suites (standard and Chess960) and
// on every position up to `plies` plies below it.
void VisitSuiteTrees(size_t step, int plies,
                     const std::function<void(const Position& root, Position& pos)>& visit) {
  Position root = Position::StartPosition();
  std::function<void(Position&, int)> walk = [&](Position& pos, int left) {
    visit(root, pos);
    if (left == 0) return;
    MoveList list;
    GenerateLegal(pos, list);
    for (Move m : list) {
      UndoInfo undo;
      pos.DoMove(m, undo);
      walk(pos, left - 1);
      pos.UndoMove(m, undo);
    }
  };
  for (const char* suite : {"standard.epd", "fischer960.epd"}) {
    const auto lines = testing::LoadSuite(suite);
    for (size_t i = 0; i < lines.size(); i += step) {
      absl::StatusOr<Position> parsed = Position::FromFen(lines[i].fen);
      ASSERT_TRUE(parsed.ok()) << lines[i].fen;
      root = *parsed;
      walk(*parsed, plies);
    }
  }
}

// Every suite position and every position one and two plies below it (castling rights lost,
// en passant squares, promotions, Chess960 rooks) packs to 34 bytes and unpacks to the same
// position: same 128-bit key, same legal moves, same castling rooks.
// Unpacked in place too (as a worker does), into the same Position each time: nothing of the
// previous position (rights, rooks, en passant, Chess960) stays behind.
TEST(PackedPosition, RoundTripsSuitePositionsAndTheirChildren) {
  size_t checked = 0;
  Position reused = Position::StartPosition();
  VisitSuiteTrees(7, 2, [&](const Position& root, Position& pos) {
    absl::StatusOr<Position> back = UnpackPosition(AsBytes(PackPosition(pos)), root);
    ASSERT_TRUE(back.ok()) << back.status() << " for " << pos.Fen();
    ASSERT_TRUE(UnpackPosition(AsBytes(PackPosition(pos)), root, reused).ok()) << pos.Fen();
    EXPECT_EQ(reused.Fen(), back->Fen());
    EXPECT_TRUE(reused.Key() == back->Key()) << back->Fen();
    EXPECT_EQ(reused.IsChess960(), back->IsChess960()) << back->Fen();
    EXPECT_EQ(back->Key().lo, pos.Key().lo) << pos.Fen() << " vs " << back->Fen();
    EXPECT_EQ(back->Key().hi, pos.Key().hi) << pos.Fen();
    EXPECT_EQ(back->IsChess960(), pos.IsChess960()) << pos.Fen();
    EXPECT_EQ(CountLegal(*back), CountLegal(pos)) << pos.Fen();
    for (int idx = 0; idx < 4; ++idx) {
      if (pos.CanCastle(idx)) {
        EXPECT_EQ(back->CastlingRook(idx), pos.CastlingRook(idx)) << pos.Fen();
      }
    }
    ++checked;
  });
  EXPECT_GT(checked, 100'000u);
}

// Two Chess960 positions with the same pieces and rights, where the king-side right belongs to
// the h1 rook in one and to the f1 rook in the other (castling is legal only in the second):
// their keys differ, so no hash can give one the other's counts.
TEST(PositionKey, NamesTheRookOfEachCastlingRight) {
  const Position h = *Position::FromFen("4k3/8/8/8/8/8/P7/3K1R1R w H - 0 1");
  const Position f = *Position::FromFen("4k3/8/8/8/8/8/P7/3K1R1R w F - 0 1");
  ASSERT_EQ(h.CastlingRights(), f.CastlingRights());
  EXPECT_NE(CountLegal(h), CountLegal(f));
  EXPECT_FALSE(h.Key().lo == f.Key().lo && h.Key().hi == f.Key().hi);
  // Incremental keys agree with recomputed ones when such a right is lost.
  Position pos = f;
  MoveList list;
  GenerateLegal(pos, list);
  for (Move m : list) {
    UndoInfo undo;
    pos.DoMove(m, undo);
    EXPECT_EQ(pos.Key().lo, pos.ComputeKey().lo) << MoveToUci(f, m);
    EXPECT_EQ(pos.Key().hi, pos.ComputeKey().hi) << MoveToUci(f, m);
    pos.UndoMove(m, undo);
  }
}

// KeyAfter(m) is the key of the position m makes, computed from scratch, for every move of every
// suite position and of the positions one ply below (castling in both chess and Chess960, rights
// lost by a rook captured or moved, en passant squares that are and are not capturable,
// promotions with capture). DoMove takes its key from KeyAfter (the Zobrist updates live there
// alone), and perft's hash looks children up by it: a wrong key would only miss, so this checks
// it exactly.
TEST(PositionKey, KeyAfterIsTheKeyOfTheMoveMade) {
  size_t checked = 0;
  VisitSuiteTrees(3, 1, [&](const Position&, Position& pos) {
    MoveList list;
    GenerateLegal(pos, list);
    for (Move m : list) {
      const Key128 predicted = pos.KeyAfter(m);
      UndoInfo undo;
      pos.DoMove(m, undo);
      const Key128 computed = pos.ComputeKey();
      EXPECT_TRUE(predicted.lo == computed.lo && predicted.hi == computed.hi)
          << pos.Fen() << " after " << m.Raw();
      pos.UndoMove(m, undo);
      ++checked;
    }
  });
  EXPECT_GT(checked, 100'000u);
}

TEST(PackedPosition, RejectsBadBytes) {
  const Position start = Position::StartPosition();
  PackedPosition p = PackPosition(start);
  EXPECT_FALSE(UnpackPosition(AsBytes(p).substr(0, 33), start).ok());
  PackedPosition bad_piece = p;
  bad_piece[12] = 0x66;  // piece code 6 is no piece
  EXPECT_EQ(UnpackPosition(AsBytes(bad_piece), start).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Nor are 14 and 15 (a black piece's bit over 6 and over the empty square's 7), nor anything
  // above 15 in an unpacked board; each named with its square.
  for (const auto& [byte, code, square] :
       {std::tuple{0xe7, 14, "f3"}, std::tuple{0x7f, 15, "e3"}}) {
    PackedPosition bad = p;
    bad[10] = uint8_t(byte);  // squares e3 (low nibble) and f3
    absl::StatusOr<Position> back = UnpackPosition(AsBytes(bad), start);
    EXPECT_NE(back.status().message().find(Cat("bad piece code ", code, " on ", square)),
              std::string::npos)
        << back.status();
  }
  Position::Parts parts;
  parts.board.fill(kNoPiece);
  parts.board[4] = MakePiece(kWhite, kKing);
  parts.board[60] = MakePiece(kBlack, kKing);
  parts.board[33] = Piece(0x17);
  EXPECT_NE(Position::FromParts(parts).status().message().find("bad piece code 23 on b5"),
            std::string::npos);
  parts.board[33] = kNoPiece;
  EXPECT_TRUE(Position::FromParts(parts).ok());
  PackedPosition bad_ep = p;
  bad_ep[33] = 99;
  EXPECT_FALSE(UnpackPosition(AsBytes(bad_ep), start).ok());
  PackedPosition no_king = p;
  no_king[2] = 0x77;  // e1 (and f1) emptied: no white king
  EXPECT_FALSE(UnpackPosition(AsBytes(no_king), start).ok());
  auto message = [&](const PackedPosition& bytes, const Position& game) {
    absl::StatusOr<Position> back = UnpackPosition(AsBytes(bytes), game);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(back.status().message());
  };
  PackedPosition no_rook = p;
  no_rook[3] = uint8_t((no_rook[3] & 0x0f) | (kNoPiece << 4));  // h1 emptied, K right kept
  EXPECT_NE(message(no_rook, start).find("no white rook on h1"), std::string::npos);
  // A castling right the root never had cannot appear below it.
  const Position no_rights =
      *Position::FromFen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1");
  EXPECT_NE(message(p, no_rights).find("does not have"), std::string::npos);
  // En passant square with no pawn that just moved past it.
  PackedPosition ep_no_pawn =
      PackPosition(*Position::FromFen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1"));
  ep_no_pawn[33] = 20;  // e3
  EXPECT_NE(message(ep_no_pawn, start).find("no pawn has just moved"), std::string::npos);
  // The side not to move in check: white to move while the black king is attacked.
  PackedPosition check = PackPosition(*Position::FromFen("4k3/8/8/8/8/8/8/4RK2 b - - 0 1"));
  check[32] &= 0xfe;  // white to move
  EXPECT_NE(message(check, start).find("side not to move"), std::string::npos);
}

TEST(Fen, AcceptsXFenAndShredderForms) {
  auto standard = Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  auto shredder = Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1");
  ASSERT_TRUE(standard.ok() && shredder.ok());
  EXPECT_EQ(standard->Key(), shredder->Key());
  EXPECT_EQ(shredder->Fen(), "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1");
  EXPECT_FALSE(standard->IsChess960());
  // X-FEN: an inner rook is named by its file when another rook stands further out.
  auto xfen = Position::FromFen("rr2k2r/8/8/8/8/8/8/RR2K2R w KBkq - 0 1");
  ASSERT_TRUE(xfen.ok()) << xfen.status();
  EXPECT_EQ(xfen->CastlingRook(CastlingIndex(kWhite, kQueenSide)), MakeSquare(1, 0));
  EXPECT_EQ(xfen->Fen(), "rr2k2r/8/8/8/8/8/8/RR2K2R w KBkq - 0 1");
  EXPECT_TRUE(xfen->IsChess960());
}

TEST(Fen, EpdFourFieldsGetDefaultCounters) {
  auto pos = Position::FromFen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -");
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(pos->Fen(), Position::kStartFen);
}

TEST(Position, EnPassantKeyOnlyWhenCapturable) {
  // After 1.e4 no black pawn can take: the key equals the one from a FEN without ep square.
  Position pos = Position::StartPosition();
  UndoInfo undo;
  pos.DoMove(*ParseUciMove(pos, "e2e4"), undo);
  auto no_ep = Position::FromFen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1");
  EXPECT_EQ(pos.Key(), no_ep->Key());
  // A pinned capturer: en passant is pseudo-legal but not legal (rank pin).
  auto pinned = Position::FromFen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1");
  ASSERT_TRUE(pinned.ok());
  EXPECT_FALSE(pinned->EpCaptureLegal());
  auto free = Position::FromFen("8/8/8/3pP3/8/8/8/K6k w - d6 0 1");
  EXPECT_TRUE(free->EpCaptureLegal());
}

TEST(Movegen, EnPassantResolvesCheckAndRankPin) {
  // The d5 pawn gives check; exd6 e.p. removes the checker.
  auto check = Position::FromFen("8/8/8/2k5/3pP3/8/8/4K3 b - e3 0 1");
  ASSERT_TRUE(check.ok());
  auto ep = ParseUciMove(*check, "d4e3");
  EXPECT_TRUE(ep.ok()) << ep.status();
  // Rank pin: both pawns leave rank 5 and expose the king to the rook.
  auto pin = Position::FromFen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1");
  EXPECT_FALSE(ParseUciMove(*pin, "e5d6").ok());
}

TEST(Movegen, Chess960CastlingWithRookShieldingTheKing) {
  // King g1, queen-side rook b1, enemy rook a1: O-O-O would leave the king on c1 in check.
  auto pos = Position::FromFen("4k3/8/8/8/8/8/8/rR4K1 w B - 0 1");
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_FALSE(ParseUciMove(*pos, "g1b1").ok());
  auto safe = Position::FromFen("4k3/8/8/8/8/8/8/1R4K1 w B - 0 1");
  auto castle = ParseUciMove(*safe, "g1b1");
  ASSERT_TRUE(castle.ok()) << castle.status();
  EXPECT_EQ(castle->KindOf(), Move::kCastling);
  Position after = *safe;
  UndoInfo undo;
  after.DoMove(*castle, undo);
  EXPECT_EQ(after.Fen(), "4k3/8/8/8/8/8/8/2KR4 b - - 1 1");
}

TEST(Notation, UciCastlingBothSpellings) {
  auto pos = Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  auto a = ParseUciMove(*pos, "e1g1");
  auto b = ParseUciMove(*pos, "e1h1");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(MoveToUci(*pos, *a), "e1g1");
  Position p960 = *pos;
  p960.SetChess960(true);
  EXPECT_EQ(MoveToUci(p960, *a), "e1h1");
  EXPECT_FALSE(ParseUciMove(*pos, "e1e3").ok());
  EXPECT_FALSE(ParseUciMove(*pos, "zz").ok());
}

TEST(Notation, SanRoundTripsOnSuitePositions) {
  for (const char* suite : {"standard.epd", "fischer960.epd"}) {
    for (const auto& line : testing::LoadSuite(suite)) {
      Position pos = *Position::FromFen(line.fen);
      MoveList list;
      GenerateLegal(pos, list);
      for (Move m : list) {
        std::string san = MoveToSan(pos, m);
        auto back = ParseSanMove(pos, san);
        ASSERT_TRUE(back.ok()) << san << " in " << line.fen << ": " << back.status();
        EXPECT_EQ(*back, m) << san << " in " << line.fen;
      }
    }
  }
}

TEST(Notation, SanDetails) {
  auto pos = Position::FromFen("2k5/8/8/8/8/8/1R5R/K7 w - - 0 1");
  ASSERT_TRUE(pos.ok()) << pos.status();
  EXPECT_EQ(MoveToSan(*pos, *ParseUciMove(*pos, "b2e2")), "Rbe2");
  auto mate = Position::FromFen("k7/8/1K6/8/8/8/8/7R w - - 0 1");
  EXPECT_EQ(MoveToSan(*mate, *ParseUciMove(*mate, "h1h8")), "Rh8#");
  auto promo = Position::FromFen("8/P6k/8/8/8/8/8/K7 w - - 0 1");
  EXPECT_EQ(MoveToSan(*promo, *ParseUciMove(*promo, "a7a8q")), "a8=Q");
  EXPECT_EQ(*ParseSanMove(*promo, "a8=N"), *ParseUciMove(*promo, "a7a8n"));
  auto files = Position::FromFen("k7/8/8/8/N7/8/N7/K7 w - - 0 1");
  EXPECT_EQ(MoveToSan(*files, *ParseUciMove(*files, "a4b6")), "Nb6+");
  auto ranks = Position::FromFen("k7/8/8/8/N3N3/8/N7/K7 w - - 0 1");
  EXPECT_EQ(MoveToSan(*ranks, *ParseUciMove(*ranks, "a4c3")), "Na4c3");
  auto castle = Position::FromFen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
  EXPECT_EQ(MoveToSan(*castle, *ParseUciMove(*castle, "e1c1")), "O-O-O");
  EXPECT_EQ(*ParseSanMove(*castle, "0-0"), *ParseUciMove(*castle, "e1g1"));
  EXPECT_FALSE(ParseSanMove(*castle, "Qd4").ok());
}

}  // namespace
}  // namespace arbiter

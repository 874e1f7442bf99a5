#include "engine/rules.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace arbiter {
namespace {

Position Fen(const std::string& fen) {
  absl::StatusOr<Position> pos = Position::FromFen(fen);
  EXPECT_TRUE(pos.ok()) << fen << ": " << pos.status();
  return pos.ok() ? *pos : Position::StartPosition();
}

Game GameFrom(const std::string& fen) { return Game(Fen(fen)); }

void PlayAll(Game& game, const std::vector<std::string>& sans) {
  for (const std::string& san : sans) {
    absl::Status st = game.PlaySan(san);
    ASSERT_TRUE(st.ok()) << san << ": " << st;
  }
}

const GameOutcome kOngoing{};
GameOutcome kDrawBy(Termination t) { return {GameResult::kDraw, t}; }

TEST(RulesTest, FoolsMateIsCheckmate) {
  Game game(Position::StartPosition());
  PlayAll(game, {"f3", "e5", "g4"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Qh4#"});
  EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kBlackWins, Termination::kCheckmate}));
  EXPECT_EQ(game.Outcome().Winner(), kBlack);
  EXPECT_EQ(ResultString(game.Outcome().result), "0-1");
  EXPECT_EQ(TerminationName(game.Outcome().termination), "checkmate");
  // No move after the end of the game.
  absl::Status st = game.PlayUci("a2a3");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_EQ(game.Plies(), 4);
}

TEST(RulesTest, IllegalMoveIsRejectedAndGameUnchanged) {
  Game game(Position::StartPosition());
  absl::Status st = game.Play(Move(Square(12), Square(36)));  // e2e5
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << st;
  EXPECT_NE(std::string(st.message()).find("e2e5"), std::string::npos) << st;
  EXPECT_EQ(game.Plies(), 0);
  EXPECT_EQ(game.Current().Fen(), Position::kStartFen);
}

TEST(RulesTest, Stalemate) {
  Game game = GameFrom("7k/8/6K1/5Q2/8/8/8/8 w - - 0 1");
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Qf7"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kStalemate));
  EXPECT_EQ(game.Outcome().Winner(), std::nullopt);
  EXPECT_EQ(ResultString(game.Outcome().result), "1/2-1/2");
}

TEST(RulesTest, CaptureOfLastPieceLeavesDeadPosition) {
  Game game = GameFrom("8/8/8/8/8/8/k7/1Q5K b - - 0 1");
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Kxb1"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kDeadPosition));
}

TEST(RulesTest, CaptureLeavingKingAndBishopVersusKingIsDead) {
  Game game = GameFrom("8/8/8/3k4/8/8/3r4/2B1K3 w - - 0 1");
  PlayAll(game, {"Bxd2"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kDeadPosition));
}

struct DeadCase {
  const char* fen;
  bool dead;
};

class DeadPositionTest : public ::testing::TestWithParam<DeadCase> {};

TEST_P(DeadPositionTest, Classifies) {
  const Position pos = Fen(GetParam().fen);
  EXPECT_EQ(IsDeadPosition(pos), GetParam().dead) << GetParam().fen;
  EXPECT_EQ(PositionOutcome(pos), GetParam().dead ? kDrawBy(Termination::kDeadPosition) : kOngoing);
}

INSTANTIATE_TEST_SUITE_P(
    Material, DeadPositionTest,
    ::testing::Values(
        DeadCase{"8/8/8/4k3/8/8/8/4K3 w - - 0 1", true},     // K v K
        DeadCase{"8/8/8/4k3/8/8/8/4KN2 w - - 0 1", true},    // K+N v K
        DeadCase{"8/8/8/4k3/8/8/8/4Kn2 b - - 0 1", true},    // K v K+N
        DeadCase{"8/8/8/4k3/8/8/8/4KB2 w - - 0 1", true},    // K+B v K
        DeadCase{"4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", true},  // K+B v K+B, both dark-squared
        // Several bishops, all on light squares (b1, a2, e6, h3 are light).
        DeadCase{"4k3/8/4b3/8/8/7B/B7/1B2K3 w - - 0 1", true},
        DeadCase{"2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", false},  // opposite-coloured bishops
        DeadCase{"4k3/8/8/8/8/8/8/2BBK3 w - - 0 1", false},    // bishop pair v K
        DeadCase{"4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1", false},   // two knights v K
        DeadCase{"4kn2/8/8/8/8/8/8/4KN2 w - - 0 1", false},    // K+N v K+N
        DeadCase{"4kn2/8/8/8/8/8/8/2B1K3 w - - 0 1", false},   // K+B v K+N
        DeadCase{"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", false},    // K+P v K
        DeadCase{"4k3/8/8/8/8/8/8/R3K3 w - - 0 1", false},     // K+R v K
        DeadCase{"4k3/8/8/8/8/8/8/1N1QK3 w - - 0 1", false}));

struct MateCase {
  const char* fen;
  Color side;
  bool can_mate;
};

class CanCheckmateTest : public ::testing::TestWithParam<MateCase> {};

TEST_P(CanCheckmateTest, Decides) {
  EXPECT_EQ(CanCheckmate(Fen(GetParam().fen), GetParam().side), GetParam().can_mate)
      << GetParam().fen << " side " << int(GetParam().side);
}

INSTANTIATE_TEST_SUITE_P(
    Material, CanCheckmateTest,
    ::testing::Values(
        MateCase{"4k3/8/8/8/8/8/8/R3K3 w - - 0 1", kBlack, false},  // lone king vs rook
        MateCase{"4k3/pppppppp/8/8/8/8/8/4K3 w - - 0 1", kWhite, false},
        MateCase{"4k3/8/8/8/8/8/8/4KN2 w - - 0 1", kWhite, false},     // K+N v K
        MateCase{"4k3/8/8/8/8/8/8/4KB2 w - - 0 1", kWhite, false},     // K+B v K
        MateCase{"4k3/p7/8/8/8/8/8/4KN2 w - - 0 1", kWhite, true},     // K+N v K+P (helpmate)
        MateCase{"4k3/8/8/8/8/8/8/4KN1r w - - 0 1", kWhite, true},     // K+N v K+R
        MateCase{"3nk3/8/8/8/8/8/8/4KN2 w - - 0 1", kWhite, true},     // K+N v K+N
        MateCase{"3bk3/8/8/8/8/8/8/4KN2 w - - 0 1", kWhite, true},     // K+N v K+B
        MateCase{"3qk3/8/8/8/8/8/8/4KN2 w - - 0 1", kWhite, false},    // K+N v K+Q
        MateCase{"2qqk3/8/8/8/8/8/8/4KN2 w - - 0 1", kWhite, false},   // K+N v K+Q+Q
        MateCase{"3qk3/8/8/8/8/8/8/4KN2 w - - 0 1", kBlack, true},     // the queen side can
        MateCase{"4k3/p7/8/8/8/8/8/4KB2 w - - 0 1", kWhite, true},     // K+B v K+P
        MateCase{"3nk3/8/8/8/8/8/8/4KB2 w - - 0 1", kWhite, true},     // K+B v K+N
        MateCase{"2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", kWhite, true},   // opposite bishops
        MateCase{"4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", kWhite, false},   // same-coloured bishops
        MateCase{"4k2r/8/8/8/8/8/8/2B1K3 w - - 0 1", kWhite, false},   // K+B v K+R
        MateCase{"3qk2r/8/8/8/8/8/8/2B1K3 w - - 0 1", kWhite, false},  // K+B v K+Q+R
        MateCase{"4k3/8/8/8/8/8/8/2BBK3 w - - 0 1", kWhite, true},     // bishop pair
        MateCase{"4k3/8/8/8/8/8/8/B1B1K3 w - - 0 1", kWhite, false},   // two dark bishops v K
        MateCase{"4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1", kWhite, true},    // two knights
        MateCase{"4k3/8/8/8/8/8/8/1NB1K3 w - - 0 1", kWhite, true},    // knight + bishop
        MateCase{"4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", kWhite, true},     // a pawn can promote
        MateCase{"4k3/8/8/8/8/8/8/3QK3 w - - 0 1", kWhite, true}));

// Where CanCheckmate says a lone minor piece can mate, a mate position really exists.
TEST(RulesTest, HelpmatesBehindCanCheckmateAreRealMates) {
  const GameOutcome white_mates{GameResult::kWhiteWins, Termination::kCheckmate};
  for (const char* fen : {
           "kr6/2N5/K7/8/8/8/8/8 b - - 0 1",   // K+N v K+R
           "kb6/8/KN6/8/8/8/8/8 b - - 0 1",    // K+N v K+B
           "kn6/2N5/1K6/8/8/8/8/8 b - - 0 1",  // K+N v K+N
           "k7/p1K5/8/3B4/8/8/8/8 b - - 0 1",  // K+B v K+P
           "kn6/1B6/1K6/8/8/8/8/8 b - - 0 1",  // K+B v K+N
           "kb6/1B6/1K6/8/8/8/8/8 b - - 0 1",  // K+B v K+B on the other colour
       }) {
    const Position pos = Fen(fen);
    EXPECT_EQ(PositionOutcome(pos), white_mates) << fen;
    EXPECT_TRUE(CanCheckmate(pos, kWhite)) << fen;
  }
}

TEST(RulesTest, ThreefoldRepetitionIsClaimedAutomatically) {
  Game game(Position::StartPosition());
  PlayAll(game, {"Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  EXPECT_EQ(game.RepetitionCount(), 2);  // white's knight on g1, black's on f6: twice
  PlayAll(game, {"Ng8"});
  EXPECT_EQ(game.RepetitionCount(), 3);
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kThreefoldRepetition));
  EXPECT_EQ(TerminationName(game.Outcome().termination), "threefold repetition");
}

TEST(RulesTest, ThreefoldWithoutAutoClaimIsOnlyClaimableUntilFivefold) {
  Game game(Position::StartPosition());
  game.SetAutoClaimDraws(false);
  const std::vector<std::string> cycle = {"Nf3", "Nf6", "Ng1", "Ng8"};
  PlayAll(game, cycle);
  PlayAll(game, cycle);
  EXPECT_EQ(game.Outcome(), kOngoing);
  EXPECT_EQ(game.ClaimableDraw(), kDrawBy(Termination::kThreefoldRepetition));
  PlayAll(game, cycle);
  EXPECT_EQ(game.RepetitionCount(), 4);
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Nf3", "Nf6", "Ng1"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Ng8"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kFivefoldRepetition));
  // Switching the claim back on does not change a fivefold ending.
  game.SetAutoClaimDraws(true);
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kFivefoldRepetition));
}

TEST(RulesTest, SwitchingAutoClaimOnEndsTheGameAtOnce) {
  Game game(Position::StartPosition());
  game.SetAutoClaimDraws(false);
  PlayAll(game, {"Nc3", "Nc6", "Nb1", "Nb8", "Nc3", "Nc6", "Nb1", "Nb8"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  game.SetAutoClaimDraws(true);
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kThreefoldRepetition));
}

// After ...d7-d5 white's e5 pawn attacks d6, but exd6 would open the fifth rank to the rook on
// h5 (the en passant rank pin): the ep square does not count, so the position right after d5
// repeats twice more by knight and king moves.
TEST(RulesTest, IllegalEnPassantDoesNotMakePositionsDiffer) {
  Game game = GameFrom("4k3/3p4/8/K3P2r/8/8/8/6N1 b - - 0 1");
  PlayAll(game, {"d5"});
  ASSERT_NE(game.Current().EpSquare(), kNoSquare);
  EXPECT_FALSE(game.Current().EpCaptureLegal());
  const Key128 after_push = game.Current().Key();
  PlayAll(game, {"Nf3", "Ke7", "Ng1", "Ke8"});
  // Position's own key still tells the two apart; the repetition key does not.
  EXPECT_NE(game.Current().Key(), after_push);
  EXPECT_EQ(game.RepetitionCount(), 2);
  PlayAll(game, {"Nf3", "Ke7", "Ng1"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Ke8"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kThreefoldRepetition));
}

// The same without the pin: exd6 is legal right after d5, so that position is different.
TEST(RulesTest, LegalEnPassantMakesPositionsDiffer) {
  Game game = GameFrom("4k3/3p4/8/4P3/8/8/8/K5N1 b - - 0 1");
  PlayAll(game, {"d5"});
  EXPECT_TRUE(game.Current().EpCaptureLegal());
  PlayAll(game, {"Nf3", "Ke7", "Ng1", "Ke8", "Nf3", "Ke7", "Ng1", "Ke8"});
  // Where the pinned case above ends in threefold repetition, this one goes on.
  EXPECT_EQ(game.RepetitionCount(), 2);
  EXPECT_EQ(game.Outcome(), kOngoing);
  // The position after Nf3 (no ep square in it) now occurs for the third time.
  PlayAll(game, {"Nf3"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kThreefoldRepetition));
}

TEST(RulesTest, CastlingRightsMakePositionsDiffer) {
  // The rook's first trip loses the right: the start of the cycle never repeats exactly.
  Game game = GameFrom("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
  PlayAll(game, {"Rh2", "Kd8", "Rh1", "Ke8", "Rh2", "Kd8", "Rh1", "Ke8"});
  EXPECT_EQ(game.RepetitionCount(), 2);
  EXPECT_EQ(game.Outcome(), kOngoing);
}

TEST(RulesTest, FiftyMoveRule) {
  Game game = GameFrom("4k3/8/8/8/8/8/8/R3K3 w - - 99 80");
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Ra2"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kFiftyMoveRule));
  EXPECT_EQ(TerminationName(game.Outcome().termination), "50-move rule");

  Game unclaimed = GameFrom("4k3/8/8/8/8/8/8/R3K3 w - - 99 80");
  unclaimed.SetAutoClaimDraws(false);
  PlayAll(unclaimed, {"Ra2"});
  EXPECT_EQ(unclaimed.Outcome(), kOngoing);
  EXPECT_EQ(unclaimed.ClaimableDraw(), kDrawBy(Termination::kFiftyMoveRule));
}

TEST(RulesTest, CaptureResetsTheFiftyMoveCount) {
  Game game = GameFrom("4k3/8/8/8/8/8/r7/R3K3 w - - 99 80");
  PlayAll(game, {"Rxa2"});
  EXPECT_EQ(game.Outcome(), kOngoing);
  EXPECT_EQ(game.Current().HalfmoveClock(), 0);
}

TEST(RulesTest, SeventyFiveMoveRuleEndsTheGameEvenWithoutClaims) {
  Game game = GameFrom("4k3/8/8/8/8/8/8/R3K3 w - - 149 100");
  game.SetAutoClaimDraws(false);
  EXPECT_EQ(game.Outcome(), kOngoing);
  PlayAll(game, {"Ra2"});
  EXPECT_EQ(game.Outcome(), kDrawBy(Termination::kSeventyFiveMoveRule));
}

TEST(RulesTest, MateOnTheFiftiethAndSeventyFifthMoveStands) {
  // At 149 the 50-move draw could have been claimed already: only without auto-claim does the
  // game reach the 75th move.
  const std::pair<const char*, int> cases[] = {{"6k1/5ppp/8/8/8/8/8/R5K1 w - - 99 80", 100},
                                               {"6k1/5ppp/8/8/8/8/8/R5K1 w - - 149 100", 150}};
  for (const auto& [fen, clock] : cases) {
    Game game = GameFrom(fen);
    game.SetAutoClaimDraws(clock == 100);
    PlayAll(game, {"Ra8#"});
    EXPECT_EQ(game.Current().HalfmoveClock(), clock) << fen;
    EXPECT_EQ(game.Outcome(), (GameOutcome{GameResult::kWhiteWins, Termination::kCheckmate}))
        << fen;
  }
}

TEST(RulesTest, StartPositionThatIsAlreadyOver) {
  // A checkmated side to move in the FEN: the game is over before any move.
  absl::StatusOr<Game> game = Game::FromFen("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1");
  ASSERT_TRUE(game.ok()) << game.status();
  EXPECT_EQ(game->Outcome(), (GameOutcome{GameResult::kWhiteWins, Termination::kCheckmate}));
  EXPECT_FALSE(Game::FromFen("not a fen").ok());
}

}  // namespace
}  // namespace arbiter

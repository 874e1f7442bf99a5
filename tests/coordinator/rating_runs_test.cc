// Ratings key engines by what they are: one name that covers different binaries or options is
// rated as separate engines, with a warning naming each, and the identities come from a run's
// status (the workers' sha256s, the request's args and options). Ratings across runs agree with
// stats::ComputeRatings on the combined games.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/strings.h"
#include "coordinator/ratings.h"
#include "stats/ratings.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

const std::string kShaA(64, 'a');
const std::string kShaB(64, 'b');

TEST(RateRuns, OneNameOverTwoBinariesIsRatedApartWithAWarning) {
  // Run 1: "sf" (binary A) beats "b" 8-2; run 2: "sf" (binary B) loses to "b" 1-9.
  const std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs = {
      {1, {{"sf", "b", {.losses = 2, .draws = 0, .wins = 8}}}},
      {2, {{"sf", "b", {.losses = 9, .draws = 0, .wins = 1}}}},
  };
  const std::map<uint64_t, EngineIdentities> ids = {
      {1, {{"sf", "sha256 " + kShaA}, {"b", "builtin"}}},
      {2, {{"sf", "sha256 " + kShaB}, {"b", "builtin"}}},
  };
  v1::GetRatingsRequest req;
  req.add_engines("b");
  req.add_engines("sf");
  absl::StatusOr<v1::GetRatingsResponse> got = RateRuns(req, runs, ids);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->standings_size(), 3);
  std::map<std::string, double> elo;
  for (const auto& st : got->standings()) elo[st.name()] = st.elo();
  ASSERT_TRUE(elo.contains("sf#1") && elo.contains("sf#2") && elo.contains("b"));
  EXPECT_GT(elo["sf#1"], 0) << "binary A won its games";
  EXPECT_LT(elo["sf#2"], 0) << "binary B lost its games";
  ASSERT_EQ(got->warnings_size(), 1);
  const std::string& w = got->warnings(0);
  EXPECT_NE(w.find("'sf' names 2 different engines"), std::string::npos) << w;
  EXPECT_NE(w.find("sf#1 = sha256 " + kShaA + " (run 1)"), std::string::npos) << w;
  EXPECT_NE(w.find("sf#2 = sha256 " + kShaB + " (run 2)"), std::string::npos) << w;
  EXPECT_EQ(got->anchor(), "b");

  // The anchor by its name is the first engine of that name.
  req.set_anchor("sf");
  absl::StatusOr<v1::GetRatingsResponse> anchored = RateRuns(req, runs, ids);
  ASSERT_TRUE(anchored.ok()) << anchored.status();
  EXPECT_EQ(anchored->anchor(), "sf#1");

  // The same identity in both runs is one engine, without a warning.
  const std::map<uint64_t, EngineIdentities> same = {
      {1, {{"sf", "sha256 " + kShaA}, {"b", "builtin"}}},
      {2, {{"sf", "sha256 " + kShaA}, {"b", "builtin"}}},
  };
  req.clear_anchor();
  absl::StatusOr<v1::GetRatingsResponse> one = RateRuns(req, runs, same);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->standings_size(), 2);
  EXPECT_EQ(one->warnings_size(), 0);
}

TEST(RateRuns, OptionsAreTheEnginesIdentityToo) {
  const std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs = {
      {1, {{"sf", "b", {.losses = 1, .draws = 2, .wins = 3}}}},
      {2, {{"sf", "b", {.losses = 3, .draws = 2, .wins = 1}}}},
  };
  v1::Run r1, r2;
  for (v1::Run* r : {&r1, &r2}) {
    v1::SubmitMatchRequest& m = *r->mutable_match()->mutable_request();
    v1::EngineSpec& sf = *m.mutable_settings()->add_engines();
    sf.set_name("sf");
    sf.set_path("/usr/games/stockfish");
    v1::EngineSpec& b = *m.mutable_settings()->add_engines();
    b.set_name("b");
    b.set_builtin(true);
    v1::RunEngine& seen = *r->add_engines();
    seen.set_name("sf");
    seen.set_sha256(kShaA);
    seen.add_sha256s(kShaA);
  }
  (*r2.mutable_match()
        ->mutable_request()
        ->mutable_settings()
        ->mutable_engines(0)
        ->mutable_options())["Hash"] = "64";
  const EngineIdentities i1 = IdentitiesOf(r1), i2 = IdentitiesOf(r2);
  EXPECT_EQ(i1.at("sf"), "sha256 " + kShaA);
  EXPECT_EQ(i2.at("sf"), "sha256 " + kShaA + " options Hash=64");
  EXPECT_EQ(i1.at("b"), "builtin");
  v1::GetRatingsRequest req;
  req.add_run_ids(1);
  req.add_run_ids(2);
  absl::StatusOr<v1::GetRatingsResponse> got = RateRuns(req, runs, {{1, i1}, {2, i2}});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->standings_size(), 3);
  ASSERT_EQ(got->warnings_size(), 1);
  EXPECT_NE(got->warnings(0).find("options Hash=64 (run 2)"), std::string::npos)
      << got->warnings(0);
}

// A path engine no worker reported (it never ran) is known by its path.
TEST(RateRuns, AnEngineNoWorkerRanIsKnownByItsPath) {
  v1::Run r;
  v1::EngineSpec& e = *r.mutable_tournament()->mutable_request()->mutable_settings()->add_engines();
  e.set_name("x");
  e.set_path("/opt/x");
  e.add_args("--uci");
  EXPECT_EQ(IdentitiesOf(r).at("x"), "path /opt/x args --uci");
}

// Ratings across runs: the pairings of a match and a tournament combined by engine name give
// the same list as stats::ComputeRatings on the combined games (anchor first, one prior draw
// per pairing); engines chosen by name filter the pairings; an anchor elsewhere moves the zero.
TEST(RateRuns, CombinedPairingsMatchComputeRatings) {
  const stats::Trinomial ab1{.losses = 3, .draws = 5, .wins = 8};
  const stats::Trinomial ab2{.losses = 2, .draws = 2, .wins = 4};
  const stats::Trinomial ac{.losses = 1, .draws = 3, .wins = 6};
  const stats::Trinomial bc{.losses = 4, .draws = 4, .wins = 2};
  const stats::Trinomial ad{.losses = 0, .draws = 1, .wins = 9};
  std::vector<std::pair<uint64_t, std::vector<RunPairing>>> runs = {
      {1, {{"v1", "v2", ab1}}},
      {2, {{"v2", "v1", ab2.Reversed()}, {"v1", "v3", ac}, {"v2", "v3", bc}}},
      {3, {{"v1", "other", ad}}},
  };
  v1::GetRatingsRequest req;
  for (const char* e : {"v1", "v2", "v3"}) req.add_engines(e);
  absl::StatusOr<v1::GetRatingsResponse> got = RateRuns(req, runs);
  ASSERT_TRUE(got.ok()) << got.status();
  const stats::Trinomial ab{.losses = ab1.losses + ab2.losses,
                            .draws = ab1.draws + ab2.draws,
                            .wins = ab1.wins + ab2.wins};
  absl::StatusOr<stats::RatingTable> want = stats::ComputeRatings(
      {"v1", "v2", "v3"}, {{0, 1, ab}, {0, 2, ac}, {1, 2, bc}}, {.anchor = 0, .prior_draws = 1});
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(got->games(), ab.Games() + ac.Games() + bc.Games()) << "run 3's 'other' is not chosen";
  EXPECT_EQ(std::vector<uint64_t>(got->run_ids().begin(), got->run_ids().end()),
            std::vector<uint64_t>({1, 2}));
  ASSERT_EQ(got->standings_size(), 3);
  for (const v1::TournamentStanding& st : got->standings()) {
    const auto it = std::find_if(want->ratings.begin(), want->ratings.end(),
                                 [&](const stats::EngineRating& r) { return r.name == st.name(); });
    ASSERT_NE(it, want->ratings.end()) << st.name();
    EXPECT_NEAR(st.elo(), it->elo, 1e-9) << st.name();
    EXPECT_NEAR(st.elo_error95(), it->error95, 1e-9) << st.name();
    EXPECT_EQ(st.games(), it->games) << st.name();
  }
  EXPECT_EQ(got->anchor(), "v1");

  req.set_anchor("v3");
  absl::StatusOr<v1::GetRatingsResponse> moved = RateRuns(req, runs);
  ASSERT_TRUE(moved.ok()) << moved.status();
  std::map<std::string, double> at_v1, at_v3;
  for (const auto& st : got->standings()) at_v1[st.name()] = st.elo();
  for (const auto& st : moved->standings()) at_v3[st.name()] = st.elo();
  EXPECT_EQ(at_v3["v3"], 0);
  EXPECT_NEAR(at_v3["v1"] - at_v3["v2"], at_v1["v1"] - at_v1["v2"], 1e-6) << "same differences";

  // All engines of all runs when none is named.
  v1::GetRatingsRequest all;
  all.add_run_ids(1);
  absl::StatusOr<v1::GetRatingsResponse> every = RateRuns(all, runs);
  ASSERT_TRUE(every.ok()) << every.status();
  EXPECT_EQ(every->standings_size(), 4);

  // Abuse: an anchor not rated, an engine that played none of the others, nothing asked.
  req.set_anchor("nobody");
  EXPECT_EQ(RateRuns(req, runs).status().code(), absl::StatusCode::kInvalidArgument);
  req.clear_anchor();
  req.add_engines("v9");
  EXPECT_EQ(RateRuns(req, runs).status().code(), absl::StatusCode::kFailedPrecondition);
  // A name with no game anywhere is named alone, not the engines it could not be rated against.
  v1::GetRatingsRequest typo;
  for (const char* e : {"v1", "nosuch"}) typo.add_engines(e);
  const absl::Status unknown = RateRuns(typo, runs).status();
  EXPECT_NE(unknown.message().find("no finished games of 'nosuch' in these runs"),
            std::string::npos)
      << unknown;
  EXPECT_EQ(unknown.message().find("'v1'"), std::string::npos) << unknown;
  EXPECT_EQ(ValidateRatingsRequest({}).code(), absl::StatusCode::kInvalidArgument);
  v1::GetRatingsRequest huge;
  for (int i = 0; i < 101; ++i) huge.add_engines(Cat("e", i));
  EXPECT_EQ(ValidateRatingsRequest(huge).code(), absl::StatusCode::kInvalidArgument);
}

// GetRatings of runs the coordinator does not have is NOT_FOUND.
TEST_F(CoordinatorTest, RatingsOfAnUnknownRunIsNotFound) {
  v1::GetRatingsRequest req;
  req.add_run_ids(424242);
  EXPECT_EQ(c_->GetRatings(req).status().code(), absl::StatusCode::kNotFound);
  Submit(3, 1);
  v1::GetRatingsRequest perft_only;
  perft_only.add_run_ids(c_->ListRuns({})->runs(0).id());
  EXPECT_EQ(c_->GetRatings(perft_only).status().code(), absl::StatusCode::kFailedPrecondition)
      << "a perft run has no games";
}

}  // namespace
}  // namespace arbiter::coordinator

// Ratings key engines by what they are: one name that covers different binaries or options is
// rated as separate engines, with a warning naming each, and the identities come from a run's
// status (the workers' sha256s, the request's args and options).
#include <gtest/gtest.h>

#include "coordinator/ratings.h"

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
    v1::EngineSpec& sf = *m.add_engines();
    sf.set_name("sf");
    sf.set_path("/usr/games/stockfish");
    v1::EngineSpec& b = *m.add_engines();
    b.set_name("b");
    b.set_builtin(true);
    v1::RunEngine& seen = *r->add_engines();
    seen.set_name("sf");
    seen.set_sha256(kShaA);
    seen.add_sha256s(kShaA);
  }
  (*r2.mutable_match()->mutable_request()->mutable_engines(0)->mutable_options())["Hash"] = "64";
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
  v1::EngineSpec& e = *r.mutable_tournament()->mutable_request()->add_engines();
  e.set_name("x");
  e.set_path("/opt/x");
  e.add_args("--uci");
  EXPECT_EQ(IdentitiesOf(r).at("x"), "path /opt/x args --uci");
}

}  // namespace
}  // namespace arbiter::coordinator

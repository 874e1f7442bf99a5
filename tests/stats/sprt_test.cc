// The SPRT against published values (fastchess's tests, cutechess-cli's BayesElo test) and the
// properties every LLR must have.
#include "stats/sprt.h"

#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace arbiter::stats {
namespace {

// Trinomial from W, L, D as the published tables give them.
Trinomial Wld(uint64_t w, uint64_t l, uint64_t d) { return {.losses = l, .draws = d, .wins = w}; }
// Pentanomial from fastchess's six pair kinds; WL and DD both score 1.
Pentanomial Pairs6(uint64_t ll, uint64_t ld, uint64_t wl, uint64_t dd, uint64_t wd, uint64_t ww) {
  return {{ll, ld, wl + dd, wd, ww}};
}

struct Published {
  std::string name;
  bool penta;
  Trinomial tri;
  Pentanomial pen;
  SprtModel model;
  double elo0, elo1, llr;
};

class PublishedLlrTest : public testing::TestWithParam<Published> {};

TEST_P(PublishedLlrTest, WithinHalfAPercent) {
  const Published& p = GetParam();
  const SprtParams params{
      .elo0 = p.elo0, .elo1 = p.elo1, .alpha = 0.05, .beta = 0.05, .model = p.model};
  const SprtResult r = p.penta ? EvaluateSprt(p.pen, params) : EvaluateSprt(p.tri, params);
  EXPECT_NEAR(r.llr, p.llr, 0.005 * std::abs(p.llr));
  EXPECT_NEAR(r.lower, -2.944438979, 1e-9);
  EXPECT_NEAR(r.upper, 2.944438979, 1e-9);
}

constexpr auto kN = SprtModel::kNormalized;
constexpr auto kL = SprtModel::kLogistic;

INSTANTIATE_TEST_SUITE_P(
    Fastchess, PublishedLlrTest,
    testing::Values(
        Published{"NormTri1", false, Wld(36433, 36027, 68692), {}, kN, 0, 2, 0.92},
        Published{"NormTri2", false, Wld(10871, 10650, 20431), {}, kN, -1.75, 0.25, 2.30},
        Published{"NormTri3", false, Wld(4250, 0, 0), {}, kN, 0, 10, 120.56},
        Published{"LogTri1", false, Wld(21404, 21184, 40708), {}, kL, 0.5, 2.5, -1.57},
        Published{"LogTri2", false, Wld(57433, 57030, 106593), {}, kL, 0, 2, -2.59},
        Published{"NormPen1", true, {}, Pairs6(365, 16618, 36029, 200, 16974, 390), kN, 0, 2, 2.25},
        Published{
            "NormPen2", true, {}, Pairs6(127, 4883, 10311, 401, 5150, 104), kN, -1.75, 0.25, 3.01},
        Published{"NormPen3", true, {}, Pairs6(0, 0, 0, 0, 0, 5550), kN, 0, 5, 111.82},
        Published{
            "LogPen1", true, {}, Pairs6(223, 9863, 20279, 1000, 10037, 246), kL, 0.5, 2.5, -3.07},
        Published{
            "LogPen2", true, {}, Pairs6(871, 26175, 55003, 980, 26678, 821), kL, 0, 2, -4.98}),
    [](const testing::TestParamInfo<Published>& info) { return info.param.name; });

// cutechess-cli's BayesElo SPRT (alpha = beta = 0.01, elo 0..10), within 0.01.
TEST(BayesEloSprt, MatchesCutechess) {
  const SprtParams params{
      .elo0 = 0, .elo1 = 10, .alpha = 0.01, .beta = 0.01, .model = SprtModel::kBayesElo};
  SprtResult r = EvaluateSprt(Wld(1477, 1351, 2942), params);
  EXPECT_NEAR(r.llr, 2.52, 0.01);
  EXPECT_NEAR(r.lower, -4.60, 0.01);
  EXPECT_NEAR(r.upper, 4.60, 0.01);
  EXPECT_EQ(r.decision, SprtDecision::kContinue);
  r = EvaluateSprt(Wld(555, 555, 298), params);
  EXPECT_NEAR(r.llr, -0.74, 0.01);
}

TEST(BayesEloSprt, ZeroUntilEveryResultKindOccurred) {
  const SprtParams params{.elo0 = 0, .elo1 = 10, .model = SprtModel::kBayesElo};
  EXPECT_EQ(EvaluateSprt(Wld(0, 0, 20), params).llr, 0);
  EXPECT_EQ(EvaluateSprt(Wld(12, 3, 0), params).llr, 0);
  EXPECT_NE(EvaluateSprt(Wld(12, 3, 1), params).llr, 0);
}

TEST(BayesEloFit, SymmetricCountsHaveZeroElo) {
  const BayesEloFit fit = FitBayesElo(Wld(100, 100, 200));
  EXPECT_NEAR(fit.elo, 0, 1e-12);
  // pw = pl = 1/4: draw_elo = 200 log10(9).
  EXPECT_NEAR(fit.draw_elo, 200 * std::log10(9.0), 1e-9);
}

TEST(SprtBounds, FromAlphaAndBeta) {
  const SprtBounds b = SprtLlrBounds(0.05, 0.1);
  EXPECT_NEAR(b.lower, std::log(0.1 / 0.95), 1e-15);
  EXPECT_NEAR(b.upper, std::log(0.9 / 0.05), 1e-15);
  EXPECT_EQ(DecideSprt(b.upper, b), SprtDecision::kAcceptH1);
  EXPECT_EQ(DecideSprt(b.lower, b), SprtDecision::kAcceptH0);
  EXPECT_EQ(DecideSprt(0, b), SprtDecision::kContinue);
}

TEST(SprtDecision, LargeSamplesDecide) {
  const SprtParams params{.elo0 = 0, .elo1 = 5, .model = SprtModel::kNormalized};
  // +20 Elo-ish: clearly H1.
  EXPECT_EQ(EvaluateSprt(Pentanomial{{100, 2000, 5000, 2400, 150}}, params).decision,
            SprtDecision::kAcceptH1);
  // -10 Elo-ish: clearly H0.
  EXPECT_EQ(EvaluateSprt(Pentanomial{{150, 2300, 5000, 2100, 100}}, params).decision,
            SprtDecision::kAcceptH0);
}

TEST(SprtParams, Validation) {
  EXPECT_TRUE(ValidateSprtParams({}).ok());
  EXPECT_FALSE(ValidateSprtParams({.elo0 = 2, .elo1 = 2}).ok());
  EXPECT_FALSE(ValidateSprtParams({.elo0 = 3, .elo1 = 2}).ok());
  EXPECT_FALSE(ValidateSprtParams({.alpha = 0}).ok());
  EXPECT_FALSE(ValidateSprtParams({.beta = 1}).ok());
  EXPECT_FALSE(ValidateSprtParams({.alpha = 0.6, .beta = 0.5}).ok());
  EXPECT_FALSE(ValidateSprtParams({.elo1 = NAN}).ok());
  const absl::Status s = ValidateSprtParams({.elo0 = 3, .elo1 = 2});
  EXPECT_NE(std::string(s.message()).find("elo0 (3) must be less than elo1 (2)"), std::string::npos)
      << s;
  // Invalid params never decide.
  const SprtResult r = EvaluateSprt(Wld(1000, 0, 0), {.elo0 = 5, .elo1 = 0});
  EXPECT_EQ(r.llr, 0);
  EXPECT_EQ(r.decision, SprtDecision::kContinue);
}

TEST(SprtModel, NamesRoundTrip) {
  for (SprtModel m : {SprtModel::kLogistic, SprtModel::kNormalized, SprtModel::kBayesElo}) {
    absl::StatusOr<SprtModel> parsed = ParseSprtModel(SprtModelName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  EXPECT_FALSE(ParseSprtModel("bayesian").ok());
}

// Swapping the engines mirrors the hypotheses: LLR(swapped; -elo1, -elo0) = -LLR(counts; elo0,
// elo1). With symmetric bounds the LLR is simply negated.
TEST(SprtProperties, SwappingEnginesNegatesLlr) {
  const Trinomial tri = Wld(1210, 1105, 2330);
  const Pentanomial pen{{31, 402, 1010, 460, 40}};
  for (SprtModel model : {SprtModel::kLogistic, SprtModel::kNormalized, SprtModel::kBayesElo}) {
    SCOPED_TRACE(std::string(SprtModelName(model)));
    const SprtParams p{.elo0 = -1, .elo1 = 4, .model = model};
    const SprtParams mirrored{.elo0 = -4, .elo1 = 1, .model = model};
    const double a = EvaluateSprt(tri, p).llr;
    EXPECT_NE(a, 0);
    EXPECT_NEAR(EvaluateSprt(tri.Reversed(), mirrored).llr, -a, 1e-9 * (1 + std::abs(a)));
    const double b = EvaluateSprt(pen, p).llr;
    EXPECT_NEAR(EvaluateSprt(pen.Reversed(), mirrored).llr, -b, 1e-9 * (1 + std::abs(b)));
    const SprtParams symmetric{.elo0 = -3, .elo1 = 3, .model = model};
    const double c = EvaluateSprt(pen, symmetric).llr;
    EXPECT_NEAR(EvaluateSprt(pen.Reversed(), symmetric).llr, -c, 1e-9 * (1 + std::abs(c)));
  }
}

// Symmetric results carry no evidence either way between symmetric hypotheses.
TEST(SprtProperties, SymmetricCountsGiveZeroLlrForSymmetricBounds) {
  for (SprtModel model : {SprtModel::kLogistic, SprtModel::kNormalized, SprtModel::kBayesElo}) {
    const SprtParams p{.elo0 = -2, .elo1 = 2, .model = model};
    EXPECT_NEAR(EvaluateSprt(Wld(500, 500, 700), p).llr, 0, 1e-9);
    EXPECT_NEAR(EvaluateSprt(Pentanomial{{20, 300, 700, 300, 20}}, p).llr, 0, 1e-9);
  }
}

// Zero counts are regularised: the very first results give finite LLRs.
TEST(SprtProperties, EarlyLlrsAreFinite) {
  for (SprtModel model : {SprtModel::kLogistic, SprtModel::kNormalized}) {
    const SprtParams p{.elo0 = 0, .elo1 = 2, .model = model};
    EXPECT_TRUE(std::isfinite(EvaluateSprt(Wld(1, 0, 0), p).llr));
    EXPECT_TRUE(std::isfinite(EvaluateSprt(Wld(0, 0, 0), p).llr));
    EXPECT_TRUE(std::isfinite(EvaluateSprt(Pentanomial{{0, 0, 1, 0, 0}}, p).llr));
    EXPECT_TRUE(std::isfinite(EvaluateSprt(Pentanomial{}, p).llr));
  }
}

// With no draws and no correlation, a pentanomial made of independent games carries the same
// information as its games: the two LLRs agree closely.
TEST(SprtProperties, IndependentPairsAgreeWithTheirGames) {
  // Independent games at p(win) = 0.52, no draws: pairs 0, 1, 2 wins with binomial weights.
  const double w = 0.52, l = 0.48, pairs = 100000;
  const Pentanomial pen{{static_cast<uint64_t>(pairs * l * l), 0,
                         static_cast<uint64_t>(pairs * 2 * w * l), 0,
                         static_cast<uint64_t>(pairs * w * w)}};
  const Trinomial tri =
      Wld(2 * pen.counts[4] + pen.counts[2], 2 * pen.counts[0] + pen.counts[2], 0);
  const SprtParams p{.elo0 = 0, .elo1 = 10, .model = SprtModel::kLogistic};
  const double a = EvaluateSprt(tri, p).llr, b = EvaluateSprt(pen, p).llr;
  EXPECT_GT(a, 10);
  EXPECT_NEAR(b, a, 0.01 * a);
}

// Bounds far from the data (nElo 500 is t = 1.4) still give finite LLRs of the right sign.
TEST(SprtProperties, WideNormalizedBoundsStayFinite) {
  const SprtParams wide{.elo0 = -500, .elo1 = 500, .model = SprtModel::kNormalized};
  EXPECT_NEAR(EvaluateSprt(Wld(10, 10, 10), wide).llr, 0, 1e-9);
  const double up = EvaluateSprt(Pentanomial{{1, 2, 3, 4, 5}}, wide).llr;
  EXPECT_TRUE(std::isfinite(up));
  EXPECT_GT(up, 0);
  const double down = EvaluateSprt(Wld(3, 40, 12), {.elo0 = -3000, .elo1 = 3000}).llr;
  EXPECT_TRUE(std::isfinite(down));
  EXPECT_LT(down, 0);
}

// When H0 is the data's own Elo, the constrained MLE under H0 is the data itself, so the LLR is
// minus N times a Kullback-Leibler divergence: never positive, and zero only at H1 = H0.
TEST(GeneralizedLlr, NothingBeatsTheDataItself) {
  const double scores[5] = {0, 0.25, 0.5, 0.75, 1}, counts[5] = {30, 410, 980, 520, 45};
  double n = 0, mu = 0, var = 0;
  for (int i = 0; i < 5; ++i) n += counts[i];
  for (int i = 0; i < 5; ++i) mu += scores[i] * counts[i] / n;
  for (int i = 0; i < 5; ++i) var += (scores[i] - mu) * (scores[i] - mu) * counts[i] / n;
  const double t_hat = (mu - 0.5) / std::sqrt(var);
  EXPECT_NEAR(GeneralizedLlrNormalized(scores, counts, t_hat, t_hat), 0, 1e-9);
  EXPECT_NEAR(GeneralizedLlrLogistic(scores, counts, mu, mu), 0, 1e-9);
  for (double delta : {-0.2, -0.01, 0.01, 0.3}) {
    EXPECT_LT(GeneralizedLlrNormalized(scores, counts, t_hat, t_hat + delta), 0) << delta;
    EXPECT_LT(GeneralizedLlrLogistic(scores, counts, mu, mu + delta / 4), 0) << delta;
  }
}

// Brute force on game counts: under either constraint the trinomial distributions form a curve
// parametrised by the draw probability d, so the constrained maximum likelihood is a 1-D search.
//   logistic "mean = s":         w - l = 2s - 1
//   normalized "(mu-1/2)/sigma = t": sigma^2 = (1 - d - u^2)/4 with u = w - l, so
//                                   u = t sqrt((1 - d) / (1 + t^2))
double MaxLogLikelihood(const double (&counts)[3], auto win_minus_loss) {
  auto loglik = [&](double d) -> double {
    const double u = win_minus_loss(d);
    const double w = (1 - d + u) / 2, l = (1 - d - u) / 2;
    if (!(w > 0 && l > 0)) return -HUGE_VAL;
    return counts[0] * std::log(l) + counts[1] * std::log(d) + counts[2] * std::log(w);
  };
  // Golden-section search on d in (0, 1); the log-likelihood is unimodal along the curve.
  double a = 1e-12, b = 1 - 1e-12;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double c = b - g * (b - a), e = a + g * (b - a);
    (loglik(c) > loglik(e) ? b : a) = loglik(c) > loglik(e) ? e : c;
  }
  return loglik((a + b) / 2);
}

TEST(GeneralizedLlr, AgreesWithBruteForceOnGameCounts) {
  const double scores[3] = {0, 0.5, 1};
  for (const auto& counts :
       {std::array<double, 3>{1210, 2330, 1105}, std::array<double, 3>{400, 150, 520},
        std::array<double, 3>{36027, 68692, 36433}}) {
    const double c[3] = {counts[0], counts[1], counts[2]};
    for (double t1 : {0.005, 0.02, -0.03}) {
      const double t0 = -0.01;
      auto normalized = [](double t) {
        return [t](double d) { return t * std::sqrt((1 - d) / (1 + t * t)); };
      };
      const double brute =
          MaxLogLikelihood(c, normalized(t1)) - MaxLogLikelihood(c, normalized(t0));
      EXPECT_NEAR(GeneralizedLlrNormalized(scores, c, t0, t1), brute, 1e-6 * (1 + std::abs(brute)));
      const double s0 = 0.499, s1 = 0.5 + t1;
      auto logistic = [](double s) { return [s](double) { return 2 * s - 1; }; };
      const double brute_l = MaxLogLikelihood(c, logistic(s1)) - MaxLogLikelihood(c, logistic(s0));
      EXPECT_NEAR(GeneralizedLlrLogistic(scores, c, s0, s1), brute_l,
                  1e-6 * (1 + std::abs(brute_l)));
    }
  }
}

// Results all (or nearly all) of one kind, the other counts regularised to 1e-3, put the
// constrained MLE next to a pole of its Lagrange multiplier, where the last bits of rounding
// (FMA contraction under -march=native) once decided whether the fixed point converged at all.
// Reference LLRs computed independently at 60 significant digits (mpmath: the plain fixed point
// from the uniform start, bisection for the multiplier). For pair score 1 alone the likelihood
// has two local maxima (the missing mass on pair score 1.5 or on 2); the higher one counts.
TEST(GeneralizedLlr, OneOutcomeDataMatchHighPrecisionValues) {
  struct Case {
    Trinomial tri;
    Pentanomial pen;
    bool penta;
    double elo1, llr;
  };
  const Case cases[] = {
      {Wld(4250, 0, 0), {}, false, 10, 120.54826774120332},
      {Wld(0, 1000000000, 0), {}, false, 10, -29192380.475514706},
      {Wld(0, 0, 1000000000), {}, false, 10, -828078.60785095124},
      {Wld(1000000, 0, 1000000), {}, false, 10, 39978.485770317927},
      {Wld(1, 0, 0), {}, false, 2, 0.0057369491137422309},
      {{}, {{0, 0, 0, 0, 5550}}, true, 5, 111.79755508671416},
      {{}, {{100000, 0, 0, 0, 0}}, true, 5, -2055.7827038472145},
      {{}, {{0, 100000, 0, 0, 0}}, true, 5, -1459.8095013864147},
      {{}, {{0, 0, 100000, 0, 0}}, true, 5, -41.401683909066182},
      {{}, {{0, 0, 0, 100000, 0}}, true, 5, 1418.3969972131184},
  };
  for (const Case& c : cases) {
    const SprtParams params{.elo0 = 0, .elo1 = c.elo1, .model = SprtModel::kNormalized};
    const double llr = c.penta ? EvaluateSprt(c.pen, params).llr : EvaluateSprt(c.tri, params).llr;
    EXPECT_NEAR(llr, c.llr, 1e-9 * std::abs(c.llr)) << c.llr;
  }
}

// Every one-outcome data set, small to huge, with near and far bounds: a finite LLR that favours
// the hypothesis on the data's side.
TEST(GeneralizedLlr, OneOutcomeDataGiveFiniteLlrs) {
  for (uint64_t n : {uint64_t{1}, uint64_t{10000}, uint64_t{1000000000000}}) {
    for (const auto& [elo0, elo1] : {std::pair{0.0, 5.0}, std::pair{-500.0, 500.0}}) {
      const SprtParams params{.elo0 = elo0, .elo1 = elo1, .model = SprtModel::kNormalized};
      for (int k = 0; k < 5; ++k) {
        Pentanomial pen;
        pen.counts[k] = n;
        const double llr = EvaluateSprt(pen, params).llr;
        ASSERT_TRUE(std::isfinite(llr)) << n << " pairs of score " << k << ", " << elo1;
        if (n > 1 && k != 2) {
          EXPECT_EQ(llr > 0, k > 2) << n << " pairs of score " << k;
        }
      }
      for (int k = 0; k < 3; ++k) {
        Trinomial tri;
        (k == 0 ? tri.losses : k == 1 ? tri.draws : tri.wins) = n;
        const double llr = EvaluateSprt(tri, params).llr;
        ASSERT_TRUE(std::isfinite(llr)) << n << " games of result " << k << ", " << elo1;
        if (n > 1 && k != 1) {
          EXPECT_EQ(llr > 0, k > 1) << n << " games of result " << k;
        }
      }
    }
  }
}

// The building block on its own: the logistic MLE meets its constraint.
TEST(GeneralizedLlr, LogisticMatchesClosedFormForTwoOutcomes) {
  // With outcomes {0, 1} the constrained MLE is Bernoulli(s): LLR = W ln(s1/s0) + L ln(...).
  const double scores[2] = {0, 1}, counts[2] = {40, 60};
  const double s0 = 0.5, s1 = 0.55;
  const double expected = 60 * std::log(s1 / s0) + 40 * std::log((1 - s1) / (1 - s0));
  EXPECT_NEAR(GeneralizedLlrLogistic(scores, counts, s0, s1), expected, 1e-12);
}

}  // namespace
}  // namespace arbiter::stats

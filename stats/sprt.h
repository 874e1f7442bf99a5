// Sequential probability ratio tests on match results.
//
//   SprtParams params{.elo0 = 0, .elo1 = 2, .alpha = 0.05, .beta = 0.05};
//   SprtResult r = EvaluateSprt(pentanomial, params);   // r.llr in [r.lower, r.upper] -> continue
//
// kLogistic and kNormalized are the generalized SPRT (GSPRT) of fishtest and fastchess: the
// results are a multinomial, and the LLR compares the maximum likelihood of the data under the
// constraint "Elo = elo1" against "Elo = elo0" (logistic Elo for kLogistic, normalized Elo for
// kNormalized). kBayesElo is cutechess-cli's legacy test on game counts.
#pragma once

#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "stats/counts.h"
#include "stats/elo.h"

namespace arbiter::stats {

enum class SprtModel { kLogistic, kNormalized, kBayesElo };
// Hypotheses: H0 "Elo = elo0", H1 "Elo = elo1" (Elo in the model's unit: logistic Elo, nElo, or
// BayesElo for kBayesElo); alpha and beta are the false-positive and false-negative rates.
struct SprtParams {
  double elo0 = 0, elo1 = 2, alpha = 0.05, beta = 0.05;
  SprtModel model = SprtModel::kNormalized;
};
enum class SprtDecision { kContinue, kAcceptH0, kAcceptH1 };
// The log-likelihood ratio log L(H1)/L(H0) and Wald's bounds; decided once llr leaves them.
struct SprtResult {
  double llr = 0, lower = 0, upper = 0;
  SprtDecision decision = SprtDecision::kContinue;
};

// "logistic", "normalized", "bayeselo".
std::string_view SprtModelName(SprtModel model);
absl::StatusOr<SprtModel> ParseSprtModel(std::string_view name);
std::string_view SprtDecisionName(SprtDecision decision);

// elo0 < elo1, 0 < alpha, beta < 1, alpha + beta < 1, all finite.
absl::Status ValidateSprtParams(const SprtParams& params);

// Wald's bounds (Wald 1945): lower = ln(beta / (1 - alpha)), upper = ln((1 - beta) / alpha).
struct SprtBounds {
  double lower = 0, upper = 0;
};
SprtBounds SprtLlrBounds(double alpha, double beta);
// kAcceptH1 when llr >= upper, kAcceptH0 when llr <= lower, else kContinue.
SprtDecision DecideSprt(double llr, const SprtBounds& bounds);

// The SPRT on pair counts (kLogistic: Elo bounds; kNormalized: nElo bounds, t = sqrt(2) nElo /
// (800/ln 10) since a pair holds two games). kBayesElo is a game-count model: pentanomial counts
// are turned into game counts with each pair scoring 1 counted as two draws (prefer trinomial).
// Invalid params (see ValidateSprtParams) give llr 0 and kContinue.
SprtResult EvaluateSprt(const Pentanomial& counts, const SprtParams& params);
// The SPRT on game counts (kNormalized: t = nElo / (800/ln 10)).
SprtResult EvaluateSprt(const Trinomial& counts, const SprtParams& params);

// --- The building blocks, exposed for tests and for callers with their own counts. ---

// Generalized LLR for "mean score = s1" vs "= s0" on a multinomial with outcome scores
// `scores` (in [0,1]) and counts `counts` (zeros must already be regularised). Each hypothesis's
// MLE is p_i = phat_i / (1 + theta (a_i - s)), with theta the root of
// sum phat_i (a_i - s) / (1 + theta (a_i - s)) = 0; LLR = N sum phat_i ln(p1_i / p0_i).
// (Van den Bergh, "Comments on Normalized Elo", prop. 1.1; fishtest LLRcalc.LLR_logistic.)
double GeneralizedLlrLogistic(std::span<const double> scores, std::span<const double> counts,
                              double s0, double s1);
// Generalized LLR for "(mu - 1/2) / sigma = t1" vs "= t0": the constrained MLE is the fixed point
// of p_i = phat_i / (1 + theta phi_i), phi_i = a_i - 1/2 - t sigma (1 + ((a_i - mu)/sigma)^2) / 2.
// (Van den Bergh, "Comments on Normalized Elo", section 4.1; fishtest LLRcalc.LLR_normalized.)
double GeneralizedLlrNormalized(std::span<const double> scores, std::span<const double> counts,
                                double t0, double t1);

// BayesElo fit of game counts (Coulom, bayeselo; cutechess-cli sprt.cpp): with pw, pl the win and
// loss frequencies, elo = 200 log10(pw/pl (1-pl)/(1-pw)), draw_elo = 200 log10((1-pl)/pl
// (1-pw)/pw).
struct BayesEloFit {
  double elo = 0, draw_elo = 0;
};
BayesEloFit FitBayesElo(const Trinomial& counts);
// cutechess-cli's SPRT: draw_elo from the data, the hypotheses elo_k / scale with
// scale = 4x/(1+x)^2, x = 10^(-draw_elo/400), P(win) = 1/(1+10^((draw_elo - elo)/400)),
// P(loss) = 1/(1+10^((draw_elo + elo)/400)); LLR = sum count ln(p1/p0). 0 until W, D, L > 0.
double BayesEloLlr(const Trinomial& counts, double elo0, double elo1);

// Zero counts become 1e-3 so early LLRs stay finite (fishtest's regularisation).
double RegularizedCount(uint64_t count);

}  // namespace arbiter::stats

#include "match/stats_report.h"

#include "absl/strings/str_format.h"
#include "base/strings.h"
#include "stats/elo.h"

namespace arbiter::match {

v1::SprtModel SprtModelToProto(stats::SprtModel m) {
  switch (m) {
    case stats::SprtModel::kLogistic:
      return v1::SPRT_MODEL_LOGISTIC;
    case stats::SprtModel::kNormalized:
      return v1::SPRT_MODEL_NORMALIZED;
    case stats::SprtModel::kBayesElo:
      return v1::SPRT_MODEL_BAYESELO;
  }
  return v1::SPRT_MODEL_UNSPECIFIED;
}

v1::SprtSpec SprtSpecOf(const stats::SprtParams& params) {
  v1::SprtSpec spec;
  spec.set_elo0(params.elo0);
  spec.set_elo1(params.elo1);
  spec.set_alpha(params.alpha);
  spec.set_beta(params.beta);
  spec.set_model(SprtModelToProto(params.model));
  return spec;
}

stats::SprtParams SprtParamsOf(const v1::SprtSpec& spec) {
  stats::SprtParams p;
  p.elo0 = spec.elo0();
  p.elo1 = spec.elo1();
  p.alpha = spec.alpha();
  p.beta = spec.beta();
  p.model = spec.model() == v1::SPRT_MODEL_LOGISTIC   ? stats::SprtModel::kLogistic
            : spec.model() == v1::SPRT_MODEL_BAYESELO ? stats::SprtModel::kBayesElo
                                                      : stats::SprtModel::kNormalized;
  return p;
}

namespace {

v1::SprtDecision ToProto(stats::SprtDecision d) {
  switch (d) {
    case stats::SprtDecision::kContinue:
      return v1::SPRT_DECISION_CONTINUE;
    case stats::SprtDecision::kAcceptH0:
      return v1::SPRT_DECISION_ACCEPT_H0;
    case stats::SprtDecision::kAcceptH1:
      return v1::SPRT_DECISION_ACCEPT_H1;
  }
  return v1::SPRT_DECISION_UNSPECIFIED;
}

void FillEstimate(const stats::EloEstimate& e, v1::StatsReport& r) {
  r.set_games(e.games);
  r.set_score(e.score);
  r.set_draw_ratio(e.draw_ratio);
  r.set_elo(e.elo);
  r.set_elo_error95(e.elo_error95);
  r.set_elo_lower95(e.elo_lower95);
  r.set_elo_upper95(e.elo_upper95);
  r.set_nelo(e.nelo);
  r.set_nelo_error95(e.nelo_error95);
  r.set_los(e.los);
}

void FillSprt(const stats::SprtParams& p, const stats::SprtResult& s, v1::SprtReport& out) {
  out.set_model(SprtModelToProto(p.model));
  out.set_elo0(p.elo0);
  out.set_elo1(p.elo1);
  out.set_alpha(p.alpha);
  out.set_beta(p.beta);
  out.set_llr(s.llr);
  out.set_lower_bound(s.lower);
  out.set_upper_bound(s.upper);
  out.set_decision(ToProto(s.decision));
}

std::string_view ModelName(v1::SprtModel m) {
  switch (m) {
    case v1::SPRT_MODEL_LOGISTIC:
      return "logistic";
    case v1::SPRT_MODEL_NORMALIZED:
      return "normalized";
    case v1::SPRT_MODEL_BAYESELO:
      return "bayeselo";
    default:
      return "?";
  }
}

std::string_view DecisionText(v1::SprtDecision d) {
  switch (d) {
    case v1::SPRT_DECISION_ACCEPT_H0:
      return "H0 accepted";
    case v1::SPRT_DECISION_ACCEPT_H1:
      return "H1 accepted";
    default:
      return "continue";
  }
}

}  // namespace

v1::StatsReport MakeStatsReport(const stats::Trinomial& t, const stats::SprtParams* sprt) {
  v1::StatsReport report;
  report.mutable_wdl()->set_wins(t.wins);
  report.mutable_wdl()->set_draws(t.draws);
  report.mutable_wdl()->set_losses(t.losses);
  const uint64_t games = t.wins + t.draws + t.losses;
  report.set_game_draw_ratio(games > 0 ? double(t.draws) / double(games) : 0.0);
  FillEstimate(stats::EstimateElo(t), report);
  if (sprt != nullptr) {
    FillSprt(*sprt, stats::EvaluateSprt(t, *sprt), *report.mutable_sprt());
    if (sprt->model == stats::SprtModel::kBayesElo && t.wins > 0 && t.losses > 0) {
      const stats::BayesEloFit fit = stats::FitBayesElo(t);
      report.mutable_sprt()->set_bayes_elo(fit.elo);
      report.mutable_sprt()->set_draw_elo(fit.draw_elo);
    }
  }
  return report;
}

v1::StatsReport MakeStatsReport(const stats::Pentanomial& p, const stats::SprtParams* sprt) {
  v1::StatsReport report;
  v1::PentanomialCounts* pc = report.mutable_penta();
  pc->set_ll(p.counts[0]);
  pc->set_ld(p.counts[1]);
  pc->set_d(p.counts[2]);
  pc->set_wd(p.counts[3]);
  pc->set_ww(p.counts[4]);
  report.set_pairs(p.Pairs());
  FillEstimate(stats::EstimateElo(p), report);
  if (sprt != nullptr) FillSprt(*sprt, stats::EvaluateSprt(p, *sprt), *report.mutable_sprt());
  return report;
}

std::string FormatStatsReport(const v1::StatsReport& r) {
  std::string out;
  if (r.has_wdl()) {
    out += absl::StrFormat("Games: %d (W %d, D %d, L %d), score %.2f %%, draw ratio %.2f %%\n",
                           r.games(), r.wdl().wins(), r.wdl().draws(), r.wdl().losses(),
                           100 * r.score(), 100 * r.draw_ratio());
  } else {
    const v1::PentanomialCounts& p = r.penta();
    out += absl::StrFormat(
        "Games: %d (%d pairs), Ptnml(0-2): [%d, %d, %d, %d, %d], score %.2f %%, "
        "pair draw ratio %.2f %%\n",
        r.games(), r.pairs(), p.ll(), p.ld(), p.d(), p.wd(), p.ww(), 100 * r.score(),
        100 * r.draw_ratio());
  }
  out += absl::StrFormat("Elo: %.2f +/- %.2f (95%% CI %.2f to %.2f)\n", r.elo(), r.elo_error95(),
                         r.elo_lower95(), r.elo_upper95());
  out += absl::StrFormat("nElo: %.2f +/- %.2f\n", r.nelo(), r.nelo_error95());
  out += absl::StrFormat("LOS: %.2f %%\n", 100 * r.los());
  if (r.has_sprt()) {
    const v1::SprtReport& s = r.sprt();
    out += absl::StrFormat("SPRT (%s, [%.2f, %.2f], alpha %g, beta %g): LLR %.2f (%.2f, %.2f)",
                           ModelName(s.model()), s.elo0(), s.elo1(), s.alpha(), s.beta(), s.llr(),
                           s.lower_bound(), s.upper_bound());
    out += Cat(" - ", DecisionText(s.decision()), "\n");
    if (s.model() == v1::SPRT_MODEL_BAYESELO && s.draw_elo() != 0) {
      out += absl::StrFormat("BayesElo: %.2f, draw Elo %.2f\n", s.bayes_elo(), s.draw_elo());
    }
  }
  return out;
}

}  // namespace arbiter::match

// `arbiter stats`: Elo, nElo, LOS and the SPRT for given match counts.
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "proto/arbiter/v1/stats.pb.h"
#include "stats/elo.h"
#include "stats/sprt.h"

namespace arbiter::cli {
namespace {

struct StatsFlags {
  std::string penta, wdl, model = "normalized";
  std::optional<double> elo0, elo1;
  double alpha = 0.05, beta = 0.05;
  bool json = false;
};

// Counts stay exact as doubles and their sums cannot overflow.
constexpr uint64_t kMaxCount = uint64_t{1} << 53;

// "a,b,c" -> counts; `flag` and `layout` name the flag and its expected fields in errors.
absl::StatusOr<std::vector<uint64_t>> ParseCounts(std::string_view text, std::string_view flag,
                                                  std::string_view layout, size_t expected) {
  std::vector<std::string_view> parts = Split(text, ',');
  if (parts.size() != expected) {
    return absl::InvalidArgumentError(Cat(flag, " needs ", expected, " counts ", layout,
                                          " separated by commas, got ", parts.size(), " ('", text,
                                          "')"));
  }
  std::vector<uint64_t> counts;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string_view part = Strip(parts[i]);
    if (!part.empty() && part[0] == '-') {
      return absl::InvalidArgumentError(Cat(flag, " count ", i + 1, " ('", part,
                                            "') is negative; counts are whole numbers >= 0"));
    }
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) {
      return absl::InvalidArgumentError(
          Cat(flag, " count ", i + 1, " ('", part, "') is not a whole number"));
    }
    if (value > kMaxCount) {
      return absl::InvalidArgumentError(
          Cat(flag, " count ", i + 1, " ('", part, "') is too large (at most ", kMaxCount, ")"));
    }
    counts.push_back(value);
  }
  return counts;
}

v1::SprtModel ToProto(stats::SprtModel m) {
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
  out.set_model(ToProto(p.model));
  out.set_elo0(p.elo0);
  out.set_elo1(p.elo1);
  out.set_alpha(p.alpha);
  out.set_beta(p.beta);
  out.set_llr(s.llr);
  out.set_lower_bound(s.lower);
  out.set_upper_bound(s.upper);
  out.set_decision(ToProto(s.decision));
}

absl::StatusOr<v1::StatsReport> BuildReport(const StatsFlags& f) {
  if (f.penta.empty() == f.wdl.empty()) {
    return absl::InvalidArgumentError("give exactly one of --penta LL,LD,D,WD,WW or --wdl W,D,L");
  }
  if (f.elo0.has_value() != f.elo1.has_value()) {
    return absl::InvalidArgumentError("the SPRT needs both --elo0 and --elo1");
  }
  const bool sprt = f.elo0.has_value();
  absl::StatusOr<stats::SprtModel> model = stats::ParseSprtModel(f.model);
  if (!model.ok())
    return absl::InvalidArgumentError(Cat("--model: ", std::string(model.status().message())));
  stats::SprtParams params{.alpha = f.alpha, .beta = f.beta, .model = *model};
  if (sprt) {
    params.elo0 = *f.elo0;
    params.elo1 = *f.elo1;
    if (absl::Status s = stats::ValidateSprtParams(params); !s.ok()) return s;
  }

  v1::StatsReport report;
  if (!f.wdl.empty()) {
    absl::StatusOr<std::vector<uint64_t>> c = ParseCounts(f.wdl, "--wdl", "W,D,L", 3);
    if (!c.ok()) return c.status();
    const stats::Trinomial t{.losses = (*c)[2], .draws = (*c)[1], .wins = (*c)[0]};
    if (t.Games() == 0) return absl::InvalidArgumentError("--wdl: no games (all counts are 0)");
    report.mutable_wdl()->set_wins(t.wins);
    report.mutable_wdl()->set_draws(t.draws);
    report.mutable_wdl()->set_losses(t.losses);
    FillEstimate(stats::EstimateElo(t), report);
    if (sprt) {
      FillSprt(params, stats::EvaluateSprt(t, params), *report.mutable_sprt());
      if (params.model == stats::SprtModel::kBayesElo && t.wins > 0 && t.losses > 0) {
        const stats::BayesEloFit fit = stats::FitBayesElo(t);
        report.mutable_sprt()->set_bayes_elo(fit.elo);
        report.mutable_sprt()->set_draw_elo(fit.draw_elo);
      }
    }
  } else {
    absl::StatusOr<std::vector<uint64_t>> c = ParseCounts(f.penta, "--penta", "LL,LD,D,WD,WW", 5);
    if (!c.ok()) return c.status();
    stats::Pentanomial p;
    for (int i = 0; i < 5; ++i) p.counts[i] = (*c)[i];
    if (p.Pairs() == 0) return absl::InvalidArgumentError("--penta: no pairs (all counts are 0)");
    if (sprt && params.model == stats::SprtModel::kBayesElo) {
      return absl::InvalidArgumentError(
          "--model bayeselo needs game counts (--wdl W,D,L): pair counts do not tell two draws "
          "from a win and a loss");
    }
    v1::PentanomialCounts* pc = report.mutable_penta();
    pc->set_ll(p.counts[0]);
    pc->set_ld(p.counts[1]);
    pc->set_d(p.counts[2]);
    pc->set_wd(p.counts[3]);
    pc->set_ww(p.counts[4]);
    report.set_pairs(p.Pairs());
    FillEstimate(stats::EstimateElo(p), report);
    if (sprt) FillSprt(params, stats::EvaluateSprt(p, params), *report.mutable_sprt());
  }
  return report;
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

void PrintText(const v1::StatsReport& r) {
  if (r.has_wdl()) {
    std::cout << absl::StrFormat(
        "Games: %d (W %d, D %d, L %d), score %.2f %%, draw ratio %.2f %%\n", r.games(),
        r.wdl().wins(), r.wdl().draws(), r.wdl().losses(), 100 * r.score(), 100 * r.draw_ratio());
  } else {
    const v1::PentanomialCounts& p = r.penta();
    std::cout << absl::StrFormat(
        "Games: %d (%d pairs), Ptnml(0-2): [%d, %d, %d, %d, %d], score %.2f %%, "
        "pair draw ratio %.2f %%\n",
        r.games(), r.pairs(), p.ll(), p.ld(), p.d(), p.wd(), p.ww(), 100 * r.score(),
        100 * r.draw_ratio());
  }
  std::cout << absl::StrFormat("Elo: %.2f +/- %.2f (95%% CI %.2f to %.2f)\n", r.elo(),
                               r.elo_error95(), r.elo_lower95(), r.elo_upper95());
  std::cout << absl::StrFormat("nElo: %.2f +/- %.2f\n", r.nelo(), r.nelo_error95());
  std::cout << absl::StrFormat("LOS: %.2f %%\n", 100 * r.los());
  if (r.has_sprt()) {
    const v1::SprtReport& s = r.sprt();
    std::cout << absl::StrFormat(
        "SPRT (%s, [%.2f, %.2f], alpha %g, beta %g): LLR %.2f (%.2f, %.2f)", ModelName(s.model()),
        s.elo0(), s.elo1(), s.alpha(), s.beta(), s.llr(), s.lower_bound(), s.upper_bound());
    std::cout << " - " << DecisionText(s.decision()) << "\n";
    if (s.model() == v1::SPRT_MODEL_BAYESELO && s.draw_elo() != 0) {
      std::cout << absl::StrFormat("BayesElo: %.2f, draw Elo %.2f\n", s.bayes_elo(), s.draw_elo());
    }
  }
}

}  // namespace

void AddStatsCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<StatsFlags>();
  CLI::App* cmd = app.add_subcommand(
      "stats", "Elo, nElo, LOS and the SPRT for match counts (first engine's point of view)");
  cmd->add_option("--penta", flags->penta,
                  "Pair counts LL,LD,D,WD,WW (pair score 0, 1/2, 1, 3/2, 2; worst first)");
  cmd->add_option("--wdl", flags->wdl, "Game counts W,D,L (wins, draws, losses)");
  cmd->add_option("--elo0", flags->elo0, "SPRT: Elo under H0 (in the model's unit)");
  cmd->add_option("--elo1", flags->elo1, "SPRT: Elo under H1 (greater than elo0)");
  cmd->add_option("--alpha", flags->alpha, "SPRT: false-positive rate (default 0.05)");
  cmd->add_option("--beta", flags->beta, "SPRT: false-negative rate (default 0.05)");
  cmd->add_option("--model", flags->model,
                  "SPRT model: logistic (Elo), normalized (nElo, default), bayeselo (cutechess)");
  cmd->add_flag("--json", flags->json, "Print a StatsReport as JSON (protobuf mapping)");
  cmd->callback([flags, &exit_code] {
    absl::StatusOr<v1::StatsReport> report = BuildReport(*flags);
    if (!report.ok()) {
      std::cerr << "error: " << report.status().message() << "\n";
      exit_code = 2;
      return;
    }
    if (flags->json) {
      std::cout << ToJson(*report) << "\n";
    } else {
      PrintText(*report);
    }
    exit_code = 0;
  });
}

}  // namespace arbiter::cli

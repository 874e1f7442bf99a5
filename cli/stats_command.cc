// `arbiter stats`: Elo, nElo, LOS and the SPRT for given match counts.
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "match/stats_report.h"
#include "proto/arbiter/v1/stats.pb.h"
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

  const stats::SprtParams* sprt_params = sprt ? &params : nullptr;
  if (!f.wdl.empty()) {
    absl::StatusOr<std::vector<uint64_t>> c = ParseCounts(f.wdl, "--wdl", "W,D,L", 3);
    if (!c.ok()) return c.status();
    const stats::Trinomial t{.losses = (*c)[2], .draws = (*c)[1], .wins = (*c)[0]};
    if (t.Games() == 0) return absl::InvalidArgumentError("--wdl: no games (all counts are 0)");
    return match::MakeStatsReport(t, sprt_params);
  }
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
  return match::MakeStatsReport(p, sprt_params);
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
      std::cout << match::FormatStatsReport(*report);
    }
    exit_code = 0;
  });
}

}  // namespace arbiter::cli

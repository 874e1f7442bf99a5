#include "coordinator/match_run.h"

#include <algorithm>

#include "base/strings.h"
#include "engine/rules.h"
#include "net/sha256.h"
#include "stats/elo.h"

namespace arbiter::coordinator {
namespace {

// Points of the first engine in a game: 2 = win, 1 = draw, 0 = loss (half points).
int HalfPoints(const std::string& result, bool first_is_white) {
  if (result == "1/2-1/2") return 1;
  const bool white_won = result == "1-0";
  return white_won == first_is_white ? 2 : 0;
}

}  // namespace

absl::Status ValidateMatchRequest(const v1::SubmitMatchRequest& request,
                                  const std::function<bool(const std::string&)>& engine_known) {
  const auto& engines = request.engines();
  if (engines.empty()) return absl::InvalidArgumentError("the engine list is empty");
  if (engines.size() != 2)
    return absl::InvalidArgumentError(Cat("a match needs exactly 2 engines, got ", engines.size()));
  for (int i = 0; i < engines.size(); ++i) {
    const v1::EngineSpec& e = engines[i];
    if (e.name().empty()) return absl::InvalidArgumentError(Cat("engine ", i + 1, " has no name"));
    if (i == 1 && e.name() == engines[0].name())
      return absl::InvalidArgumentError(Cat("both engines are named '", e.name(), "'"));
    switch (e.source_case()) {
      case v1::EngineSpec::SOURCE_NOT_SET:
        return absl::InvalidArgumentError(
            Cat("engine '", e.name(), "' has no source (sha256, builtin or path)"));
      case v1::EngineSpec::kSha256:
        if (!net::IsSha256Hex(e.sha256()))
          return absl::InvalidArgumentError(
              Cat("engine '", e.name(), "': sha256 must be 64 lowercase hex digits"));
        if (!engine_known(e.sha256()))
          return absl::NotFoundError(
              Cat("engine '", e.name(), "': no engine with sha256 ", e.sha256()));
        break;
      case v1::EngineSpec::kPath:
        if (e.path().empty() || e.path()[0] != '/')
          return absl::InvalidArgumentError(
              Cat("engine '", e.name(), "': path must be absolute, got '", e.path(), "'"));
        break;
      case v1::EngineSpec::kBuiltin:
        break;
    }
  }
  if (request.tc().empty()) return absl::InvalidArgumentError("tc (time control) is required");
  if (request.games() % 2 != 0)
    return absl::InvalidArgumentError(
        Cat("games must be even (game pairs), got ", request.games()));
  if (request.games() == 0 && !request.has_sprt())
    return absl::InvalidArgumentError("give a number of games, an sprt, or both");
  if (request.has_sprt()) {
    const v1::SprtSpec& s = request.sprt();
    if (!(s.elo1() > s.elo0()))
      return absl::InvalidArgumentError(
          Cat("sprt: elo1 (", s.elo1(), ") must be above elo0 (", s.elo0(), ")"));
    if (!(s.alpha() > 0 && s.alpha() < 0.5 && s.beta() > 0 && s.beta() < 0.5))
      return absl::InvalidArgumentError("sprt: alpha and beta must be in (0, 0.5)");
    if (!s.model().empty() && s.model() != "normalized" && s.model() != "logistic")
      return absl::InvalidArgumentError(
          Cat("sprt: model must be 'normalized' or 'logistic', got '", s.model(), "'"));
  }
  if (!request.openings().empty()) {
    // One FEN per non-empty line (EPD): each must parse.
    int line_number = 0;
    for (std::string_view line : Split(request.openings(), '\n')) {
      ++line_number;
      line = Strip(line);
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string_view> words = SplitWords(line);
      std::string fen;
      for (size_t i = 0; i < words.size() && i < 4; ++i) fen += Cat(i ? " " : "", words[i]);
      absl::StatusOr<Position> pos = Position::FromFen(fen);
      if (!pos.ok())
        return absl::InvalidArgumentError(
            Cat("openings line ", line_number, ": ", std::string(pos.status().message())));
    }
  }
  if (request.pairs_per_job() > 1000)
    return absl::InvalidArgumentError(
        Cat("pairs_per_job must be at most 1000, got ", request.pairs_per_job()));
  return absl::OkStatus();
}

std::optional<stats::SprtParams> SprtOf(const v1::SubmitMatchRequest& request) {
  if (!request.has_sprt()) return std::nullopt;
  stats::SprtParams p;
  p.elo0 = request.sprt().elo0();
  p.elo1 = request.sprt().elo1();
  p.alpha = request.sprt().alpha();
  p.beta = request.sprt().beta();
  p.model = request.sprt().model() == "logistic" ? stats::SprtModel::kLogistic
                                                 : stats::SprtModel::kNormalized;
  return p;
}

std::vector<v1::MatchJob> PlanMatchJobs(const v1::SubmitMatchRequest& request) {
  const uint64_t games = request.games() > 0 ? request.games() : kMaxSprtGames;
  const uint64_t pairs = games / 2;
  const uint64_t per_job = request.pairs_per_job() > 0 ? request.pairs_per_job() : 2;
  std::vector<v1::MatchJob> jobs;
  for (uint64_t first = 0; first < pairs; first += per_job) {
    v1::MatchJob job;
    *job.mutable_engines() = request.engines();
    job.set_tc(request.tc());
    job.set_openings(request.openings());
    job.set_openings_format("epd");
    job.set_first_pair(first);
    job.set_pairs(uint32_t(std::min(per_job, pairs - first)));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

absl::Status CheckMatchResult(const v1::MatchJob& job, const v1::MatchJobResult& result) {
  if (result.games_size() != 2 * int(job.pairs()))
    return absl::InvalidArgumentError(Cat("match job of ", job.pairs(), " pairs needs ",
                                          2 * job.pairs(), " games, got ", result.games_size()));
  for (int i = 0; i < result.games_size(); ++i) {
    const v1::ReportedGame& g = result.games(i);
    const std::string where = Cat("game ", i + 1, " (pair ", g.pair(), ", game ", g.game(), ")");
    if (g.pair() != job.first_pair() + uint64_t(i / 2) || g.game() != uint32_t(i % 2))
      return absl::InvalidArgumentError(
          Cat(where, ": expected pair ", job.first_pair() + uint64_t(i / 2), ", game ", i % 2));
    if (g.result() != "1-0" && g.result() != "0-1" && g.result() != "1/2-1/2")
      return absl::InvalidArgumentError(Cat(where, ": result '", g.result(), "' is not a result"));
    absl::StatusOr<Game> game = Game::FromFen(g.start_fen());
    if (!game.ok())
      return absl::InvalidArgumentError(
          Cat(where, ": start position: ", std::string(game.status().message())));
    for (int m = 0; m < g.moves_size(); ++m) {
      absl::Status st = game->PlayUci(g.moves(m));
      if (!st.ok())
        return absl::InvalidArgumentError(Cat(where, ": move ", m + 1, " '", g.moves(m),
                                              "' refused: ", std::string(st.message())));
    }
    const GameOutcome outcome = game->Outcome();
    if (g.end() == "normal") {
      if (!outcome.IsOver())
        return absl::InvalidArgumentError(
            Cat(where, ": reported as ended on the board, but the final position is not over"));
      if (ResultString(outcome.result) != g.result())
        return absl::InvalidArgumentError(Cat(where, ": the board says ",
                                              std::string(ResultString(outcome.result)),
                                              ", the report says ", g.result()));
    } else if (outcome.IsOver() && g.end() != "adjudication") {
      return absl::InvalidArgumentError(Cat(where, ": the board ended the game (",
                                            std::string(TerminationName(outcome.termination)),
                                            ") but it is reported as '", g.end(), "'"));
    }
  }
  return absl::OkStatus();
}

void MatchTally::Add(const v1::MatchJobResult& result) {
  for (int i = 0; i + 1 < result.games_size(); i += 2) {
    int pair_points = 0;
    for (int g = 0; g < 2; ++g) {
      const v1::ReportedGame& game = result.games(i + g);
      const int hp = HalfPoints(game.result(), g == 0);
      pair_points += hp;
      (hp == 2 ? trinomial.wins : hp == 1 ? trinomial.draws : trinomial.losses)++;
      terminations[game.end()]++;
    }
    pentanomial.counts[pair_points]++;
  }
}

stats::SprtDecision MatchTally::Fill(const std::optional<stats::SprtParams>& sprt,
                                     v1::MatchRunStatus& out) const {
  out.clear_pentanomial();
  for (uint64_t c : pentanomial.counts) out.add_pentanomial(c);
  out.set_wins(trinomial.wins);
  out.set_draws(trinomial.draws);
  out.set_losses(trinomial.losses);
  out.set_games(trinomial.Games());
  if (pentanomial.Pairs() > 0) {
    stats::EloEstimate e = stats::EstimateElo(pentanomial);
    out.set_elo(e.elo);
    out.set_elo_error95(e.elo_error95);
    out.set_los(e.los);
  }
  out.mutable_terminations()->clear();
  for (const auto& [end, n] : terminations) (*out.mutable_terminations())[end] = n;
  out.set_rejected_results(rejected);
  stats::SprtDecision decision = stats::SprtDecision::kContinue;
  if (sprt) {
    stats::SprtResult r = stats::EvaluateSprt(pentanomial, *sprt);
    out.set_llr(r.llr);
    out.set_llr_lower(r.lower);
    out.set_llr_upper(r.upper);
    decision = r.decision;
    out.set_sprt_decision(decision == stats::SprtDecision::kAcceptH1   ? "H1"
                          : decision == stats::SprtDecision::kAcceptH0 ? "H0"
                                                                       : "");
  }
  return decision;
}

}  // namespace arbiter::coordinator

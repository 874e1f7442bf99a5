#include "match/summary.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/strings.h"
#include "match/stats_report.h"
#include "match/wire.h"

namespace arbiter::match {
namespace {

// Half-points of the first engine in a game where it played `color`.
int HalfPoints(GameResult r, Color color) {
  if (r == GameResult::kDraw) return 1;
  const bool white_won = r == GameResult::kWhiteWins;
  return (white_won == (color == kWhite)) ? 2 : 0;
}

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string TerminationsLine(const std::map<std::string, uint64_t>& terminations) {
  std::string r = "Terminations:";
  for (const auto& [name, n] : terminations) r += Cat(" ", name, " ", n, ";");
  return r + "\n";
}

std::string FaultsLine(const v1::EngineFaults& f) {
  return Cat(f.name(), ": time losses ", f.time_losses(), ", disconnects ", f.disconnects(),
             ", stalls ", f.stalls(), ", illegal moves ", f.illegal_moves(), "\n");
}

}  // namespace

GameCount GameCountOf(const GameRecord& r) {
  return {.result = r.result,
          .end = r.end,
          .faulty = r.faulty,
          .engine_moves = uint64_t(r.engine_moves),
          .think_seconds = double(r.think.count()) / 1e6,
          .wall_seconds = double(r.wall.count()) / 1e6};
}

void MatchSummary::AddPair(const GameCount& first_white, const GameCount& first_black) {
  int half_points = 0;
  for (int g = 0; g < 2; ++g) {
    const GameCount& game = g == 0 ? first_white : first_black;
    const Color first_color = g == 0 ? kWhite : kBlack;
    const int hp = HalfPoints(game.result, first_color);
    half_points += hp;
    (hp == 2 ? trinomial.wins : hp == 1 ? trinomial.draws : trinomial.losses)++;
    terminations[std::string(GameEndName(game.end))]++;
    faults[game.faulty == first_color ? 0 : 1].Add(game.end);
    moves += game.engine_moves;
    think_seconds += game.think_seconds;
    game_loop_seconds += game.wall_seconds;
    ++games;
  }
  pentanomial.counts[half_points]++;
  ++pairs;
}

std::string ProgressLine(const MatchSummary& s, uint64_t planned_games) {
  std::string line = Cat("Games ", s.games);
  if (planned_games) line += Cat("/", planned_games);
  line += Cat(": +", s.trinomial.wins, " =", s.trinomial.draws, " -", s.trinomial.losses);
  line += Cat("  Elo ", Fmt("%.1f", s.elo.elo), " +- ", Fmt("%.1f", s.elo.elo_error95));
  if (s.sprt)
    line += Cat("  LLR ", Fmt("%.2f", s.sprt->llr), " [", Fmt("%.2f", s.sprt->lower), ", ",
                Fmt("%.2f", s.sprt->upper), "]");
  line += Cat("  RSS ", Fmt("%.1f", s.rss_kib / 1024.0), " MiB");
  return line;
}

std::string PairingProgressLine(const MatchSummary& s, uint64_t planned_games) {
  return Cat(s.names[0], " vs ", s.names[1], ": ", ProgressLine(s, planned_games));
}

v1::MatchResult ToMatchResult(const MatchSummary& s, const std::optional<stats::SprtParams>& sprt) {
  v1::MatchResult r;
  r.add_engines(s.names[0]);
  r.add_engines(s.names[1]);
  r.set_games(s.games);
  r.set_pairs(s.pairs);
  r.set_aborted_games(s.aborted_games);
  *r.mutable_stats() = MakeStatsReport(s.pentanomial, sprt ? &*sprt : nullptr);
  v1::TrinomialCounts* wdl = r.mutable_stats()->mutable_wdl();
  wdl->set_wins(s.trinomial.wins);
  wdl->set_draws(s.trinomial.draws);
  wdl->set_losses(s.trinomial.losses);
  const uint64_t wdl_games = s.trinomial.wins + s.trinomial.draws + s.trinomial.losses;
  r.mutable_stats()->set_game_draw_ratio(
      wdl_games > 0 ? double(s.trinomial.draws) / double(wdl_games) : 0.0);
  for (const auto& [k, v] : s.terminations) (*r.mutable_terminations())[k] = v;
  for (int i = 0; i < 2; ++i) *r.add_faults() = FaultsToProto(s.faults[i], s.names[i]);
  r.set_moves(s.moves);
  r.set_seconds(s.seconds);
  r.set_games_per_minute(s.seconds > 0 ? double(s.games) * 60 / s.seconds : 0);
  r.set_overhead_ms_per_move(s.overhead_ms_per_move);
  r.set_game_loop_overhead_ms_per_move(s.game_loop_overhead_ms_per_move);
  if (s.cpu_ms_per_move) r.set_cpu_ms_per_move(*s.cpu_ms_per_move);
  return r;
}

std::string MatchDetails(const v1::MatchResult& m) {
  const v1::TrinomialCounts& t = m.stats().wdl();
  const v1::PentanomialCounts& p = m.stats().penta();
  const double points = double(t.wins()) + double(t.draws()) / 2.0;
  const double losing = double(p.ll() + p.ld());
  std::string r =
      Cat("Wins: ", t.wins(), ", Draws: ", t.draws(), ", Losses: ", t.losses(),
          ", Points: ", Fmt("%.1f", points), ", PairsRatio: ",
          losing > 0 ? Fmt("%.2f", double(p.wd() + p.ww()) / losing) : std::string("inf"), "\n");
  r += Cat("Ptnml(0-2): [", p.ll(), ", ", p.ld(), ", ", p.d(), ", ", p.wd(), ", ", p.ww(),
           "], pairs ", p.ll() + p.ld() + p.d() + p.wd() + p.ww(), "\n");
  const std::map<std::string, uint64_t> terminations(m.terminations().begin(),
                                                     m.terminations().end());
  r += TerminationsLine(terminations);
  for (const v1::EngineFaults& f : m.faults()) r += FaultsLine(f);
  r += Cat("Speed: ", Fmt("%.1f", m.games_per_minute()), " games/min, ", m.moves(),
           " moves, arbiter overhead ", Fmt("%.3f", m.overhead_ms_per_move()),
           " ms/move (game loop ", Fmt("%.3f", m.game_loop_overhead_ms_per_move()), ")");
  if (m.has_cpu_ms_per_move())
    r += Cat(", arbiter CPU ", Fmt("%.3f", m.cpu_ms_per_move()), " ms/move");
  r += "\n";
  return r;
}

std::string TournamentDetails(const v1::TournamentResult& t) {
  std::map<std::string, uint64_t> terminations;
  std::vector<v1::EngineFaults> faults;  // in the order the engines first appear
  for (const v1::MatchResult& m : t.matches()) {
    for (const auto& [name, n] : m.terminations()) terminations[name] += n;
    for (const v1::EngineFaults& f : m.faults()) {
      auto it = std::find_if(faults.begin(), faults.end(),
                             [&](const v1::EngineFaults& e) { return e.name() == f.name(); });
      if (it == faults.end()) {
        faults.push_back(f);
        continue;
      }
      it->set_time_losses(it->time_losses() + f.time_losses());
      it->set_disconnects(it->disconnects() + f.disconnects());
      it->set_stalls(it->stalls() + f.stalls());
      it->set_illegal_moves(it->illegal_moves() + f.illegal_moves());
    }
  }
  std::string r = TerminationsLine(terminations);
  for (const v1::EngineFaults& f : faults) r += FaultsLine(f);
  return r;
}

}  // namespace arbiter::match

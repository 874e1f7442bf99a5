// `arbiter match` (two engines) and `arbiter tournament` (round robin or gauntlet), played in
// this process by match::RunMatch, or with --coordinator as a run on the cluster; both print
// the same report and the same JSON.
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/cpu.h"
#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "cli/cluster_client.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "cli/source_engines.h"
#include "engine/position.h"
#include "match/bench.h"
#include "match/runner.h"
#include "match/stats_report.h"
#include "match/tournament.h"
#include "match/wire.h"
#include "proto/arbiter/v1/match.pb.h"
#include "proto/run_states.h"
#include "stats/ratings.h"

namespace arbiter::cli {
namespace {

struct MatchFlags {
  std::vector<std::string> engines;
  std::string tc;
  uint64_t games = 0;
  std::string sprt;
  std::string openings;
  int opening_plies = -1;
  std::string opening_order = "sequential";
  uint64_t seed = 1;
  int opening_start = 1;
  bool chess960 = false;
  int concurrency = 1;
  std::string pgn_out;
  std::string event;
  int margin_ms = 50;
  int stop_grace_ms = 1000;
  int move_timeout_ms = 60000;
  int handshake_ms = 10000;
  std::string draw_adj, resign_adj;
  int max_moves = 0;
  bool affinity = false;
  bool json = false;
  bool quiet = false;
  bool gauntlet = false;
  std::string coordinator;
  uint32_t pairs_per_job = 0;
  bool concurrency_given = false;
  v1::Scheduling scheduling;         // --priority, --throughput
  std::optional<int64_t> scale_nps;  // --scale-nps (checked by the coordinator)
  // Engine limits given on the command line: sent to the workers (which cap them by their own).
  v1::EngineLimits engine_limits;
  SandboxFlags sandbox{.mode = "off"};
  std::string engine_log;  // --engine-log DIR
};

// The local match's box: off by default (a developer's own engines), with a hint.
absl::Status ApplySandbox(const MatchFlags& f, match::MatchOptions& o) {
  ASSIGN_OR_RETURN(o.sandbox, ResolveSandbox(f.sandbox));
  if (o.sandbox.isolation == match::Isolation::kNone && !f.quiet)
    std::cerr << "note: engines run without a sandbox; --sandbox=auto runs each in its own "
                 "namespaces (bubblewrap) with resource limits\n";
  return absl::OkStatus();
}

absl::Status FlagError(std::string_view flag, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(Cat(flag, " '", text, "': ", why));
}

// "k=v,k=v" with numeric values, each key from `allowed`.
absl::StatusOr<std::vector<std::pair<std::string, double>>> ParseKeyValues(
    std::string_view flag, std::string_view text, const std::vector<std::string>& allowed) {
  std::vector<std::pair<std::string, double>> out;
  for (std::string_view part : Split(text, ',', true)) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      return FlagError(flag, text, Cat("'", part, "' is not key=value"));
    std::string key(part.substr(0, eq));
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string keys;
      for (const std::string& k : allowed) keys += Cat(keys.empty() ? "" : ", ", k);
      return FlagError(flag, text, Cat("unknown key '", key, "' (expected ", keys, ")"));
    }
    if (key == "model") {
      out.emplace_back(Cat("model=", part.substr(eq + 1)), 0);
      continue;
    }
    double v = 0;
    if (!ParseNumber(part.substr(eq + 1), v))
      return FlagError(flag, text, Cat("'", part.substr(eq + 1), "' is not a number"));
    out.emplace_back(key, v);
  }
  return out;
}

absl::StatusOr<match::MatchOptions> BuildOptions(const MatchFlags& f, size_t min_engines,
                                                 size_t max_engines,
                                                 std::vector<match::EngineSpec>& specs) {
  if (f.engines.size() < min_engines || f.engines.size() > max_engines)
    return absl::InvalidArgumentError(
        max_engines == 2
            ? Cat("give exactly two --engine flags (got ", f.engines.size(), ")")
            : Cat("give at least ", min_engines, " --engine flags (got ", f.engines.size(), ")"));
  for (const std::string& e : f.engines) {
    absl::StatusOr<match::EngineSpec> spec = match::ParseEngineSpec(e);
    if (!spec.ok()) return spec.status();
    for (const match::EngineSpec& other : specs)
      if (other.name == spec->name)
        return absl::InvalidArgumentError(
            Cat("two engines are named '", spec->name, "': give each a distinct name="));
    specs.push_back(*spec);
  }
  if (!f.engine_log.empty()) {
    if (!f.coordinator.empty())
      return absl::InvalidArgumentError(
          "--engine-log applies to local runs (a worker's engines log on the worker)");
    if (mkdir(f.engine_log.c_str(), 0755) != 0 && errno != EEXIST)
      return absl::InvalidArgumentError(
          Cat("--engine-log '", f.engine_log, "': ", std::strerror(errno)));
    for (match::EngineSpec& s : specs) s.log_dir = f.engine_log;
  }
  match::MatchOptions o;
  o.warn = [quiet = f.quiet](const std::string& w) {
    if (!quiet) std::cerr << "warning: " << w << "\n";
  };
  bool all_have_tc = std::all_of(specs.begin(), specs.end(),
                                 [](const match::EngineSpec& s) { return !s.tc.empty(); });
  if (f.tc.empty() && !all_have_tc)
    return absl::InvalidArgumentError("--tc is required (or a tc= on every --engine)");
  absl::StatusOr<match::TimeControl> tc =
      match::ParseTimeControl(f.tc.empty() ? specs[0].tc : f.tc);
  if (!tc.ok())
    return absl::InvalidArgumentError(Cat("--tc: ", std::string(tc.status().message())));
  o.tc = *tc;
  for (const match::EngineSpec& s : specs)
    if (!s.tc.empty()) {
      absl::StatusOr<match::TimeControl> own = match::ParseTimeControl(s.tc);
      if (!own.ok())
        return absl::InvalidArgumentError(
            Cat("--engine ", s.name, ": ", std::string(own.status().message())));
    }
  o.games = f.games;
  if (!f.sprt.empty()) {
    ASSIGN_OR_RETURN(auto kv,
                     ParseKeyValues("--sprt", f.sprt, {"elo0", "elo1", "alpha", "beta", "model"}));
    stats::SprtParams p;
    for (const auto& [k, v] : kv) {
      if (k == "elo0") p.elo0 = v;
      if (k == "elo1") p.elo1 = v;
      if (k == "alpha") p.alpha = v;
      if (k == "beta") p.beta = v;
      if (k.starts_with("model=")) {
        absl::StatusOr<stats::SprtModel> m = stats::ParseSprtModel(k.substr(6));
        if (!m.ok()) return FlagError("--sprt", f.sprt, std::string(m.status().message()));
        p.model = *m;
      }
    }
    if (absl::Status st = stats::ValidateSprtParams(p); !st.ok())
      return FlagError("--sprt", f.sprt, std::string(st.message()));
    o.sprt = p;
  }
  if (f.games == 0 && f.sprt.empty())
    return absl::InvalidArgumentError("give --games N (even) or --sprt elo0=..,elo1=..");
  if (f.opening_order != "sequential" && f.opening_order != "random")
    return FlagError("--opening-order", f.opening_order, "expected sequential or random");
  o.book = match::BookOptions{.path = f.openings,
                              .plies = f.opening_plies,
                              .random = f.opening_order == "random",
                              .seed = f.seed,
                              .start = f.opening_start};
  o.chess960 = f.chess960;
  o.concurrency = f.concurrency;
  o.affinity = f.affinity;
  o.pgn_out = f.pgn_out;
  if (!f.event.empty()) o.pgn.event = f.event;
  if (f.margin_ms < 0 || f.stop_grace_ms < 0 || f.move_timeout_ms <= 0 || f.handshake_ms <= 0)
    return absl::InvalidArgumentError("timeouts and margins must not be negative");
  o.settings.margin = match::Millis(f.margin_ms);
  o.settings.stop_grace = match::Millis(f.stop_grace_ms);
  o.settings.no_clock_timeout = match::Millis(f.move_timeout_ms);
  o.timeouts.handshake = o.timeouts.ready = match::Millis(f.handshake_ms);
  match::Adjudication& adj = o.settings.adjudication;
  if (!f.draw_adj.empty()) {
    ASSIGN_OR_RETURN(
        auto kv, ParseKeyValues("--draw-adj", f.draw_adj, {"movenumber", "movecount", "score"}));
    for (const auto& [k, v] : kv) {
      if (k == "movenumber") adj.draw_move_number = int(v);
      if (k == "movecount") adj.draw_move_count = int(v);
      if (k == "score") adj.draw_score = int(v);
    }
    if (adj.draw_move_count <= 0)
      return FlagError("--draw-adj", f.draw_adj, "movecount must be > 0");
  }
  if (!f.resign_adj.empty()) {
    ASSIGN_OR_RETURN(auto kv, ParseKeyValues("--resign-adj", f.resign_adj, {"movecount", "score"}));
    for (const auto& [k, v] : kv) {
      if (k == "movecount") adj.resign_move_count = int(v);
      if (k == "score") adj.resign_score = int(v);
    }
    if (adj.resign_move_count <= 0 || adj.resign_score <= 0)
      return FlagError("--resign-adj", f.resign_adj, "movecount and score must be > 0");
  }
  if (f.max_moves < 0) return absl::InvalidArgumentError("--max-moves must not be negative");
  adj.max_moves = f.max_moves;
  return o;
}

uint64_t MaxRssKib() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return uint64_t(ru.ru_maxrss);
}

// What the report adds to a match's result: its time controls, concurrency, PGN file, memory.
void AddShown(const match::MatchOptions& o, v1::MatchResult& r) {
  r.set_time_control(o.tc.ToString());
  r.clear_engine_time_controls();
  for (const match::EngineSpec& e : o.engines)
    r.add_engine_time_controls(e.tc.empty() ? o.tc.ToString() : e.tc);
  r.set_concurrency(o.concurrency);
  r.set_pgn_out(o.pgn_out);
  r.set_max_rss_kib(MaxRssKib());
}

v1::GameSummary GameBrief(uint64_t round, const match::GameRecord& g) {
  v1::GameSummary b;
  b.set_round(round);
  b.set_white(g.white);
  b.set_black(g.black);
  match::SetResultAndEnd(b, match::GameResultToProto(g.result), match::GameEndToProto(g.end));
  b.set_reason(g.reason);
  b.set_plies(uint32_t(g.moves.size()));
  b.set_start_fen(g.start.Fen());
  return b;
}

// Plays one pairing; progress to stderr; games collected into `result` when asked.
absl::StatusOr<match::MatchSummary> PlayPairing(const match::MatchOptions& o, const MatchFlags& f,
                                                v1::MatchResult* games_out) {
  const uint64_t planned = o.games;
  match::ProgressFn progress = [&](const match::MatchSummary& s) {
    if (!f.quiet) std::cerr << match::ProgressLine(s, planned) << "\n";
  };
  match::GameFn on_game = [&](uint64_t round, const match::GameRecord& g) {
    if (!f.quiet)
      std::cerr << "Finished game " << round << " (" << g.white << " vs " << g.black
                << "): " << ResultString(g.result) << " {" << g.reason << "}\n";
    if (games_out) *games_out->add_game_list() = GameBrief(round, g);
  };
  return match::RunMatch(o, progress, on_game);
}

// The report after a match, local or on the cluster: JSON, or the statistics and details.
int PrintMatchReport(const MatchFlags& f, const match::MatchOptions& o, const v1::MatchResult& r) {
  if (f.json) {
    std::cout << ToJson(r) << "\n";
    return 0;
  }
  std::cout << "Results of " << r.engines(0) << " vs " << r.engines(1) << " (" << o.tc.ToString()
            << (f.openings.empty() ? "" : ", " + f.openings) << "):\n"
            << match::FormatStatsReport(r.stats()) << match::MatchDetails(r);
  if (!f.pgn_out.empty()) std::cout << "PGN: " << f.pgn_out << "\n";
  return 0;
}

std::string PairingLine(const v1::MatchResult& m) {
  const v1::TrinomialCounts& t = m.stats().wdl();
  return Cat(m.engines(0), " vs ", m.engines(1), ": +", t.wins(), " =", t.draws(), " -", t.losses(),
             absl::StrFormat("  Elo %.1f +/- %.1f\n", m.stats().elo(), m.stats().elo_error95()));
}

// The ratings table after a tournament, local or on the cluster.
void PrintStandings(const v1::TournamentResult& out, const std::string& anchor) {
  std::cout << "\nRank  Name                      Elo     +/-   Games  Points  Score\n";
  int rank = 0;
  for (const auto& st : out.standings())
    std::cout << absl::StrFormat("%4d  %-22s %7.1f %7.1f %7d %7.1f %5.1f%%\n", ++rank, st.name(),
                                 st.elo(), st.elo_error95(), st.games(), st.points(),
                                 100 * st.score());
  std::cout << "(" << out.format() << ", Elo anchored at " << anchor << " = 0, one virtual draw "
            << "per pairing as prior)\n";
}

int Fail(const absl::Status& st) {
  std::cerr << "error: " << st.message() << "\n";
  return st.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

// Engines with a declared signature (bench=N) run their bench once before the first game, in
// the match's sandbox: a different signature stops the match, naming both numbers. An engine
// that needs a higher x86-64 level (cpu=v4) than this CPU's is refused.
absl::Status CheckDeclaredBench(const std::vector<match::EngineSpec>& specs,
                                const match::SandboxOptions& sandbox) {
  for (const match::EngineSpec& e : specs) {
    if (e.cpu_level > DetectedCpuLevel())
      return absl::FailedPreconditionError(Cat("engine '", e.name, "' needs x86-64 ",
                                               CpuLevelName(e.cpu_level), "; this CPU is ",
                                               CpuLevelName(DetectedCpuLevel())));
    if (e.bench == 0) continue;
    ASSIGN_OR_RETURN(match::BenchResult b,
                     match::RunEngineBench(e, sandbox, std::chrono::minutes(2)));
    if (b.nodes != e.bench)
      return absl::FailedPreconditionError(Cat("engine '", e.name, "': bench signature ", b.nodes,
                                               " differs from the declared ", e.bench));
  }
  return absl::OkStatus();
}

// --- The cluster: a run built from the same flags, reported like a local match.

// Appends the run's PGN to --pgn-out and returns its game summaries (when asked for either).
absl::StatusOr<v1::GetPgnResponse> FetchGames(const MatchFlags& f, const v1::Run& run) {
  if (!f.json && f.pgn_out.empty()) return v1::GetPgnResponse();
  ASSIGN_OR_RETURN(v1::GetPgnResponse pgn, FetchRunPgn(f.coordinator, run.id()));
  if (!f.pgn_out.empty()) {
    std::ofstream out(f.pgn_out, std::ios::app);
    out << pgn.pgn();
    if (!out) return absl::InternalError(Cat("cannot write --pgn-out '", f.pgn_out, "'"));
  }
  return pgn;
}

absl::Status RunFinished(const v1::Run& run) {
  if (run.state() == v1::RUN_STATE_SUCCEEDED) return absl::OkStatus();
  return absl::AbortedError(Cat("run ", run.id(), " ended ", RunStateName(run.state()),
                                run.message().empty() ? "" : ": " + run.message()));
}

// What a cluster match and tournament share: the engines (uploaded or named for the workers),
// the clock, the book's text, the rules and the scheduling and batching flags.
absl::Status FillGamesSettings(const MatchFlags& f, const match::MatchOptions& o,
                               const std::vector<match::EngineSpec>& specs,
                               const std::string& event, v1::GamesSettings& out) {
  for (const match::EngineSpec& e : specs) {
    absl::StatusOr<v1::EngineSpec> remote = RemoteEngineSpec(e, f.coordinator);
    if (!remote.ok()) return remote.status();
    *out.add_engines() = *remote;
  }
  out.set_tc(o.tc.ToString());
  absl::StatusOr<std::string> openings = match::BookEpdText(o.book);
  if (!openings.ok()) return openings.status();
  out.set_openings(*openings);
  out.set_openings_name(std::filesystem::path(o.book.path).filename().string());
  if (f.concurrency_given) out.set_concurrency(uint32_t(std::max(1, f.concurrency)));
  out.set_pairs_per_job(f.pairs_per_job);
  *out.mutable_rules() = match::RulesToProto(o, event, f.engine_limits);
  *out.mutable_scheduling() = f.scheduling;
  if (f.scale_nps) out.set_scale_nps(*f.scale_nps);
  return absl::OkStatus();
}

int RunRemoteMatchCommand(const MatchFlags& f, const match::MatchOptions& o,
                          const std::vector<match::EngineSpec>& specs) {
  // Before any gRPC thread exists: Ctrl-C then cancels the run (cli/cluster_client.h).
  BlockTerminationSignals();
  v1::SubmitMatchRequest req;
  if (absl::Status st = FillGamesSettings(f, o, specs, f.event, *req.mutable_settings()); !st.ok())
    return Fail(st);
  req.set_games(o.games);
  if (o.sprt) *req.mutable_sprt() = match::SprtSpecOf(*o.sprt);
  absl::StatusOr<v1::Run> run = RunRemoteMatch(f.coordinator, req, f.quiet);
  if (!run.ok()) return Fail(run.status());
  // A cancelled run (Ctrl-C, `runs cancel`) still reports the games it played.
  const absl::Status finished = RunFinished(*run);
  if (!finished.ok() && run->state() != v1::RUN_STATE_CANCELLED) return Fail(finished);
  // The server's score as it is: counts, Elo, SPRT, faults, speed.
  v1::MatchResult r = run->match().result();
  match::MatchOptions shown = o;
  shown.concurrency = f.concurrency_given ? f.concurrency : 0;
  AddShown(shown, r);
  absl::StatusOr<v1::GetPgnResponse> games = FetchGames(f, *run);
  if (!games.ok()) return Fail(games.status());
  if (f.json) *r.mutable_game_list() = games->game_list();
  const int code = PrintMatchReport(f, o, r);
  return finished.ok() ? code : Fail(finished);
}

int RunRemoteTournamentCommand(const MatchFlags& f, const match::MatchOptions& base,
                               const std::vector<match::EngineSpec>& specs) {
  BlockTerminationSignals();  // before any gRPC thread: Ctrl-C cancels the run
  v1::SubmitTournamentRequest req;
  const std::string event =
      f.event.empty() ? match::TournamentEvent(f.gauntlet, specs.size()) : f.event;
  if (absl::Status st = FillGamesSettings(f, base, specs, event, *req.mutable_settings()); !st.ok())
    return Fail(st);
  req.set_games_per_pairing(uint32_t(base.games));
  req.set_gauntlet(f.gauntlet);
  absl::StatusOr<v1::Run> run = RunRemoteTournament(f.coordinator, req, f.quiet);
  if (!run.ok()) return Fail(run.status());
  if (absl::Status st = RunFinished(*run); !st.ok()) return Fail(st);
  absl::StatusOr<v1::GetPgnResponse> games = FetchGames(f, *run);
  if (!games.ok()) return Fail(games.status());
  const v1::TournamentRunStatus& t = run->tournament();
  v1::TournamentResult out;
  out.set_format(f.gauntlet ? "gauntlet" : "round robin");
  for (const v1::MatchResult& m : t.pairings()) {
    v1::MatchResult* r = out.add_matches();
    *r = m;
    match::MatchOptions o = base;
    for (int side = 0; side < 2; ++side)
      for (const match::EngineSpec& e : specs)
        if (e.name == m.engines(side)) o.engines[side] = e;
    o.concurrency = f.concurrency_given ? f.concurrency : 0;
    AddShown(o, *r);
    if (f.json) {
      for (const v1::GameSummary& g : games->game_list())
        if ((g.white() == m.engines(0) && g.black() == m.engines(1)) ||
            (g.white() == m.engines(1) && g.black() == m.engines(0)))
          *r->add_game_list() = g;
    }
    if (!f.json) std::cout << PairingLine(m);
  }
  *out.mutable_standings() = t.standings();
  out.set_seconds(run->started_unix() > 0 && run->finished_unix() > run->started_unix()
                      ? run->finished_unix() - run->started_unix()
                      : 0);
  if (f.json) {
    std::cout << ToJson(out) << "\n";
    return 0;
  }
  PrintStandings(out, specs[0].name);
  std::cout << match::TournamentDetails(out);
  if (!f.pgn_out.empty()) std::cout << "PGN: " << f.pgn_out << "\n";
  return 0;
}

int RunMatchCommand(const MatchFlags& f) {
  std::vector<match::EngineSpec> specs;
  absl::StatusOr<match::MatchOptions> o = BuildOptions(f, 2, 2, specs);
  if (!o.ok()) {
    std::cerr << "error: " << o.status().message() << "\n";
    return 2;
  }
  o->engines[0] = specs[0];
  o->engines[1] = specs[1];
  if (!f.coordinator.empty()) return RunRemoteMatchCommand(f, *o, specs);
  if (f.pairs_per_job > 0 || f.scale_nps) {
    std::cerr << "error: --pairs-per-job and --scale-nps apply to cluster runs (--coordinator)\n";
    return 2;
  }
  if (absl::Status st = ApplySandbox(f, *o); !st.ok()) return Fail(st);
  if (absl::Status st = BuildLocalSources(specs, o->sandbox, f.quiet); !st.ok()) return Fail(st);
  o->engines[0] = specs[0];
  o->engines[1] = specs[1];
  if (absl::Status st = CheckDeclaredBench(specs, o->sandbox); !st.ok()) return Fail(st);
  v1::MatchResult games;
  absl::StatusOr<match::MatchSummary> s = PlayPairing(*o, f, f.json ? &games : nullptr);
  if (!s.ok()) {
    std::cerr << "error: " << s.status().message() << "\n";
    return 2;
  }
  v1::MatchResult r = match::ToMatchResult(*s, o->sprt);
  AddShown(*o, r);
  r.mutable_game_list()->Swap(games.mutable_game_list());
  return PrintMatchReport(f, *o, r);
}

int RunTournamentCommand(const MatchFlags& f) {
  std::vector<match::EngineSpec> specs;
  absl::StatusOr<match::MatchOptions> base = BuildOptions(f, 2, 64, specs);
  if (!base.ok()) {
    std::cerr << "error: " << base.status().message() << "\n";
    return 2;
  }
  if (base->sprt) {
    std::cerr << "error: --sprt applies to `arbiter match`, not to tournaments\n";
    return 2;
  }
  if (!f.coordinator.empty()) return RunRemoteTournamentCommand(f, *base, specs);
  if (f.pairs_per_job > 0 || f.scale_nps) {
    std::cerr << "error: --pairs-per-job and --scale-nps apply to cluster runs (--coordinator)\n";
    return 2;
  }
  if (absl::Status st = ApplySandbox(f, *base); !st.ok()) return Fail(st);
  if (absl::Status st = BuildLocalSources(specs, base->sandbox, f.quiet); !st.ok()) return Fail(st);
  // Every pairing's games and progress, named: the pairings run interleaved.
  std::map<std::string, v1::MatchResult> games;  // by "A vs B"
  match::TournamentCallbacks callbacks;
  callbacks.progress = [&](const match::MatchOptions& o, const match::MatchSummary& s) {
    if (!f.quiet) std::cerr << match::PairingProgressLine(s, o.games) << "\n";
  };
  callbacks.game = [&](const match::MatchOptions& o, uint64_t round, const match::GameRecord& g) {
    if (!f.quiet)
      std::cerr << "Finished game " << round << " (" << g.white << " vs " << g.black
                << "): " << ResultString(g.result) << " {" << g.reason << "}\n";
    if (f.json)
      *games[Cat(o.engines[0].name, " vs ", o.engines[1].name)].add_game_list() =
          GameBrief(round, g);
  };
  callbacks.finished = [&](const match::MatchOptions& o, v1::MatchResult& m) {
    AddShown(o, m);
    m.mutable_game_list()->Swap(
        games[Cat(o.engines[0].name, " vs ", o.engines[1].name)].mutable_game_list());
    if (!f.json) std::cout << PairingLine(m);
  };
  absl::StatusOr<v1::TournamentResult> out =
      match::RunTournament(*base, specs, f.gauntlet, callbacks);
  if (!out.ok()) return Fail(out.status());
  if (f.json) {
    std::cout << ToJson(*out) << "\n";
    return 0;
  }
  PrintStandings(*out, specs[0].name);
  std::cout << match::TournamentDetails(*out);
  if (!f.pgn_out.empty()) std::cout << "PGN: " << f.pgn_out << "\n";
  return 0;
}

void AddCommonFlags(CLI::App* cmd, MatchFlags& f) {
  cmd->add_option("--engine", f.engines,
                  "name=A,cmd=PATH[ args][,dir=D][,option.X=V][,env.K=V][,tc=TC][,bench=N]"
                  "[,cpu=v3][,proto=xboard], or a bare PATH (named by its base name), or "
                  "name=A,source=SRC[,build=COMMAND][,binary=PATH] (built from a directory, an "
                  "archive or a git DIR@REV; build defaults to make) (repeat; "
                  "proto=xboard: a CECP engine, also detected when it answers uci in xboard "
                  "style; bench=N: the engine's declared bench signature, checked "
                  "by every worker before its first game; cpu=LEVEL: the x86-64 level its binary "
                  "needs, only workers of that level run it)")
      ->required();
  cmd->add_option("--scale-nps", f.scale_nps,
                  "With --coordinator: the --tc is meant at this speed (nodes/s); each worker "
                  "scales the clocks by this / its measured speed");
  cmd->add_option("--tc", f.tc,
                  "Time control: 40/7200:20/3600:1800, 40/5400+30:1800+30, 300, 10+0.1, "
                  "10+0.1b (Bronstein), 10+0.1d (delay), *60 (sandclock), movetime=1, "
                  "movetime=60,forfeit=2, depth=8, nodes=100000");
  cmd->add_option("--games", f.games, "Games per pairing (even: pairs with colours reversed)");
  cmd->add_option("--openings", f.openings, "Opening book (.epd or .pgn)");
  cmd->add_option("--opening-plies", f.opening_plies, "PGN books: plies kept (default all)");
  cmd->add_option("--opening-order", f.opening_order, "sequential (default) or random");
  cmd->add_option("--seed", f.seed, "Seed of the random opening order");
  cmd->add_option("--opening-start", f.opening_start, "1-based index of the first opening");
  cmd->add_flag("--chess960", f.chess960, "Chess960 (set automatically for Chess960 books)");
  cmd->add_option("--concurrency", f.concurrency, "Games played at once (one engine pair each)");
  cmd->add_option("--engine-log", f.engine_log,
                  "Log every line sent to and read from each engine process, with UTC times, to "
                  "a file of its own in this directory (local runs)");
  cmd->add_option("--pgn-out,--pgn", f.pgn_out,
                  "Append every game to this PGN file (with --coordinator: the run's PGN)");
  cmd->add_option("--event", f.event, "PGN Event tag");
  cmd->add_option("--margin-ms", f.margin_ms, "Overrun in ms forgiven on each move (50)");
  cmd->add_option("--stop-grace-ms", f.stop_grace_ms, "ms to wait for bestmove after stop (1000)");
  cmd->add_option("--move-timeout-ms", f.move_timeout_ms,
                  "depth/nodes searches: ms before stop is sent (60000)");
  cmd->add_option("--handshake-timeout-ms", f.handshake_ms, "ms for uciok and readyok (10000)");
  cmd->add_option("--draw-adj", f.draw_adj, "movenumber=M,movecount=N,score=CP");
  cmd->add_option("--resign-adj", f.resign_adj, "movecount=N,score=CP");
  cmd->add_option("--max-moves", f.max_moves, "Draw by adjudication after this many moves");
  cmd->add_flag("--affinity", f.affinity, "Pin each game slot's engines to one CPU");
  cmd->add_flag("--json", f.json, "Print the result as JSON (protobuf mapping)");
  cmd->add_flag("--quiet", f.quiet, "No progress lines on stderr");
  cmd->add_option("--coordinator", f.coordinator,
                  "Run on the cluster at HOST:PORT (engines: cmd=builtin[,option.X=V], an "
                  "absolute path present on every worker, upload:FILE, sha256:HEX or "
                  "source=SRC)");
  cmd->add_option(
         "--pairs-per-job", f.pairs_per_job,
         "With --coordinator: game pairs per job (default: the largest --threads among the "
         "connected workers, at least 2)")
      ->check(CLI::Range(1, 1000));
  AddSchedulingOptions(cmd, f.scheduling);
  AddSandboxOptions(cmd, f.sandbox);
}

// Notes whether --concurrency was given (a cluster run then caps each job's concurrency).
void NoteGivenFlags(CLI::App* cmd, MatchFlags& f) {
  f.concurrency_given = cmd->count("--concurrency") > 0;
  const match::ResourceLimits& l = f.sandbox.limits;
  if (cmd->count("--engine-memory-mb")) f.engine_limits.set_memory_mb(l.memory_mb);
  if (cmd->count("--engine-processes")) f.engine_limits.set_processes(l.processes);
  if (cmd->count("--engine-open-files")) f.engine_limits.set_open_files(l.open_files);
  if (cmd->count("--engine-file-size-mb")) f.engine_limits.set_file_size_mb(l.file_size_mb);
  if (cmd->count("--engine-cpu-s")) f.engine_limits.set_cpu_seconds(l.cpu_seconds);
}

}  // namespace

void AddMatchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MatchFlags>();
  CLI::App* cmd = app.add_subcommand("match", "Play two UCI engines against each other");
  AddCommonFlags(cmd, *flags);
  cmd->add_option("--sprt", flags->sprt,
                  "Stop when the SPRT decides: elo0=0,elo1=2,alpha=0.05,beta=0.05[,model=...]");
  cmd->callback([cmd, flags, &exit_code] {
    NoteGivenFlags(cmd, *flags);
    exit_code = RunMatchCommand(*flags);
  });
}

void AddTournamentCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MatchFlags>();
  CLI::App* cmd = app.add_subcommand(
      "tournament", "Round robin (or gauntlet) of UCI engines, with a ratings table");
  AddCommonFlags(cmd, *flags);
  cmd->add_flag("--gauntlet", flags->gauntlet, "The first engine plays each of the others");
  cmd->callback([cmd, flags, &exit_code] {
    NoteGivenFlags(cmd, *flags);
    exit_code = RunTournamentCommand(*flags);
  });
}

}  // namespace arbiter::cli

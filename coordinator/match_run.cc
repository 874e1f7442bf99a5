#include "coordinator/match_run.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/engine_reports.h"
#include "engine/rules.h"
#include "match/stats_report.h"
#include "match/time_control.h"
#include "match/uci_engine.h"
#include "match/wire.h"
#include "net/sha256.h"
#include "stats/elo.h"
#include "stats/ratings.h"

namespace arbiter::coordinator {
namespace {

// A checked game as the count needs it (CheckMatchResult refused unknown ends and results).
match::GameCount GameCountOf(const v1::ReportedGame& g) {
  match::GameCount c;
  c.result = match::GameResultFromProto(g.result()).value_or(GameResult::kDraw);
  c.end = match::GameEndFromProto(g.end()).value_or(match::GameEnd::kNormal);
  c.faulty =
      match::SideFromProto(g.faulty())
          .value_or(c.result == GameResult::kBlackWins ? kWhite : kBlack);  // unnamed: the loser
  c.engine_moves = g.engine_moves();
  c.think_seconds = g.think_seconds();
  c.wall_seconds = g.wall_seconds();
  return c;
}

// Size bounds of one engine spec (each names the limit it breaks).
absl::Status CheckEngineBounds(const v1::EngineSpec& e) {
  if (e.name().size() > kMaxEngineNameBytes)
    return absl::InvalidArgumentError(Cat("engine name must have at most ", kMaxEngineNameBytes,
                                          " bytes, got ", e.name().size()));
  if (HasControl(e.name()) || HasControl(e.path()) || HasControl(e.tc()) ||
      std::any_of(e.args().begin(), e.args().end(), [](const auto& a) { return HasControl(a); }))
    return absl::InvalidArgumentError(
        "engine names, paths, args and time controls may not hold control characters (newlines "
        "would reach logs, PGN tags and the engine's input)");
  if (e.path().size() > kMaxEngineTextBytes)
    return absl::InvalidArgumentError(
        Cat("engine '", e.name(), "': path must have at most ", kMaxEngineTextBytes, " bytes"));
  if (e.cpu_level() > 4)
    return absl::InvalidArgumentError(
        Cat("engine '", e.name(), "': cpu level must be 1..4 (0 = any), got ", e.cpu_level()));
  if (e.options_size() > int(kMaxEngineEntries) || e.args_size() > int(kMaxEngineEntries))
    return absl::InvalidArgumentError(Cat("engine '", e.name(), "': at most ", kMaxEngineEntries,
                                          " options and ", kMaxEngineEntries, " args"));
  for (const auto& [k, v] : e.options()) {
    if (k.size() > kMaxEngineTextBytes || v.size() > kMaxEngineTextBytes)
      return absl::InvalidArgumentError(Cat("engine '", e.name(), "': option names and values ",
                                            "must have at most ", kMaxEngineTextBytes, " bytes"));
    RETURN_IF_ERROR(match::CheckOptionText(Cat("engine '", e.name(), "'"), k, v));
  }
  for (const std::string& a : e.args())
    if (a.size() > kMaxEngineTextBytes)
      return absl::InvalidArgumentError(
          Cat("engine '", e.name(), "': args must have at most ", kMaxEngineTextBytes, " bytes"));
  if (e.bench() > kMaxBenchNodes)
    return absl::InvalidArgumentError(Cat("engine '", e.name(),
                                          "': bench signature must be at most ", kMaxBenchNodes,
                                          ", got ", e.bench()));
  for (const auto& [k, v] : e.options()) {
    if (!match::SameOptionName(k, "Threads")) continue;
    uint32_t threads = 0;
    if (!ParseNumber(v, threads) || threads < 1 || threads > kMaxEngineThreads)
      return absl::InvalidArgumentError(Cat("engine '", e.name(), "': option Threads must be 1..",
                                            kMaxEngineThreads, ", got '", v.substr(0, 32), "'"));
  }
  if (!e.tc().empty()) {
    absl::StatusOr<match::TimeControl> tc = match::ParseTimeControl(e.tc());
    if (!tc.ok())
      return absl::InvalidArgumentError(
          Cat("engine '", e.name(), "': tc: ", std::string(tc.status().message())));
  }
  return absl::OkStatus();
}

// Unset, or a reference speed within bounds.
absl::Status CheckScaleNps(bool has, int64_t nps) {
  if (has && (nps < kMinScaleNps || nps > kMaxScaleNps))
    return absl::InvalidArgumentError(
        Cat("scale_nps (the reference speed of scaled clocks) must be ", kMinScaleNps, "..",
            kMaxScaleNps, " nodes/s, got ", nps));
  return absl::OkStatus();
}

// The time control parses (the workers would fail every game otherwise).
absl::Status CheckTimeControl(const std::string& text) {
  if (text.empty()) return absl::InvalidArgumentError("tc (time control) is required");
  if (text.size() > kMaxEngineTextBytes)
    return absl::InvalidArgumentError(
        Cat("tc must have at most ", kMaxEngineTextBytes, " bytes, got ", text.size()));
  absl::StatusOr<match::TimeControl> tc = match::ParseTimeControl(text);
  if (!tc.ok())
    return absl::InvalidArgumentError(Cat("tc '", text, "': ", std::string(tc.status().message())));
  return absl::OkStatus();
}

// Names and sources of an engine list. An unknown upload is NOT_FOUND
// for match requests and INVALID_ARGUMENT (`unknown_is_invalid`) for tournaments.
absl::Status ValidateEngineList(const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines,
                                const std::function<bool(const std::string&)>& engine_known,
                                bool unknown_is_invalid) {
  for (int i = 0; i < engines.size(); ++i) {
    const v1::EngineSpec& e = engines[i];
    if (e.name().empty()) return absl::InvalidArgumentError(Cat("engine ", i + 1, " has no name"));
    RETURN_IF_ERROR(CheckEngineBounds(e));
    for (int j = 0; j < i; ++j)
      if (engines[j].name() == e.name())
        return absl::InvalidArgumentError(
            engines.size() == 2
                ? Cat("both engines are named '", e.name(), "'")
                : Cat("engines ", j + 1, " and ", i + 1, " are both named '", e.name(), "'"));
    switch (e.source_case()) {
      case v1::EngineSpec::SOURCE_NOT_SET:
        return absl::InvalidArgumentError(
            Cat("engine '", e.name(), "' has no source (sha256, builtin, path or source_tree)"));
      case v1::EngineSpec::kSha256:
        if (!net::IsSha256Hex(e.sha256()))
          return absl::InvalidArgumentError(
              Cat("engine '", e.name(), "': sha256 must be 64 lowercase hex digits"));
        if (!engine_known(e.sha256())) {
          const std::string m =
              Cat("engine '", e.name(), "': no engine with sha256 ", e.sha256(), " was uploaded");
          return unknown_is_invalid ? absl::InvalidArgumentError(m) : absl::NotFoundError(m);
        }
        break;
      case v1::EngineSpec::kPath:
        if (e.path().empty() || e.path()[0] != '/')
          return absl::InvalidArgumentError(
              Cat("engine '", e.name(), "': path must be absolute, got '", e.path(), "'"));
        if (e.path().find("/../") != std::string::npos || e.path().ends_with("/.."))
          return absl::InvalidArgumentError(
              Cat("engine '", e.name(), "': path must not climb with '..', got '", e.path(), "'"));
        break;
      case v1::EngineSpec::kBuiltin:
        break;
      case v1::EngineSpec::kSourceTree:
        RETURN_IF_ERROR(CheckSourceTree(e, engine_known, unknown_is_invalid));
        break;
    }
    if (e.args_size() > 0 && e.source_case() == v1::EngineSpec::kBuiltin)
      return absl::InvalidArgumentError(
          Cat("engine '", e.name(), "': the builtin engine takes no args (use options)"));
    if (!v1::EngineProtocol_IsValid(e.protocol()))
      return absl::InvalidArgumentError(
          Cat("engine '", e.name(), "': unknown protocol ", int(e.protocol())));
    if (e.protocol() == v1::ENGINE_PROTOCOL_XBOARD && e.source_case() == v1::EngineSpec::kBuiltin)
      return absl::InvalidArgumentError(
          Cat("engine '", e.name(), "': the builtin engine speaks UCI, not xboard"));
  }
  return absl::OkStatus();
}

// One FEN per non-empty line (EPD): each must parse; the book's display name is short.
absl::Status ValidateOpenings(const std::string& openings, const std::string& name) {
  if (name.size() > 256)
    return absl::InvalidArgumentError(
        Cat("openings_name must have at most 256 bytes, got ", name.size()));
  if (openings.size() > kMaxOpeningsBytes)
    return absl::InvalidArgumentError(
        Cat("openings must have at most ", kMaxOpeningsBytes, " bytes, got ", openings.size()));
  int line_number = 0;
  for (std::string_view line : Split(openings, '\n')) {
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
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateEngineLimits(const v1::EngineLimits& l, std::string_view what) {
  for (auto [name, value, most] :
       {std::tuple<const char*, uint64_t, uint64_t>{"memory_mb", l.memory_mb(), 1 << 20},
        {"processes", l.processes(), 65536},
        {"open_files", l.open_files(), 65536},
        {"file_size_mb", l.file_size_mb(), 1 << 20},
        {"cpu_seconds", l.cpu_seconds(), 31536000}})
    if (value > most)
      return absl::InvalidArgumentError(
          Cat(what, ".", name, " must be at most ", most, ", got ", value));
  return absl::OkStatus();
}

namespace {

absl::Status ValidateRules(const v1::GameRules& r) {
  constexpr uint32_t kHour = 3600 * 1000;
  if (r.event().size() > kMaxEventBytes || HasControl(r.event()))
    return absl::InvalidArgumentError(Cat("rules.event (the PGN Event tag) must have at most ",
                                          kMaxEventBytes, " bytes and no control characters"));
  for (auto [name, ms] : {std::pair<const char*, uint32_t>{"margin_ms", r.margin_ms()},
                          {"stop_grace_ms", r.stop_grace_ms()},
                          {"move_timeout_ms", r.move_timeout_ms()},
                          {"handshake_timeout_ms", r.handshake_timeout_ms()}})
    if (ms > kHour)
      return absl::InvalidArgumentError(Cat("rules.", name, " must be at most one hour, got ", ms));
  if ((r.has_move_timeout_ms() && r.move_timeout_ms() == 0) ||
      (r.has_handshake_timeout_ms() && r.handshake_timeout_ms() == 0))
    return absl::InvalidArgumentError("rules: move and handshake timeouts must be positive");
  if (r.resign_move_count() > 0 && r.resign_score_cp() == 0)
    return absl::InvalidArgumentError("rules: resign adjudication needs resign_score_cp > 0");
  return ValidateEngineLimits(r.engine_limits(), "rules.engine_limits");
}

absl::Status ValidateBatching(uint32_t pairs_per_job, uint32_t concurrency) {
  if (pairs_per_job > 1000)
    return absl::InvalidArgumentError(
        Cat("pairs_per_job must be at most 1000, got ", pairs_per_job));
  if (concurrency > 1024)
    return absl::InvalidArgumentError(Cat("concurrency must be at most 1024, got ", concurrency));
  return absl::OkStatus();
}

// A game lost by a fault must have the result the Laws give it: the faulty side loses, except
// that when its flag fell (a late move, a stall or a disconnect on its own turn under a clock)
// and the opponent cannot checkmate by any series of legal moves, it is a draw.
absl::Status CheckForfeit(const v1::MatchJob& job, const v1::ReportedGame& g, match::GameEnd end,
                          GameResult result, int game_index, const Position& final_position,
                          const std::string& where) {
  if (!match::IsFault(end)) return absl::OkStatus();
  const bool on_time = end != match::GameEnd::kIllegalMove;
  const std::string end_name(match::GameEndName(end));
  const std::optional<Color> faulty = match::SideFromProto(g.faulty());
  if (!faulty)
    return absl::InvalidArgumentError(Cat(where, ": a '", end_name, "' needs the side at fault"));
  // Game 0 has the first engine as White; its own tc (time odds) wins over the job's.
  const int engine = (*faulty == kWhite) == (game_index == 0) ? 0 : 1;
  const std::string& tc_text = engine < job.engines_size() && !job.engines(engine).tc().empty()
                                   ? job.engines(engine).tc()
                                   : job.tc();
  absl::StatusOr<match::TimeControl> tc = match::ParseTimeControl(tc_text);
  const bool clocked = tc.ok() && tc->HasClock();
  GameResult expected = *faulty == kWhite ? GameResult::kBlackWins : GameResult::kWhiteWins;
  if (on_time && clocked && final_position.SideToMove() == *faulty &&
      !CanCheckmate(final_position, ~*faulty))
    expected = GameResult::kDraw;
  if (result != expected)
    return absl::InvalidArgumentError(
        Cat(where, ": a '", end_name, "' of ", *faulty == kWhite ? "white" : "black", " is ",
            std::string(ResultString(expected)), " under the Laws",
            expected == GameResult::kDraw ? " (the opponent cannot checkmate)" : "", ", reported ",
            std::string(ResultString(result))));
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateGamesSettings(const v1::GamesSettings& settings,
                                   const std::function<bool(const std::string&)>& engine_known,
                                   bool unknown_is_invalid) {
  RETURN_IF_ERROR(ValidateEngineList(settings.engines(), engine_known, unknown_is_invalid));
  RETURN_IF_ERROR(CheckTimeControl(settings.tc()));
  RETURN_IF_ERROR(ValidateOpenings(settings.openings(), settings.openings_name()));
  RETURN_IF_ERROR(ValidateRules(settings.rules()));
  RETURN_IF_ERROR(CheckScaleNps(settings.has_scale_nps(), settings.scale_nps()));
  return ValidateBatching(settings.pairs_per_job(), settings.concurrency());
}

absl::Status ValidateMatchRequest(const v1::SubmitMatchRequest& request,
                                  const std::function<bool(const std::string&)>& engine_known) {
  const auto& engines = request.settings().engines();
  if (engines.empty()) return absl::InvalidArgumentError("the engine list is empty");
  if (engines.size() != 2)
    return absl::InvalidArgumentError(Cat("a match needs exactly 2 engines, got ", engines.size()));
  RETURN_IF_ERROR(
      ValidateGamesSettings(request.settings(), engine_known, /*unknown_is_invalid=*/false));
  if (request.games() > kMaxMatchGames)
    return absl::InvalidArgumentError(
        Cat("games must be at most ", kMaxMatchGames, ", got ", request.games()));
  if (request.games() % 2 != 0)
    return absl::InvalidArgumentError(
        Cat("games must be even (game pairs), got ", request.games()));
  if (request.games() == 0 && !request.has_sprt())
    return absl::InvalidArgumentError("give a number of games, an sprt, or both");
  if (request.has_sprt()) {
    const v1::SprtSpec& s = request.sprt();
    if (!std::isfinite(s.elo0()) || !std::isfinite(s.elo1()) || std::abs(s.elo0()) > 1000 ||
        std::abs(s.elo1()) > 1000)
      return absl::InvalidArgumentError("sprt: elo0 and elo1 must be finite, within +-1000");
    if (!(s.elo1() > s.elo0()))
      return absl::InvalidArgumentError(
          Cat("sprt: elo1 (", s.elo1(), ") must be above elo0 (", s.elo0(), ")"));
    if (!(s.alpha() > 0 && s.alpha() < 0.5 && s.beta() > 0 && s.beta() < 0.5))
      return absl::InvalidArgumentError("sprt: alpha and beta must be in (0, 0.5)");
    if (s.model() != v1::SPRT_MODEL_UNSPECIFIED && s.model() != v1::SPRT_MODEL_NORMALIZED &&
        s.model() != v1::SPRT_MODEL_LOGISTIC)
      return absl::InvalidArgumentError(
          Cat("sprt: model must be normalized or logistic, got ", v1::SprtModel_Name(s.model())));
  }
  return absl::OkStatus();
}

absl::Status ValidateTournamentRequest(
    const v1::SubmitTournamentRequest& request,
    const std::function<bool(const std::string&)>& engine_known) {
  const v1::GamesSettings& settings = request.settings();
  const auto& engines = settings.engines();
  if (engines.size() < 2)
    return absl::InvalidArgumentError(
        Cat("a tournament needs at least 2 engines, got ", engines.size()));
  if (engines.size() > kMaxTournamentEngines)
    return absl::InvalidArgumentError(Cat("a tournament takes at most ", kMaxTournamentEngines,
                                          " engines, got ", engines.size()));
  RETURN_IF_ERROR(ValidateGamesSettings(settings, engine_known, /*unknown_is_invalid=*/true));
  if (request.games_per_pairing() == 0 || request.games_per_pairing() % 2 != 0)
    return absl::InvalidArgumentError(
        Cat("games_per_pairing must be even and positive, got ", request.games_per_pairing()));
  if (request.games_per_pairing() > kMaxGamesPerPairing)
    return absl::InvalidArgumentError(Cat("games_per_pairing must be at most ", kMaxGamesPerPairing,
                                          ", got ", request.games_per_pairing()));
  const uint64_t per_job = settings.pairs_per_job() > 0 ? settings.pairs_per_job() : 2;
  const uint64_t jobs = TournamentPairings(request).size() *
                        ((request.games_per_pairing() / 2 + per_job - 1) / per_job);
  if (jobs > kMaxRunJobs)
    return absl::InvalidArgumentError(Cat("the tournament would need ", jobs, " jobs, more than ",
                                          kMaxRunJobs,
                                          ": fewer engines or games, or more pairs_per_job"));
  return absl::OkStatus();
}

std::vector<std::pair<int, int>> TournamentPairings(const v1::SubmitTournamentRequest& request) {
  return match::TournamentPairings(request.settings().engines_size(), request.gauntlet());
}

v1::SubmitMatchRequest PairingRequest(const v1::SubmitTournamentRequest& request, int first,
                                      int second, bool with_openings) {
  v1::SubmitMatchRequest m;
  v1::GamesSettings& settings = *m.mutable_settings();
  settings = request.settings();
  settings.clear_engines();
  *settings.add_engines() = request.settings().engines(first);
  *settings.add_engines() = request.settings().engines(second);
  if (!with_openings) settings.clear_openings();
  m.set_games(request.games_per_pairing());
  return m;
}

std::vector<MatchSlice> PlanTournamentSlices(const v1::SubmitTournamentRequest& request) {
  const size_t pairings = TournamentPairings(request).size();
  // Every pairing has the same games, so the same slices: dealt round by round, pairing by
  // pairing, so that every pairing progresses at the same pace.
  v1::SubmitMatchRequest pairing;
  pairing.set_games(request.games_per_pairing());
  pairing.mutable_settings()->set_pairs_per_job(request.settings().pairs_per_job());
  const std::vector<MatchSlice> slices = PlanMatchSlices(pairing);
  std::vector<MatchSlice> out;
  out.reserve(slices.size() * pairings);
  for (const MatchSlice& slice : slices)
    for (size_t k = 0; k < pairings; ++k)
      out.push_back({slice.first_pair, slice.pairs, uint32_t(k)});
  return out;
}

std::vector<v1::MatchJob> PlanTournamentJobs(const v1::SubmitTournamentRequest& request) {
  const std::vector<std::pair<int, int>> pairings = TournamentPairings(request);
  const std::vector<std::string_view> book = BookLines(request.settings().openings());
  std::vector<v1::MatchJob> out;
  for (const MatchSlice& slice : PlanTournamentSlices(request)) {
    const auto [first, second] = pairings[slice.pairing];
    out.push_back(
        MatchJobOf(PairingRequest(request, first, second, /*with_openings=*/false).settings(), book,
                   slice, uint64_t(slice.pairing) * request.games_per_pairing()));
  }
  return out;
}

std::optional<stats::SprtParams> SprtOf(const v1::SubmitMatchRequest& request) {
  if (!request.has_sprt()) return std::nullopt;
  return match::SprtParamsOf(request.sprt());
}

uint32_t DefaultPairsPerJob(uint32_t max_worker_threads, uint32_t concurrency) {
  uint32_t pairs = max_worker_threads;
  if (concurrency > 0) pairs = std::min(pairs, concurrency);
  return std::clamp<uint32_t>(pairs, 2, 64);
}

std::vector<std::string_view> BookLines(std::string_view openings) {
  std::vector<std::string_view> book;
  for (std::string_view line : Split(openings, '\n')) {
    line = Strip(line);
    if (!line.empty() && line[0] != '#') book.push_back(line);
  }
  return book;
}

std::vector<MatchSlice> PlanMatchSlices(const v1::SubmitMatchRequest& request) {
  const uint64_t games = request.games() > 0 ? request.games() : kMaxSprtGames;
  const uint64_t pairs = games / 2;
  const uint32_t pairs_per_job = request.settings().pairs_per_job();
  const uint64_t per_job = pairs_per_job > 0 ? pairs_per_job : 2;
  std::vector<MatchSlice> slices;
  slices.reserve((pairs + per_job - 1) / per_job);
  for (uint64_t first = 0; first < pairs; first += per_job)
    slices.push_back({first, uint32_t(std::min(per_job, pairs - first)), 0});
  return slices;
}

v1::MatchJob MatchJobOf(const v1::GamesSettings& settings,
                        const std::vector<std::string_view>& book, const MatchSlice& slice,
                        uint64_t round_offset) {
  v1::MatchJob job;
  *job.mutable_engines() = settings.engines();
  job.set_tc(settings.tc());
  // Each job carries only its own openings, not the whole book (books can be megabytes).
  if (!book.empty()) {
    std::string openings;
    for (uint64_t p = slice.first_pair; p < slice.first_pair + slice.pairs; ++p)
      openings += Cat(book[p % book.size()], "\n");
    job.set_openings(std::move(openings));
    job.set_openings_per_pair(true);
  }
  job.set_openings_format("epd");
  *job.mutable_rules() = settings.rules();
  job.set_first_pair(slice.first_pair);
  job.set_pairs(slice.pairs);
  job.set_pairing(slice.pairing);
  job.set_round_offset(round_offset);
  job.set_concurrency(settings.concurrency());
  job.set_scale_nps(settings.scale_nps());
  return job;
}

std::vector<v1::MatchJob> PlanMatchJobs(const v1::SubmitMatchRequest& request) {
  const std::vector<std::string_view> book = BookLines(request.settings().openings());
  std::vector<v1::MatchJob> jobs;
  for (const MatchSlice& slice : PlanMatchSlices(request))
    jobs.push_back(MatchJobOf(request.settings(), book, slice, 0));
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
    const std::optional<GameResult> result = match::GameResultFromProto(g.result());
    if (!result)
      return absl::InvalidArgumentError(Cat(where, ": no result (", int(g.result()), ")"));
    const std::optional<match::GameEnd> end = match::GameEndFromProto(g.end());
    if (!end) return absl::InvalidArgumentError(Cat(where, ": no game end (", int(g.end()), ")"));
    absl::StatusOr<Position> start = Position::FromFen(g.start_fen());
    if (!start.ok())
      return absl::InvalidArgumentError(
          Cat(where, ": start position: ", std::string(start.status().message())));
    if (g.chess960()) start->SetChess960(true);
    std::optional<Game> game(std::in_place, *start);
    for (int m = 0; m < g.moves_size(); ++m) {
      absl::Status st = game->PlayUci(g.moves(m));
      if (!st.ok())
        return absl::InvalidArgumentError(Cat(where, ": move ", m + 1, " '", g.moves(m),
                                              "' refused: ", std::string(st.message())));
    }
    const GameOutcome outcome = game->Outcome();
    if (*end == match::GameEnd::kNormal) {
      if (!outcome.IsOver())
        return absl::InvalidArgumentError(
            Cat(where, ": reported as ended on the board, but the final position is not over"));
      if (outcome.result != *result)
        return absl::InvalidArgumentError(
            Cat(where, ": the board says ", std::string(ResultString(outcome.result)),
                ", the report says ", std::string(ResultString(*result))));
    } else if (outcome.IsOver() && *end != match::GameEnd::kAdjudication) {
      return absl::InvalidArgumentError(Cat(
          where, ": the board ended the game (", std::string(TerminationName(outcome.termination)),
          ") but it is reported as '", std::string(match::GameEndName(*end)), "'"));
    }
    // Only the engine to move can resign (it answers a `go`): the other side wins.
    if (*end == match::GameEnd::kResignation &&
        *result != (game->Current().SideToMove() == kWhite ? GameResult::kBlackWins
                                                           : GameResult::kWhiteWins))
      return absl::InvalidArgumentError(
          Cat(where, ": a resignation is the loss of the side to move, reported as ",
              std::string(ResultString(*result))));
    RETURN_IF_ERROR(CheckForfeit(job, g, *end, *result, i % 2, game->Current(), where));
    // A disconnect before the faulty engine's first move is a fault, not a game (the worker
    // releases such a job as a fault): never counted. Engine moves follow the book moves.
    if (*end == match::GameEnd::kDisconnect) {
      const std::optional<Color> faulty = match::SideFromProto(g.faulty());
      const uint32_t book =
          uint32_t(g.moves_size()) - std::min<uint32_t>(g.engine_moves(), g.moves_size());
      const Color first_mover = book % 2 ? ~start->SideToMove() : start->SideToMove();
      if (faulty && g.engine_moves() < (*faulty == first_mover ? 1u : 2u))
        return absl::InvalidArgumentError(Cat(
            where, ": a disconnect before the faulty engine's first move is a fault, not a game"));
    }
  }
  return absl::OkStatus();
}

void CountGames(const v1::MatchJobResult& result, match::MatchSummary& summary) {
  for (int i = 0; i + 1 < result.games_size(); i += 2)
    summary.AddPair(GameCountOf(result.games(i)), GameCountOf(result.games(i + 1)));
}

v1::MatchResult MatchResultOf(const v1::GamesSettings& settings, match::MatchSummary summary,
                              const std::optional<stats::SprtParams>& sprt, double seconds) {
  for (int i = 0; i < 2 && i < settings.engines_size(); ++i)
    summary.names[i] = settings.engines(i).name();
  summary.seconds = seconds;
  if (summary.moves > 0) {
    // Measured by the workers inside their game loops; the slots of a cluster are not known.
    summary.game_loop_overhead_ms_per_move =
        std::max(0.0, summary.game_loop_seconds - summary.think_seconds) * 1000 /
        double(summary.moves);
    summary.overhead_ms_per_move = summary.game_loop_overhead_ms_per_move;
  }
  v1::MatchResult out = match::ToMatchResult(summary, sprt);
  out.set_time_control(settings.tc());
  for (const v1::EngineSpec& e : settings.engines())
    out.add_engine_time_controls(e.tc().empty() ? settings.tc() : e.tc());
  return out;
}

void FillTournamentStatus(const v1::SubmitTournamentRequest& request,
                          const std::vector<match::MatchSummary>& tallies, double seconds,
                          v1::TournamentRunStatus& out) {
  const std::vector<std::pair<int, int>> pairings = TournamentPairings(request);
  out.clear_pairings();
  out.clear_standings();
  std::vector<stats::PairingResult> results;
  uint64_t games = 0;
  for (size_t k = 0; k < pairings.size() && k < tallies.size(); ++k) {
    *out.add_pairings() =
        MatchResultOf(PairingRequest(request, pairings[k].first, pairings[k].second).settings(),
                      tallies[k], std::nullopt, seconds);
    games += tallies[k].games;
    if (tallies[k].games > 0)
      results.push_back({pairings[k].first, pairings[k].second, tallies[k].trinomial});
  }
  out.set_games(games);
  std::vector<std::string> names;
  for (const v1::EngineSpec& e : request.settings().engines()) names.push_back(e.name());
  (void)AddStandings(names, results, *out.mutable_standings());  // fails until games connect all
}

}  // namespace arbiter::coordinator

namespace arbiter::coordinator {

uint32_t ThreadsPerGame(const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines) {
  uint32_t most = 1;
  for (const v1::EngineSpec& e : engines) {
    uint32_t threads = 1;
    for (const auto& [k, v] : e.options())
      if (match::SameOptionName(k, "Threads") &&
          (!ParseNumber(v, threads) || threads > kMaxEngineThreads))
        threads = 1;
    most = std::max(most, threads);
  }
  return most;
}

absl::Status CheckThreadsFit(const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines,
                             uint32_t concurrency, uint32_t max_worker_threads) {
  if (max_worker_threads == 0) return absl::OkStatus();
  const uint32_t per_game = ThreadsPerGame(engines);
  if (per_game > max_worker_threads)
    return absl::FailedPreconditionError(
        Cat("an engine asks for Threads=", per_game, " but no connected worker has more than ",
            max_worker_threads, " threads: its games would oversubscribe the cores"));
  if (concurrency > 0 && uint64_t(per_game) * concurrency > max_worker_threads)
    return absl::FailedPreconditionError(
        Cat("concurrency ", concurrency, " x Threads ", per_game, " = ",
            uint64_t(per_game) * concurrency, " threads, more than any connected worker has (",
            max_worker_threads, "): lower the concurrency or the engines' Threads"));
  return absl::OkStatus();
}

absl::Status CheckWorkerEngineReport(const v1::MatchJob& job, const v1::MatchJobResult& result) {
  if (result.engine_checks_size() > job.engines_size())
    return absl::InvalidArgumentError(Cat("engine_checks: at most ", job.engines_size(),
                                          " entries, got ", result.engine_checks_size()));
  for (const v1::EngineCheck& c : result.engine_checks()) {
    bool known = false;
    for (const v1::EngineSpec& e : job.engines()) known |= e.name() == c.name();
    if (!known)
      return absl::InvalidArgumentError(Cat("engine_checks: '",
                                            c.name().substr(0, kMaxEngineNameBytes),
                                            "' is not an engine of the job"));
    if (!c.sha256().empty() && !net::IsSha256Hex(c.sha256()))
      return absl::InvalidArgumentError(
          Cat("engine_checks: sha256 of '", c.name(), "' is not 64 lowercase hex digits"));
    if (c.bench() > kMaxBenchNodes)
      return absl::InvalidArgumentError(
          Cat("engine_checks: bench of '", c.name(), "' above ", kMaxBenchNodes));
  }
  if (result.has_clock_scale()) {
    const v1::ClockScale& s = result.clock_scale();
    if (job.scale_nps() <= 0)
      return absl::InvalidArgumentError("clock_scale reported for a job without scale_nps");
    if (!std::isfinite(s.factor()) || s.factor() < kMinClockScale || s.factor() > kMaxClockScale ||
        s.measured_nps() == 0 || s.measured_nps() > uint64_t(kMaxScaleNps) * 100 ||
        s.source().size() > 256)
      return absl::InvalidArgumentError(
          Cat("clock_scale: factor must be ", kMinClockScale, "..", kMaxClockScale,
              ", measured_nps 1..", uint64_t(kMaxScaleNps) * 100, ", source at most 256 bytes"));
  } else if (job.scale_nps() > 0) {
    return absl::InvalidArgumentError("the job's clocks are scaled: clock_scale is required");
  }
  return absl::OkStatus();
}

absl::Status CheckEngineRefusal(const v1::EngineRefusal& r) {
  if (r.engine().empty() || r.engine().size() > kMaxEngineNameBytes || r.reason().size() > 1024 ||
      (!r.sha256().empty() && !net::IsSha256Hex(r.sha256())) ||
      r.declared_bench() > kMaxBenchNodes || r.measured_bench() > kMaxBenchNodes)
    return absl::InvalidArgumentError(Cat("refusal: engine 1..", kMaxEngineNameBytes,
                                          " bytes, reason at most 1024 bytes, sha256 ",
                                          "64 hex digits, bench at most ", kMaxBenchNodes));
  return absl::OkStatus();
}

}  // namespace arbiter::coordinator

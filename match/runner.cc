#include "match/runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "base/strings.h"

namespace arbiter::match {
namespace {

double CpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t RssKib() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * uint64_t(sysconf(_SC_PAGESIZE)) / 1024 : 0;
}

}  // namespace

absl::StatusOr<MatchSummary> RunMatch(const MatchOptions& options, const ProgressFn& progress,
                                      const GameFn& on_game) {
  if (options.games == 0 && !options.sprt)
    return absl::InvalidArgumentError("--games must be positive unless --sprt is given");
  ScheduleProgressFn p;
  if (progress) p = [&](size_t, const MatchSummary& s) { progress(s); };
  ScheduleGameFn g;
  if (on_game) g = [&](size_t, uint64_t round, const GameRecord& r) { on_game(round, r); };
  ASSIGN_OR_RETURN(std::vector<MatchSummary> out, RunSchedule({options}, p, g));
  return std::move(out[0]);
}

absl::StatusOr<std::vector<MatchSummary>> RunSchedule(const std::vector<MatchOptions>& pairings,
                                                      const ScheduleProgressFn& progress,
                                                      const ScheduleGameFn& on_game) {
  if (pairings.empty()) return absl::InvalidArgumentError("no pairing to play");
  const MatchOptions& base = pairings[0];
  const size_t npairings = pairings.size();
  if (base.concurrency < 1)
    return absl::InvalidArgumentError(Cat("--concurrency ", base.concurrency, " must be >= 1"));
  std::vector<std::array<TimeControl, 2>> tcs(npairings);
  for (size_t k = 0; k < npairings; ++k) {
    const MatchOptions& options = pairings[k];
    if (options.games % 2 != 0)
      return absl::InvalidArgumentError(
          Cat("--games ", options.games, " is odd: games are played in pairs (colours reversed)"));
    if (options.games == 0 && (npairings > 1 || !options.sprt))
      return absl::InvalidArgumentError("--games must be positive unless --sprt is given");
    if (options.sprt && npairings > 1)
      return absl::InvalidArgumentError("an SPRT applies to one pairing, not to a schedule");
    if (options.engines[0].name == options.engines[1].name)
      return absl::InvalidArgumentError(
          Cat("both engines are named '", options.engines[0].name, "': give them distinct name="));
    if (options.sprt) RETURN_IF_ERROR(stats::ValidateSprtParams(*options.sprt));
    for (int i = 0; i < 2; ++i) {
      if (options.engines[i].tc.empty()) {
        tcs[k][i] = options.tc;
        continue;
      }
      absl::StatusOr<TimeControl> tc = ParseTimeControl(options.engines[i].tc);
      if (!tc.ok())
        return absl::InvalidArgumentError(
            Cat("engine '", options.engines[i].name, "': ", std::string(tc.status().message())));
      tcs[k][i] = *tc;
    }
  }
  absl::StatusOr<OpeningBook> book = OpeningBook::Load(base.book);
  if (!book.ok()) return book.status();
  const bool chess960 = base.chess960 || book->chess960();

  std::ofstream pgn;
  if (!base.pgn_out.empty()) {
    pgn.open(base.pgn_out, std::ios::app);
    if (!pgn) return absl::InvalidArgumentError(Cat("cannot open --pgn-out '", base.pgn_out, "'"));
  }

  // The schedule: game n is game g of pair `pair` of pairing k. One pairing: n = 2 * pair + g
  // (unbounded under an SPRT); several: round by round, each pairing's next pair in turn.
  struct Scheduled {
    size_t pairing;
    uint64_t pair;
    int g;
  };
  std::vector<Scheduled> order;
  uint64_t total_games = base.games ? base.games : std::numeric_limits<uint64_t>::max() - 1;
  if (npairings > 1) {
    for (uint64_t pair = 0;; ++pair) {
      bool any = false;
      for (size_t k = 0; k < npairings; ++k) {
        if (2 * pair >= pairings[k].games) continue;
        any = true;
        order.push_back({k, pair, 0});
        order.push_back({k, pair, 1});
      }
      if (!any) break;
    }
    total_games = order.size();
  }
  auto game_at = [&](uint64_t n) {
    return npairings > 1 ? order[n] : Scheduled{0, n / 2, int(n % 2)};
  };

  std::atomic<uint64_t> next_game{0};
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  std::vector<MatchSummary> summaries(npairings);
  for (size_t k = 0; k < npairings; ++k) {
    summaries[k].names[0] = pairings[k].engines[0].name;
    summaries[k].names[1] = pairings[k].engines[1].name;
  }
  const double cpu0 = CpuSeconds();
  const SteadyTime wall0 = SteadyClock::now();
  const int ncpu = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));

  // One process per engine and slot, started on first use; the first game's pair starts now so
  // that a wrong path or a broken binary fails the run at once.
  using EngineSet = std::map<std::string, std::unique_ptr<UciEngine>>;
  std::vector<EngineSet> slot_engines(base.concurrency);
  auto engine_for = [&](int slot, const EngineSpec& spec) -> UciEngine& {
    std::unique_ptr<UciEngine>& e = slot_engines[slot][spec.name];
    if (!e) {
      std::vector<int> cpus;
      if (base.affinity) cpus.push_back(slot % ncpu);
      e = std::make_unique<UciEngine>(spec, base.timeouts, base.limits, cpus, base.sandbox);
    }
    return *e;
  };
  int engine_threads = 1;  // of the busiest engine: the two of a game think in turn, never together
  for (int e = 0; e < 2; ++e) {
    UciEngine& engine = engine_for(0, pairings[game_at(0).pairing].engines[e]);
    if (absl::Status st = engine.Start(); !st.ok()) return st;
    engine_threads = std::max(engine_threads, engine.Threads());
  }
  for (const MatchOptions& o : pairings)
    for (const EngineSpec& spec : o.engines)
      engine_threads = std::max(engine_threads, SpecThreads(spec));
  if (base.warn && engine_threads * base.concurrency > ncpu)
    base.warn(Cat(base.concurrency, " game", base.concurrency > 1 ? "s" : "", " at once x ",
                  engine_threads, " engine thread", engine_threads > 1 ? "s" : "", " = ",
                  engine_threads * base.concurrency, " threads on ", ncpu,
                  " CPUs: the engines will compete for them (lower --concurrency or Threads)"));

  // Games are handed out one at a time (the two games of a pair may run on different slots);
  // a pair is counted once both of its games are in.
  struct PendingPair {
    GameRecord recs[2];
    uint64_t rounds[2] = {0, 0};
    bool have[2] = {false, false};
  };
  std::map<std::pair<size_t, uint64_t>, PendingPair> pending;
  // The first game an engine could not play (Unplayed): the match stops with its reason.
  absl::Status fault;  // guarded by mu

  auto account_pair = [&](size_t k, const PendingPair& p) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    MatchSummary& summary = summaries[k];
    if (p.recs[0].end == GameEnd::kAborted || p.recs[1].end == GameEnd::kAborted) {
      summary.aborted_games += 2;
      return;
    }
    summary.AddPair(GameCountOf(p.recs[0]), GameCountOf(p.recs[1]));
    for (int g = 0; g < 2; ++g) {
      if (pgn.is_open()) {
        PgnContext ctx = pairings[k].pgn;
        ctx.round = Cat(p.rounds[g]);
        pgn << WritePgn(ToPgnGame(p.recs[g], ctx));
      }
      if (on_game) on_game(k, p.rounds[g], p.recs[g]);
    }
    if (pgn.is_open()) pgn.flush();
    summary.elo = stats::EstimateElo(summary.pentanomial);
    if (pairings[k].sprt) {
      summary.sprt = stats::EvaluateSprt(summary.pentanomial, *pairings[k].sprt);
      if (summary.sprt->decision != stats::SprtDecision::kContinue) stop = true;
    }
    summary.seconds = std::chrono::duration<double>(SteadyClock::now() - wall0).count();
    summary.rss_kib = RssKib();
    if (progress) progress(k, summary);
  };

  auto slot = [&](int index) {
    for (;;) {
      const uint64_t n = next_game.fetch_add(1);
      if (n >= total_games || stop.load()) break;
      const Scheduled at = game_at(n);
      const MatchOptions& o = pairings[at.pairing];
      GameSettings s = o.settings;
      s.chess960 = chess960;
      s.tc[kWhite] = tcs[at.pairing][at.g];
      s.tc[kBlack] = tcs[at.pairing][1 - at.g];
      UciEngine& first = engine_for(index, o.engines[0]);
      UciEngine& second = engine_for(index, o.engines[1]);
      UciEngine* players[2] = {at.g == 0 ? &first : &second, at.g == 0 ? &second : &first};
      GameRecord rec = PlayGame(players, book->ForPair(at.pair), s, &stop);
      absl::MutexLock lock(&mu);
      if (Unplayed(rec)) {
        if (fault.ok())
          fault = absl::FailedPreconditionError(
              Cat("engine '", rec.faulty == kWhite ? rec.white : rec.black,
                  "' could not play: ", rec.start_error.empty() ? rec.reason : rec.start_error));
        stop = true;
        break;
      }
      PendingPair& p = pending[{at.pairing, at.pair}];
      p.recs[at.g] = std::move(rec);
      p.rounds[at.g] = uint64_t(o.round_offset) + n + 1;
      p.have[at.g] = true;
      if (p.have[0] && p.have[1]) {
        account_pair(at.pairing, p);
        pending.erase({at.pairing, at.pair});
      }
    }
    for (auto& [name, engine] : slot_engines[index]) engine->Quit();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < base.concurrency; ++i) threads.emplace_back(slot, i);
  for (std::thread& t : threads) t.join();

  absl::MutexLock lock(&mu);
  if (!fault.ok()) return fault;
  for (const auto& [key, p] : pending) summaries[key.first].aborted_games += 2;
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - wall0).count();
  uint64_t all_moves = 0;
  for (const MatchSummary& s : summaries) all_moves += s.moves;
  const double cpu = CpuSeconds() - cpu0;
  for (MatchSummary& summary : summaries) {
    summary.seconds = seconds;
    summary.elo = stats::EstimateElo(summary.pentanomial);
    if (summary.moves == 0) continue;
    const double slots = std::min<double>(base.concurrency, std::max<uint64_t>(1, summary.games));
    summary.game_loop_overhead_ms_per_move =
        std::max(0.0, summary.game_loop_seconds - summary.think_seconds) * 1000 / summary.moves;
    // A pairing of a schedule shares the wall time with the others: its own game loops measure it.
    summary.overhead_ms_per_move =
        npairings > 1
            ? summary.game_loop_overhead_ms_per_move
            : std::max(0.0, seconds * slots - summary.think_seconds) * 1000 / summary.moves;
    summary.cpu_ms_per_move = cpu * 1000 / double(all_moves);
  }
  return summaries;
}

}  // namespace arbiter::match

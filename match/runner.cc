#include "match/runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"
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
  if (options.games % 2 != 0)
    return absl::InvalidArgumentError(
        Cat("--games ", options.games, " is odd: games are played in pairs (colours reversed)"));
  if (options.games == 0 && !options.sprt)
    return absl::InvalidArgumentError("--games must be positive unless --sprt is given");
  if (options.concurrency < 1)
    return absl::InvalidArgumentError(Cat("--concurrency ", options.concurrency, " must be >= 1"));
  if (options.engines[0].name == options.engines[1].name)
    return absl::InvalidArgumentError(
        Cat("both engines are named '", options.engines[0].name, "': give them distinct name="));
  if (options.sprt) {
    absl::Status st = stats::ValidateSprtParams(*options.sprt);
    if (!st.ok()) return st;
  }
  TimeControl tcs[2];
  for (int i = 0; i < 2; ++i) {
    if (options.engines[i].tc.empty()) {
      tcs[i] = options.tc;
      continue;
    }
    absl::StatusOr<TimeControl> tc = ParseTimeControl(options.engines[i].tc);
    if (!tc.ok())
      return absl::InvalidArgumentError(
          Cat("engine '", options.engines[i].name, "': ", std::string(tc.status().message())));
    tcs[i] = *tc;
  }
  absl::StatusOr<OpeningBook> book = OpeningBook::Load(options.book);
  if (!book.ok()) return book.status();
  const bool chess960 = options.chess960 || book->chess960();

  std::ofstream pgn;
  if (!options.pgn_out.empty()) {
    pgn.open(options.pgn_out, std::ios::app);
    if (!pgn)
      return absl::InvalidArgumentError(Cat("cannot open --pgn-out '", options.pgn_out, "'"));
  }

  const uint64_t total_games =
      options.games ? options.games : std::numeric_limits<uint64_t>::max() - 1;
  std::atomic<uint64_t> next_game{0};
  std::atomic<bool> stop{false};
  absl::Mutex mu;
  MatchSummary summary;
  summary.names[0] = options.engines[0].name;
  summary.names[1] = options.engines[1].name;
  const double cpu0 = CpuSeconds();
  const SteadyTime wall0 = SteadyClock::now();
  const int ncpu = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));

  // One engine pair per slot; slot 0's pair starts now so that a wrong path or a broken binary
  // fails the match at once.
  std::vector<std::unique_ptr<UciEngine>> engines;
  for (int i = 0; i < options.concurrency; ++i) {
    std::vector<int> cpus;
    if (options.affinity) cpus.push_back(i % ncpu);
    for (int e = 0; e < 2; ++e)
      engines.push_back(std::make_unique<UciEngine>(options.engines[e], options.timeouts,
                                                    options.limits, cpus, options.sandbox));
  }
  for (int e = 0; e < 2; ++e)
    if (absl::Status st = engines[e]->Start(); !st.ok()) return st;

  // Games are handed out one at a time (the two games of a pair may run on different slots);
  // a pair is counted once both of its games are in.
  struct PendingPair {
    GameRecord recs[2];
    bool have[2] = {false, false};
  };
  std::map<uint64_t, PendingPair> pending;
  // The first game an engine could not play (Unplayed): the match stops with its reason.
  absl::Status fault;  // guarded by mu

  auto account_pair = [&](uint64_t pair,
                          const GameRecord recs[2]) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (recs[0].end == GameEnd::kAborted || recs[1].end == GameEnd::kAborted) {
      summary.aborted_games += 2;
      return;
    }
    summary.AddPair(GameCountOf(recs[0]), GameCountOf(recs[1]));
    for (int g = 0; g < 2; ++g) {
      const GameRecord& r = recs[g];
      const uint64_t round = options.round_offset + 2 * pair + g + 1;
      if (pgn.is_open()) {
        PgnContext ctx = options.pgn;
        ctx.round = Cat(round);
        pgn << WritePgn(ToPgnGame(r, ctx));
      }
      if (on_game) on_game(round, r);
    }
    if (pgn.is_open()) pgn.flush();
    summary.elo = stats::EstimateElo(summary.pentanomial);
    if (options.sprt) {
      summary.sprt = stats::EvaluateSprt(summary.pentanomial, *options.sprt);
      if (summary.sprt->decision != stats::SprtDecision::kContinue) stop = true;
    }
    summary.seconds = std::chrono::duration<double>(SteadyClock::now() - wall0).count();
    summary.rss_kib = RssKib();
    if (progress) progress(summary);
  };

  auto slot = [&](int index) {
    UciEngine& first = *engines[2 * index];
    UciEngine& second = *engines[2 * index + 1];
    for (;;) {
      const uint64_t game = next_game.fetch_add(1);
      if (game >= total_games || stop.load()) break;
      const uint64_t pair = game / 2;
      const int g = int(game % 2);
      GameSettings s = options.settings;
      s.chess960 = chess960;
      s.tc[kWhite] = tcs[g];
      s.tc[kBlack] = tcs[1 - g];
      UciEngine* players[2] = {g == 0 ? &first : &second, g == 0 ? &second : &first};
      GameRecord rec = PlayGame(players, book->ForPair(pair), s, &stop);
      absl::MutexLock lock(&mu);
      if (Unplayed(rec)) {
        if (fault.ok())
          fault = absl::FailedPreconditionError(
              Cat("engine '", rec.faulty == kWhite ? rec.white : rec.black,
                  "' could not play: ", rec.start_error.empty() ? rec.reason : rec.start_error));
        stop = true;
        break;
      }
      PendingPair& p = pending[pair];
      p.recs[g] = std::move(rec);
      p.have[g] = true;
      if (p.have[0] && p.have[1]) {
        account_pair(pair, p.recs);
        pending.erase(pair);
      }
    }
    first.Quit();
    second.Quit();
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < options.concurrency; ++i) threads.emplace_back(slot, i);
  for (std::thread& t : threads) t.join();

  absl::MutexLock lock(&mu);
  if (!fault.ok()) return fault;
  summary.aborted_games += pending.size() * 2;
  summary.seconds = std::chrono::duration<double>(SteadyClock::now() - wall0).count();
  summary.elo = stats::EstimateElo(summary.pentanomial);
  if (summary.moves > 0) {
    const double slots =
        std::min<double>(options.concurrency, std::max<uint64_t>(1, summary.games));
    summary.overhead_ms_per_move =
        std::max(0.0, summary.seconds * slots - summary.think_seconds) * 1000 / summary.moves;
    summary.game_loop_overhead_ms_per_move =
        std::max(0.0, summary.game_loop_seconds - summary.think_seconds) * 1000 / summary.moves;
    summary.cpu_ms_per_move = (CpuSeconds() - cpu0) * 1000 / summary.moves;
  }
  return summary;
}

}  // namespace arbiter::match

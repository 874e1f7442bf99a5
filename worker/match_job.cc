#include "worker/match_job.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/numbers.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/notation.h"
#include "engine/pgn.h"
#include "engine/rules.h"
#include "match/game.h"
#include "match/game_pgn.h"
#include "match/movegen_check.h"
#include "match/time_control.h"
#include "match/uci_engine.h"
#include "match/wire.h"

namespace arbiter::worker {
namespace {

absl::StatusOr<match::EngineSpec> ToEngineSpec(const v1::EngineSpec& e, EngineCache& cache,
                                               const EngineHost& host) {
  match::EngineSpec spec;
  spec.name = e.name();
  switch (e.source_case()) {
    case v1::EngineSpec::kBuiltin:
      spec.cmd = std::string(match::kBuiltinEngine);
      break;
    case v1::EngineSpec::kPath:
      // A refused path is never started: the job is a fault of the engine, naming the reason.
      if (absl::Status st = CheckEngineDir(e.name(), e.path(), host.engine_dirs); !st.ok())
        spec.refused = std::string(st.message());
      spec.cmd = e.path();
      spec.args.assign(e.args().begin(), e.args().end());
      break;
    case v1::EngineSpec::kSha256: {
      ASSIGN_OR_RETURN(spec.cmd, cache.Get(e.sha256()));
      spec.args.assign(e.args().begin(), e.args().end());
      break;
    }
    case v1::EngineSpec::kSourceTree: {
      // A build that fails is the engine's fault, like one that cannot start: the refusal
      // carries the build log's tail to the run's message.
      const v1::SourceTree& t = e.source_tree();
      spec.cmd = Cat("source:", t.sha256().substr(0, 12));
      spec.args.assign(e.args().begin(), e.args().end());
      if (!host.builder) {
        spec.refused = "this worker cannot build engines from source";
        break;
      }
      ASSIGN_OR_RETURN(const std::string archive, cache.Get(t.sha256()));
      absl::StatusOr<BuiltEngine> built = host.builder->Build({.archive = archive,
                                                               .sha256 = t.sha256(),
                                                               .build = t.build(),
                                                               .binary = t.binary(),
                                                               .cpu_level = host.cpu_level});
      if (built.ok())
        spec.cmd = built->path;
      else
        spec.refused = Cat("build failed: ", std::string(built.status().message()));
      break;
    }
    default:
      return absl::InvalidArgumentError(Cat("engine '", e.name(), "' has no source"));
  }
  for (const auto& [k, v] : e.options()) spec.options.emplace_back(k, v);
  spec.tc = e.tc();
  if (e.protocol() == v1::ENGINE_PROTOCOL_XBOARD) spec.protocol = match::Protocol::kXboard;
  return spec;
}

absl::StatusOr<std::vector<match::Opening>> ParseOpenings(const std::string& text) {
  std::vector<match::Opening> out;
  for (std::string_view line : Split(text, '\n')) {
    line = Strip(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string_view> words = SplitWords(line);
    std::string fen;
    for (size_t i = 0; i < words.size() && i < 4; ++i) fen += Cat(i ? " " : "", words[i]);
    ASSIGN_OR_RETURN(Position pos, Position::FromFen(fen));
    match::Opening o;
    o.start = pos;
    out.push_back(std::move(o));
  }
  if (out.empty()) out.emplace_back();
  return out;
}

v1::ReportedGame Report(const match::GameRecord& r, uint64_t pair, int g, const std::string& event,
                        uint64_t round_offset, const std::string& scale_tag) {
  v1::ReportedGame out;
  out.set_pair(pair);
  out.set_game(uint32_t(g));
  out.set_start_fen(r.start.Fen());
  out.set_chess960(r.start.IsChess960());
  Position pos = r.start;
  for (const match::MoveRecord& m : r.moves) {
    out.add_moves(MoveToUci(pos, m.move));
    UndoInfo undo;
    pos.DoMove(m.move, undo);
  }
  // The PGN the local `arbiter match` writes (tags, move comments with score/depth/time).
  match::PgnContext context;
  if (!event.empty()) context.event = event;
  context.round = Cat(round_offset + 2 * pair + uint64_t(g) + 1);
  PgnGame pgn = match::ToPgnGame(r, context);
  if (!scale_tag.empty()) pgn.extra_tags.emplace_back("TimeControlScale", scale_tag);
  out.set_result(match::GameResultToProto(r.result));
  out.set_end(match::GameEndToProto(r.end));
  out.set_reason(r.reason);
  out.set_pgn(WritePgn(pgn));
  out.set_engine_moves(uint32_t(r.engine_moves));
  out.set_think_seconds(double(r.think.count()) / 1e6);
  out.set_wall_seconds(double(r.wall.count()) / 1e6);
  if (match::IsFault(r.end)) out.set_faulty(match::SideToProto(r.faulty));
  return out;
}

// The `Threads` option of an engine, in any case (1 when not given or not a number).
uint32_t ThreadsOption(const match::EngineSpec& spec) {
  uint32_t threads = 1;
  for (const auto& [name, value] : spec.options)
    if (match::SameOptionName(name, "Threads") && (!ParseNumber(value, threads) || threads == 0))
      threads = 1;
  return threads;
}

// The checks before a job's first game: each engine's binary and, when a signature is declared,
// its bench; then the clock scale when the run asks for one. Fills `out`'s engine_checks and
// clock_scale, `tcs` scaled and `scale_tag` (the PGN tag); a refusal is FAILED_PRECONDITION with
// `refusal` set.
absl::Status CheckEngines(const v1::MatchJob& job, const match::EngineSpec (&specs)[2],
                          const EngineHost& host, match::TimeControl (&tcs)[2],
                          v1::MatchJobResult& out, std::string& scale_tag,
                          v1::EngineRefusal* refusal) {
  auto refuse = [&](const v1::EngineSpec& e, uint64_t measured, const std::string& sha256,
                    const std::string& reason, bool fault = false) {
    if (refusal) {
      refusal->set_fault(fault);
      refusal->set_engine(e.name());
      refusal->set_declared_bench(e.bench());
      refusal->set_measured_bench(measured);
      refusal->set_sha256(sha256);
      refusal->set_reason(reason.substr(0, 1024));
    }
    return absl::FailedPreconditionError(Cat("engine '", e.name(), "': ", reason));
  };
  const bool declared = job.engines(0).bench() > 0 || job.engines(1).bench() > 0;
  if (!host.checker && (declared || job.scale_nps() > 0))
    return refuse(job.engines(0), 0, "", "this worker cannot check engines (no checker)");
  std::optional<match::BenchResult> base;
  for (int i = 0; host.checker && i < 2; ++i) {
    const v1::EngineSpec& e = job.engines(i);
    if (!specs[i].refused.empty()) continue;  // never started: the job is a fault, naming why
    absl::StatusOr<EngineIdentity> id = host.checker->Identify(specs[i]);
    if (!id.ok()) {
      if (e.bench() == 0) continue;  // the games will say what is wrong with it (a fault)
      // No binary to bench: the engine cannot start anywhere this path is missing, a fault.
      return refuse(e, 0, "", std::string(id.status().message()), /*fault=*/true);
    }
    v1::EngineCheck& c = *out.add_engine_checks();
    c.set_name(e.name());
    c.set_sha256(id->sha256);
    if (e.bench() == 0 && e.source_case() == v1::EngineSpec::kSourceTree) {
      // A build's bench, where the engine answers one: the coordinator compares it across the
      // workers (builds for other CPUs must still search the same tree).
      absl::StatusOr<match::BenchResult> b =
          host.checker->ProbeBench(specs[i], *id, std::chrono::seconds(15));
      if (b.ok() && b->nodes > 0) {
        c.set_bench(b->nodes);
        c.set_bench_nps(b->nps);
      }
      continue;
    }
    if (e.bench() == 0) continue;
    absl::StatusOr<match::BenchResult> b = host.checker->Bench(specs[i], *id);
    if (!b.ok()) return refuse(e, 0, id->sha256, std::string(b.status().message()));
    c.set_bench(b->nodes);
    c.set_bench_nps(b->nps);
    if (b->nodes != e.bench())
      return refuse(e, b->nodes, id->sha256,
                    Cat("bench signature ", b->nodes, " differs from the declared ", e.bench(),
                        " (sha256 ", id->sha256.substr(0, 12), ")"));
    if (i == 0) base = *b;
  }
  if (job.scale_nps() <= 0) return absl::OkStatus();
  const v1::EngineSpec& first = job.engines(0);
  uint64_t nps = host.measured_nps;
  std::string source = "--measured-nps";
  if (nps == 0 && base && base->nps > 0) {
    nps = base->nps;
    source = Cat("bench of engine '", first.name(), "'");
  }
  if (nps == 0) {
    // No bench of the base engine: a fixed search of the builtin engine (`arbiter bench`).
    const match::EngineSpec builtin{.name = "builtin", .cmd = std::string(match::kBuiltinEngine)};
    absl::StatusOr<EngineIdentity> id = host.checker->Identify(builtin);
    absl::StatusOr<match::BenchResult> b = id.ok()
                                               ? host.checker->Bench(builtin, *id)
                                               : absl::StatusOr<match::BenchResult>(id.status());
    if (!b.ok() || b->nps == 0)
      return refuse(
          first, 0, "",
          Cat("cannot measure this worker's speed: ",
              b.ok() ? "the builtin bench printed no nodes/s" : std::string(b.status().message())));
    nps = b->nps;
    source = "builtin search (arbiter bench)";
  }
  const double factor = double(job.scale_nps()) / double(nps);
  if (!(factor >= match::kMinClockScale && factor <= match::kMaxClockScale))
    return refuse(first, base ? base->nodes : 0, "",
                  Cat("measured speed ", nps, " nodes/s gives a clock scale of ", factor,
                      " for the reference ", job.scale_nps(), ", outside ", match::kMinClockScale,
                      "..", match::kMaxClockScale));
  const std::string unscaled = tcs[0].ToString();
  for (match::TimeControl& tc : tcs) tc = match::ScaleTimeControl(tc, factor);
  v1::ClockScale& s = *out.mutable_clock_scale();
  s.set_factor(factor);
  s.set_measured_nps(nps);
  s.set_source(source.substr(0, 256));
  char f[32];
  std::snprintf(f, sizeof f, "%.4f", factor);
  scale_tag = Cat(f, " (reference ", job.scale_nps(), " nps, measured ", nps, " nps by ", source,
                  "; unscaled ", unscaled, ")");
  return absl::OkStatus();
}

}  // namespace

int PhysicalCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string dir = Cat("/sys/devices/system/cpu/cpu", cpu, "/topology/");
    std::ifstream package(dir + "physical_package_id"), core(dir + "core_id");
    std::string p, c;
    if (!(package >> p) || !(core >> c)) return CPU_COUNT(&set);  // no topology: CPUs
    cores.insert({p, c});
  }
  return std::max(1, int(cores.size()));
}

absl::Status CheckEngineDir(const std::string& name, const std::string& path,
                            const std::vector<std::string>& dirs) {
  if (dirs.empty()) return absl::OkStatus();
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (!ec) {
    for (const std::string& d : dirs) {
      std::error_code dec;
      const std::filesystem::path dir = std::filesystem::canonical(d, dec);
      if (dec) continue;
      auto [end, _] = std::mismatch(dir.begin(), dir.end(), real.begin(), real.end());
      if (end == dir.end()) return absl::OkStatus();
    }
  }
  std::string list;
  for (const std::string& d : dirs) list += Cat(list.empty() ? "" : ", ", d);
  return absl::FailedPreconditionError(Cat("engine '", name, "': path '", path,
                                           "' is not in an engine directory of this worker (", list,
                                           ")", ec ? Cat(": ", ec.message()) : std::string()));
}

match::SandboxOptions WithRunLimits(match::SandboxOptions box, const v1::EngineLimits& run) {
  auto tighten = [](uint64_t& mine, uint64_t asked) {
    if (asked > 0 && (mine == 0 || asked < mine)) mine = asked;
  };
  match::ResourceLimits& l = box.limits;
  tighten(l.memory_mb, run.memory_mb());
  tighten(l.processes, run.processes());
  tighten(l.open_files, run.open_files());
  tighten(l.file_size_mb, run.file_size_mb());
  tighten(l.cpu_seconds, run.cpu_seconds());
  return box;
}

match::UciEngine& KeptEngine::For(const std::string& key, const match::EngineSpec& spec,
                                  const match::SandboxOptions& box) {
  if (engine_ && key == key_) return *engine_;
  Release();
  key_ = key;
  engine_ = std::make_unique<match::UciEngine>(spec, match::EngineTimeouts{},
                                               match::ProcessLimits{}, std::vector<int>{}, box);
  return *engine_;
}

void KeptEngine::Release() {
  if (engine_) engine_->Quit();
  engine_.reset();
  key_.clear();
}

absl::StatusOr<v1::MovegenJobResult> RunMovegenJob(const v1::MovegenJob& job, EngineCache& cache,
                                                   const std::atomic<bool>* stop,
                                                   const EngineHost& host, KeptEngine* kept,
                                                   uint64_t run_id) {
  v1::MovegenJobResult out;
  absl::StatusOr<match::PerftDialect> dialect = match::DialectFromProto(job.dialect());
  if (!dialect.ok()) {
    out.set_error(std::string(dialect.status().message()));
    return out;
  }
  ASSIGN_OR_RETURN(match::EngineSpec spec, ToEngineSpec(job.engine(), cache, host));
  const match::Millis timeout(job.timeout_ms() ? job.timeout_ms() : 60000);
  KeptEngine own;
  if (!kept) kept = &own;
  match::UciEngine& engine =
      kept->For(Cat(run_id, " ", job.engine().SerializeAsString()), spec, host.sandbox);
  match::MovegenChecker checker(engine, *dialect, timeout);
  for (const v1::MovegenPosition& p : job.positions()) {
    if (stop && *stop) {
      kept->Release();
      return absl::CancelledError("stopped");
    }
    absl::StatusOr<v1::MovegenPositionResult> r = checker.Check(p);
    if (!r.ok()) {
      out.clear_positions();
      out.set_error(std::string(r.status().message()).substr(0, 4000));
      break;
    }
    *out.add_positions() = std::move(*r);
    if (host.progress) host.progress->fetch_add(1, std::memory_order_relaxed);
  }
  out.set_engine((engine.id_name().empty() ? spec.name : engine.id_name()).substr(0, 256));
  if (!out.error().empty()) kept->Release();  // `engine` is gone from here on
  return out;
}

absl::StatusOr<v1::MatchJobResult> RunMatchJob(const v1::MatchJob& job, EngineCache& cache,
                                               int concurrency, const std::atomic<bool>* stop,
                                               const EngineHost& host, v1::EngineRefusal* refusal) {
  if (job.engines_size() != 2)
    return absl::InvalidArgumentError(Cat("match job needs 2 engines, got ", job.engines_size()));
  match::EngineSpec specs[2];
  match::TimeControl tcs[2];
  ASSIGN_OR_RETURN(match::TimeControl tc, match::ParseTimeControl(job.tc()));
  for (int i = 0; i < 2; ++i) {
    ASSIGN_OR_RETURN(specs[i], ToEngineSpec(job.engines(i), cache, host));
    tcs[i] = tc;
    if (!specs[i].tc.empty()) {
      ASSIGN_OR_RETURN(tcs[i], match::ParseTimeControl(specs[i].tc));
    }
  }
  v1::MatchJobResult out;
  std::string scale_tag;
  RETURN_IF_ERROR(CheckEngines(job, specs, host, tcs, out, scale_tag, refusal));
  // A game slot needs the cores of its largest `Threads` (one engine thinks at a time); slots
  // times that never exceed the worker's threads or its cores.
  const uint32_t per_game = std::max(ThreadsOption(specs[0]), ThreadsOption(specs[1]));
  const int capacity = host.cores > 0 ? std::min(concurrency, host.cores) : concurrency;
  if (per_game > uint32_t(std::max(1, capacity))) {
    const int heavy = ThreadsOption(specs[0]) >= ThreadsOption(specs[1]) ? 0 : 1;
    if (refusal) {
      refusal->set_engine(job.engines(heavy).name());
      refusal->set_reason(
          Cat("Threads=", per_game, " needs more than this worker's ", capacity, " threads/cores"));
    }
    return absl::FailedPreconditionError(
        Cat("engine '", job.engines(heavy).name(), "': Threads=", per_game,
            " needs more than this worker's ", capacity, " threads/cores"));
  }
  concurrency = std::max(1, capacity / int(per_game));
  ASSIGN_OR_RETURN(std::vector<match::Opening> openings, ParseOpenings(job.openings()));
  bool chess960 = job.rules().chess960();
  for (const match::Opening& o : openings) chess960 |= o.start.IsChess960();
  const uint32_t pairs = job.pairs();
  std::vector<match::GameRecord> records(2 * size_t(pairs));
  std::atomic<uint32_t> next{0};
  const v1::GameRules& rules = job.rules();
  match::GameSettings base;
  match::EngineTimeouts timeouts;
  match::ApplyRules(rules, base, timeouts);
  base.plies = host.progress;
  const match::SandboxOptions box = WithRunLimits(host.sandbox, rules.engine_limits());
  const int ncpu = int(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  // The first game an engine could not play (Unplayed) makes the job a fault: no slot starts
  // another game, and none of the job's games is reported.
  absl::Mutex fault_mu;
  std::optional<match::GameRecord> fault;
  std::atomic<bool> faulted{false};
  auto slot = [&](int index) {
    std::vector<int> cpus;  // --affinity: this slot's CPU
    if (job.rules().affinity()) cpus.push_back(index % ncpu);
    match::UciEngine first(specs[0], timeouts, {}, cpus, box),
        second(specs[1], timeouts, {}, cpus, box);
    for (uint32_t p; !faulted && (p = next.fetch_add(1)) < pairs;) {
      const match::Opening& opening =
          openings[(job.openings_per_pair() ? p : job.first_pair() + p) % openings.size()];
      for (int g = 0; g < 2 && !faulted; ++g) {
        match::UciEngine* engines[2] = {g == 0 ? &first : &second, g == 0 ? &second : &first};
        match::GameSettings s = base;
        s.chess960 = chess960;
        s.tc[kWhite] = tcs[g];
        s.tc[kBlack] = tcs[1 - g];
        match::GameRecord& r = records[2 * p + g];
        r = match::PlayGame(engines, opening, s, stop);
        if (!match::Unplayed(r)) continue;
        absl::MutexLock lock(&fault_mu);
        if (!fault) fault = r;
        faulted = true;
      }
    }
    first.Quit();
    second.Quit();
  };
  if (job.concurrency() > 0) concurrency = std::min<int>(concurrency, int(job.concurrency()));
  const int slots = std::max(1, std::min<int>(concurrency, int(pairs)));
  std::vector<std::thread> threads;
  for (int i = 1; i < slots; ++i) threads.emplace_back(slot, i);
  slot(0);
  for (auto& t : threads) t.join();
  if (fault) {
    const std::string& engine = fault->faulty == kWhite ? fault->white : fault->black;
    const std::string why = fault->start_error.empty() ? fault->reason : fault->start_error;
    if (refusal) {
      refusal->set_engine(engine);
      refusal->set_reason(why.substr(0, 1024));
      refusal->set_fault(true);
    }
    return absl::FailedPreconditionError(Cat("engine '", engine, "': ", why));
  }
  for (uint32_t p = 0; p < pairs; ++p) {
    for (int g = 0; g < 2; ++g) {
      const match::GameRecord& r = records[2 * p + g];
      if (r.end == match::GameEnd::kAborted) return absl::CancelledError("match job stopped");
      *out.add_games() =
          Report(r, job.first_pair() + p, g, job.rules().event(), job.round_offset(), scale_tag);
    }
  }
  return out;
}

}  // namespace arbiter::worker

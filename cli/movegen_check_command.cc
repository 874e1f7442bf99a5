// `arbiter movegen-check --engine CMD (--suite FILE | --fen FEN | --random N) (--depth N |
// --max-nodes N)`: the engine's own perft against arbiter's over many positions; on the cluster
// with --coordinator.
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "base/strings.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "cli/movegen_check_flags.h"
#include "cli/source_engines.h"
#include "engine/perft.h"
#include "engine/random_positions.h"
#include "match/movegen_check.h"

namespace arbiter::cli {

absl::StatusOr<std::vector<v1::MovegenPosition>> MovegenPositions(const MovegenCheckFlags& f) {
  std::vector<v1::MovegenPosition> out;
  if (f.depth < 0 || f.depth > match::kMaxMovegenDepth)
    return absl::InvalidArgumentError(
        Cat("--depth ", f.depth, " is outside 1..", match::kMaxMovegenDepth));
  if (f.depth == 0 && f.max_nodes == 0)
    return absl::InvalidArgumentError("give --depth N or --max-nodes N");
  if (f.random < 0 || size_t(f.random) > match::kMaxMovegenPositions)
    return absl::InvalidArgumentError(
        Cat("--random ", f.random, " is outside 0..", match::kMaxMovegenPositions));
  for (const std::string& path : f.suites) {
    ASSIGN_OR_RETURN(auto v, match::MovegenSuitePositions(path, f.depth, f.max_nodes));
    out.insert(out.end(), v.begin(), v.end());
  }
  auto with_budget = [&](const Position& pos, std::string source) {
    int d = f.depth ? f.depth : 1;
    if (f.max_nodes) {
      const int cap = f.depth ? f.depth : 6;
      d = 1;
      for (int k = 2; k <= cap && PerftCount(pos, k) <= f.max_nodes; ++k) d = k;
    }
    v1::MovegenPosition p;
    p.set_fen(pos.Fen());
    p.set_depth(d);
    p.set_source(std::move(source));
    out.push_back(std::move(p));
  };
  for (const std::string& fen : f.fens) {
    absl::StatusOr<Position> pos = Position::FromFen(fen);
    if (!pos.ok())
      return absl::InvalidArgumentError(Cat("--fen: ", std::string(pos.status().message())));
    with_budget(*pos, "--fen");
  }
  if (f.random > 0) {
    std::vector<Position> r = RandomPositions(f.random, f.seed);
    for (size_t i = 0; i < r.size(); ++i)
      with_budget(r[i], Cat("random ", i, i % 2 ? " (chess960)" : ""));
  }
  if (out.empty())
    return absl::InvalidArgumentError("no positions: give --suite, --fen or --random");
  if (out.size() > match::kMaxMovegenPositions)
    return absl::InvalidArgumentError(
        Cat(out.size(), " positions: at most ", match::kMaxMovegenPositions));
  return out;
}

absl::StatusOr<MovegenInput> ReadMovegenInput(const MovegenCheckFlags& f) {
  absl::StatusOr<match::PerftDialect> dialect =
      match::MakePerftDialect(f.dialect, f.perft_command, f.total_regex, f.divide_regex);
  if (!dialect.ok()) return dialect.status();
  absl::StatusOr<std::vector<v1::MovegenPosition>> positions = MovegenPositions(f);
  if (!positions.ok()) return positions.status();
  absl::StatusOr<match::EngineSpec> spec = match::ParseEngineSpec(f.engine);
  if (!spec.ok()) return spec.status();
  return MovegenInput{std::move(*dialect), std::move(*positions), std::move(*spec)};
}

namespace {

int RunLocal(const MovegenCheckFlags& f) {
  absl::StatusOr<MovegenInput> input = ReadMovegenInput(f);
  if (!input.ok()) {
    std::cerr << "error: " << input.status().message() << "\n";
    return 2;
  }
  const match::PerftDialect* dialect = &input->dialect;
  const std::vector<v1::MovegenPosition>* positions = &input->positions;
  std::vector<match::EngineSpec> built = {input->engine};
  if (absl::Status st = BuildLocalSources(built, {}, /*quiet=*/f.json); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  const match::EngineSpec* spec = &built[0];
  const auto start = std::chrono::steady_clock::now();
  match::UciEngine engine(*spec);
  match::MovegenAggregate sum;
  const match::Millis timeout(static_cast<int64_t>(f.timeout_s * 1000));
  match::MovegenChecker checker(engine, *dialect, timeout);
  size_t done = 0;
  // Progress on stderr: redrawn with \r on a terminal; into a file or pipe, a plain line at most
  // every 5 s (and none for a short check), so that logs hold no carriage returns.
  const bool tty = isatty(STDERR_FILENO);
  auto last_line = start;
  bool printed = false;
  for (const v1::MovegenPosition& p : *positions) {
    absl::StatusOr<v1::MovegenPositionResult> r = checker.Check(p);
    if (!r.ok()) {
      engine.Quit();
      std::cerr << "error: " << r.status().message() << "\n";
      return 2;
    }
    sum.Add(*r);
    ++done;
    if (f.json || f.quiet) continue;
    if (tty && (done % 16 == 0 || done == positions->size())) {
      std::cerr << "\r" << done << "/" << positions->size() << " positions" << std::flush;
      printed = true;
    } else if (!tty && std::chrono::steady_clock::now() - last_line > std::chrono::seconds(5)) {
      last_line = std::chrono::steady_clock::now();
      std::cerr << done << "/" << positions->size() << " positions\n";
    }
  }
  if (printed) std::cerr << "\n";
  std::string name = engine.id_name().empty() ? spec->name : engine.id_name();
  engine.Quit();
  v1::MovegenCheckResult result = sum.Result(uint32_t(positions->size()));
  result.set_engine(name);
  *result.mutable_dialect() = match::DialectToProto(*dialect);
  result.set_wall_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (f.json)
    std::cout << ToJson(result) << "\n";
  else
    std::cout << match::MovegenReportText(result);
  return result.failures_size() || result.positions_faulted() ? 1 : 0;
}

}  // namespace

void AddMovegenCheckCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<MovegenCheckFlags>();
  CLI::App* cmd = app.add_subcommand(
      "movegen-check",
      "Check an engine's own perft against arbiter's over a suite or random positions");
  cmd->add_option("--engine", flags->engine,
                  "Engine command (\"/usr/games/stockfish\") or name=..,cmd=..,option.X=V; with "
                  "--coordinator: builtin, a path on the workers, or sha256 of an upload")
      ->required();
  cmd->add_option("--dialect", flags->dialect,
                  "How to ask for perft: go-perft (`go perft N`, default), perft (`perft N`), "
                  "custom");
  cmd->add_option("--perft-command", flags->perft_command,
                  "Command template for the engine, with {depth} (custom dialect)");
  cmd->add_option("--total-regex", flags->total_regex,
                  "Regular expression of the total line, one group: the count");
  cmd->add_option("--divide-regex", flags->divide_regex,
                  "Regular expression of a divide line, two groups: move, count");
  cmd->add_option("--suite", flags->suites,
                  "EPD perft suite (';D<n> count' fields) or plain FENs, one a line; repeatable");
  cmd->add_option("--fen", flags->fens, "A position (repeatable)");
  cmd->add_option("--random", flags->random,
                  "N random positions (playouts from standard and Chess960 starts)");
  cmd->add_option("--seed", flags->seed, "Seed of --random (default 1)");
  cmd->add_option("--depth", flags->depth, "Perft depth per position (1..10)");
  cmd->add_option("--max-nodes", flags->max_nodes,
                  "Node budget per position: the deepest depth (up to --depth, else 6) within it");
  cmd->add_option("--timeout-s", flags->timeout_s,
                  "Seconds the engine gets for each perft request (60)");
  cmd->add_option("--coordinator", flags->coordinator, "Run on this cluster (host:port)");
  cmd->add_flag("--json", flags->json, "Print a MovegenCheckResult as JSON");
  cmd->add_flag("--quiet", flags->quiet, "No progress line");
  cmd->footer("Exit status: 0 clean, 1 failures or engine faults, 2 an error.");
  cmd->callback([flags, &exit_code] {
    exit_code = flags->coordinator.empty() ? RunLocal(*flags) : RunMovegenCheckOnCluster(*flags);
  });
}

}  // namespace arbiter::cli

// `arbiter perft-diff --engine CMD [--fen FEN] --depth N`: where CMD's move generator differs.
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/json.h"
#include "cli/source_engines.h"
#include "engine/position.h"
#include "match/perft_diff.h"
#include "proto/arbiter/v1/match.pb.h"

namespace arbiter::cli {
namespace {

struct PerftDiffFlags {
  std::string engine;
  std::string fen{Position::kStartFen};
  int depth = 0;
  double timeout_s = 600;
  std::string dialect = "go-perft", perft_command, total_regex, divide_regex;
  bool json = false;
};

v1::PerftDiffResult ToProto(const match::PerftDiffReport& r, const PerftDiffFlags& f) {
  v1::PerftDiffResult out;
  out.set_engine(r.engine);
  out.set_root_fen(r.steps.empty() ? f.fen : r.steps.front().fen);
  out.set_root_depth(f.depth);
  out.set_identical(r.identical);
  out.set_fen(r.fen);
  out.set_depth(r.depth);
  for (const auto& m : r.path) out.add_path(m);
  for (const auto& m : r.missing) out.add_missing_moves(m);
  for (const auto& m : r.extra) out.add_extra_moves(m);
  for (const auto& m : r.wrong_counts) out.add_wrong_count_moves(m);
  for (const auto& s : r.steps) {
    v1::PerftDiffStep* p = out.add_steps();
    p->set_fen(s.fen);
    p->set_depth(s.depth);
    p->set_expected_nodes(s.expected);
    p->set_engine_nodes(s.reported);
    p->set_move(s.move);
  }
  return out;
}

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s;
  for (const auto& m : v) s += (s.empty() ? "" : " ") + m;
  return s.empty() ? "(none)" : s;
}

int Run(const PerftDiffFlags& f) {
  absl::StatusOr<match::EngineSpec> spec = match::ParseEngineSpec(f.engine);
  if (!spec.ok()) {
    std::cerr << "error: " << spec.status().message() << "\n";
    return 2;
  }
  absl::StatusOr<match::PerftDialect> dialect =
      match::MakePerftDialect(f.dialect, f.perft_command, f.total_regex, f.divide_regex);
  if (!dialect.ok()) {
    std::cerr << "error: " << dialect.status().message() << "\n";
    return 2;
  }
  std::vector<match::EngineSpec> built = {*spec};
  if (absl::Status st = BuildLocalSources(built, {}, /*quiet=*/f.json); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  match::UciEngine engine(built[0]);
  absl::StatusOr<match::PerftDiffReport> r = match::PerftDiff(
      engine, f.fen, f.depth, match::Millis(static_cast<int64_t>(f.timeout_s * 1000)), *dialect);
  engine.Quit();
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    return 2;
  }
  v1::PerftDiffResult p = ToProto(*r, f);
  if (f.json) {
    std::cout << ToJson(p) << "\n";
    return p.identical() ? 0 : 1;
  }
  std::cout << "Engine: " << p.engine() << "\n";
  for (const auto& s : p.steps()) {
    std::cout << "depth " << s.depth() << "  arbiter " << s.expected_nodes() << "  engine "
              << s.engine_nodes() << "  " << s.fen();
    if (!s.move().empty()) std::cout << "  -> first differing move " << s.move();
    std::cout << "\n";
  }
  if (p.identical()) {
    std::cout << "Identical: every divide count agrees at depth " << f.depth << "\n";
    return 0;
  }
  std::cout << "\nFirst difference\n  FEN:   " << p.fen() << "\n  depth: " << p.depth()
            << "\n  path:  " << Join(p.path())
            << "\n  missing moves (legal, not reported): " << Join(p.missing_moves())
            << "\n  extra moves (reported, not legal): " << Join(p.extra_moves()) << "\n";
  if (p.wrong_count_moves_size())
    std::cout << "  moves with wrong counts: " << Join(p.wrong_count_moves()) << "\n";
  return 1;
}

}  // namespace

void AddPerftDiffCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PerftDiffFlags>();
  CLI::App* cmd = app.add_subcommand(
      "perft-diff", "Find where an engine's move generator differs (its `go perft` divide)");
  cmd->add_option("--engine", flags->engine,
                  "Engine command (\"/usr/games/stockfish\") or name=..,cmd=..,option.X=V")
      ->required();
  cmd->add_option("--fen", flags->fen, "Root position (default: the start position)");
  cmd->add_option("--depth", flags->depth, "Perft depth at the root")->required();
  cmd->add_option("--timeout-s", flags->timeout_s, "Seconds to wait for each `go perft` (600)");
  cmd->add_option("--dialect", flags->dialect,
                  "How to ask for perft: go-perft (`go perft N`, default), perft, custom");
  cmd->add_option("--perft-command", flags->perft_command, "Command template with {depth}");
  cmd->add_option("--total-regex", flags->total_regex, "Total line; one group: the count");
  cmd->add_option("--divide-regex", flags->divide_regex, "Divide line; groups: move, count");
  cmd->add_flag("--json", flags->json, "Print a PerftDiffResult as JSON");
  cmd->footer("Exit status: 0 identical, 1 a difference was found, 2 an error.");
  cmd->callback([flags, &exit_code] { exit_code = Run(*flags); });
}

}  // namespace arbiter::cli

// `arbiter perft`: one position (with divide) or an EPD suite, computed in this process.
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "cli/cluster_client.h"
#include "cli/commands.h"
#include "cli/json.h"
#include "engine/epd.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "engine/perft_hash.h"
#include "engine/perft_path.h"
#include "proto/arbiter/v1/perft.pb.h"
#include "proto/wire_enums.h"

namespace arbiter::cli {
namespace {

struct PerftFlags {
  std::string fen;
  bool startpos = false;
  int depth = 0;
  bool divide = false;
  int threads = 1;
  int hash_mb = 0;
  bool json = false;
  std::string suite;
  int max_depth = kMaxPerftDepth;
  uint64_t max_nodes = 0;
  std::string coordinator;
  bool verify = false;
  int split_depth = 0;
  int jobs = 0;
  uint64_t split_memory_positions = 0;
  v1::Scheduling scheduling;
};

v1::PerftResult ToProto(const Position& pos, const PerftOptions& opts, const PerftResult& r) {
  v1::PerftResult out;
  out.set_fen(pos.Fen());
  out.set_depth(opts.depth);
  out.set_nodes(r.nodes);
  for (const PerftDivide& d : r.divide) {
    v1::PerftDivideEntry* e = out.add_divide();
    e->set_move(MoveToUci(pos, d.move));
    e->set_nodes(d.nodes);
  }
  out.set_seconds(r.seconds);
  out.set_nodes_per_second(r.seconds > 0 ? r.nodes / r.seconds : 0);
  out.set_threads(r.threads);
  out.set_hash_mb(opts.hash_mb);
  out.set_perft_core_path(PerftPathFromString(r.path));
  return out;
}

int RunSingle(const PerftFlags& f) {
  if (f.startpos == !f.fen.empty()) {
    std::cerr << "error: give exactly one of --fen FEN or --startpos\n";
    return 2;
  }
  absl::StatusOr<Position> pos = f.startpos ? Position::StartPosition() : Position::FromFen(f.fen);
  if (!pos.ok()) {
    std::cerr << "error: " << pos.status().message() << "\n";
    return 2;
  }
  if (!f.coordinator.empty()) {
    v1::SubmitPerftRequest request;
    request.mutable_perft()->set_fen(pos->Fen());
    request.mutable_perft()->set_depth(f.depth);
    request.mutable_perft()->set_divide(f.divide);
    request.mutable_perft()->set_hash_mb(f.hash_mb);
    request.set_verify(f.verify);
    request.set_split_depth(f.split_depth);
    request.set_target_jobs(f.jobs);
    request.set_split_memory_positions(f.split_memory_positions);
    *request.mutable_scheduling() = f.scheduling;
    return RunRemotePerft(f.coordinator, request, f.json);  // Ctrl-C cancels the run
  }
  PerftOptions opts{
      .depth = f.depth, .threads = f.threads, .hash_mb = f.hash_mb, .divide = f.divide};
  absl::StatusOr<PerftResult> r = Perft(*pos, opts);
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    return 2;
  }
  v1::PerftResult proto = ToProto(*pos, opts, *r);
  if (f.json) {
    std::cout << ToJson(proto) << "\n";
    return 0;
  }
  for (const auto& d : proto.divide()) std::cout << d.move() << ": " << d.nodes() << "\n";
  if (f.divide) std::cout << "\n";
  std::cout << "Nodes searched: " << proto.nodes() << "\n";
  std::cout << absl::StrFormat("Time: %.3f s\nSpeed: %.1f Mnodes/s (%d thread%s, hash %d MB, %s)\n",
                               proto.seconds(), proto.nodes_per_second() / 1e6, proto.threads(),
                               proto.threads() == 1 ? "" : "s", f.hash_mb,
                               PerftPathDescription(ActivePerftPath()));
  return 0;
}

int RunSuite(const PerftFlags& f) {
  std::ifstream in(f.suite);
  if (!in) {
    std::cerr << "error: cannot open suite file '" << f.suite << "'\n";
    return 2;
  }
  v1::PerftSuiteResult summary;
  double seconds = 0;
  // One table for the whole suite, not one allocated per position and depth.
  PerftHash hash(0, f.threads > 0 ? f.threads : int(std::thread::hardware_concurrency()));
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    absl::StatusOr<PerftSuiteLine> parsed = ParsePerftSuiteLine(line, line_number);
    if (parsed.ok() && parsed->fen.empty()) continue;
    v1::PerftSuiteEntry* entry = summary.add_positions();
    entry->set_line(line_number);
    absl::StatusOr<Position> pos =
        parsed.ok() ? Position::FromFen(parsed->fen) : absl::StatusOr<Position>(parsed.status());
    if (parsed.ok()) entry->set_fen(parsed->fen);
    if (!pos.ok()) {
      entry->set_status("error");
      entry->set_error(std::string(pos.status().message()));
      summary.set_errors(summary.errors() + 1);
      if (!f.json)
        std::cout << absl::StrFormat("ERROR line %d: %s\n", line_number, pos.status().message());
      continue;
    }
    bool wrong = false;
    int checked = 0, first_checked = 0;
    for (auto [depth, expected] : parsed->expected) {
      if (depth > f.max_depth || (f.max_nodes && expected > f.max_nodes)) continue;
      std::shared_ptr<PerftTable> table;  // the suite's, kept across positions and depths
      if (f.hash_mb > 0 && depth >= 3) {
        table = hash.For(f.hash_mb);
        if (!table) {
          std::cerr << "error: cannot allocate a perft hash of " << f.hash_mb << " MB\n";
          return 1;
        }
      }
      PerftOptions opts{.depth = depth, .threads = f.threads, .table = table.get()};
      absl::StatusOr<PerftResult> r = Perft(*pos, opts);
      if (!r.ok()) {
        std::cerr << "error: line " << line_number << ": " << r.status().message() << "\n";
        return 1;
      }
      seconds += r->seconds;
      summary.set_nodes(summary.nodes() + r->nodes);
      checked = std::max(checked, depth);
      if (first_checked == 0 || depth < first_checked) first_checked = depth;
      if (r->nodes != expected) {
        entry->set_wrong_depth(depth);
        entry->set_expected(expected);
        entry->set_got(r->nodes);
        wrong = true;
        break;
      }
    }
    entry->set_depth_checked(checked);
    if (wrong) {
      entry->set_status("wrong");
      summary.set_failed(summary.failed() + 1);
      if (!f.json)
        std::cout << absl::StrFormat("WRONG line %d D%d expected %d got %d  %s\n", line_number,
                                     entry->wrong_depth(), entry->expected(), entry->got(),
                                     parsed->fen);
    } else if (checked == 0) {
      entry->set_status("skipped");
      summary.set_skipped(summary.skipped() + 1);
      if (!f.json) std::cout << absl::StrFormat("skip  line %d  %s\n", line_number, parsed->fen);
    } else {
      entry->set_status("ok");
      summary.set_passed(summary.passed() + 1);
      if (!f.json)
        std::cout << absl::StrFormat("ok    line %d D%d..D%d  %s\n", line_number, first_checked,
                                     checked, parsed->fen);
    }
  }
  summary.set_seconds(seconds);
  if (f.json) {
    std::cout << ToJson(summary) << "\n";
  } else {
    std::cout << absl::StrFormat(
        "%d positions: %d ok, %d wrong, %d errors, %d skipped; %d nodes in %.2f s (%.1f "
        "Mnodes/s)\n",
        summary.positions_size(), summary.passed(), summary.failed(), summary.errors(),
        summary.skipped(), summary.nodes(), seconds,
        seconds > 0 ? summary.nodes() / seconds / 1e6 : 0);
  }
  return summary.failed() + summary.errors() > 0 ? 1 : 0;
}

}  // namespace

void AddPerftCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<PerftFlags>();
  CLI::App* cmd =
      app.add_subcommand("perft", "Count leaf nodes of the move tree (one position or a suite)");
  auto* fen = cmd->add_option("--fen", flags->fen, "Position (FEN, X-FEN or Shredder-FEN)");
  auto* startpos = cmd->add_flag("--startpos", flags->startpos, "Use the standard start position");
  auto* depth = cmd->add_option("--depth", flags->depth, "Depth in plies")
                    ->check(CLI::Range(0, kMaxPerftDepth));
  cmd->add_flag("--divide", flags->divide, "Print the count under each root move");
  cmd->add_option("--threads", flags->threads, "CPU threads this perft uses (0 = all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--hash", flags->hash_mb, "Hash table size in MB (0 = none)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--json", flags->json, "Print the result as JSON (protobuf mapping)");
  auto* suite = cmd->add_option("--suite", flags->suite, "EPD suite: FEN ;D1 n ;D2 n ...");
  cmd->add_option("--max-depth", flags->max_depth, "Suite: deepest depth to check")->needs(suite);
  cmd->add_option("--max-nodes", flags->max_nodes, "Suite: skip depths with more nodes than this")
      ->needs(suite);
  auto* coordinator = cmd->add_option("--coordinator", flags->coordinator,
                                      "Run on the cluster at HOST:PORT (with progress)");
  cmd->add_flag("--verify", flags->verify, "With --coordinator: every job on two workers")
      ->needs(coordinator);
  AddSchedulingOptions(cmd, flags->scheduling);
  cmd->add_option("--split-depth", flags->split_depth,
                  "With --coordinator: plies expanded on the coordinator (0 = automatic)")
      ->check(CLI::Range(0, kMaxPerftDepth))
      ->needs(coordinator);
  cmd->add_option("--jobs", flags->jobs,
                  "With --coordinator: number of jobs (0 = 16 per connected worker)")
      ->check(CLI::Range(0, 1'000'000))
      ->needs(coordinator);
  cmd->add_option("--split-memory-positions", flags->split_memory_positions,
                  "With --coordinator: stream the split, at most this many split positions in "
                  "the coordinator's memory at once (100..4000000; 0 = only when too deep)")
      ->needs(coordinator);
  suite->excludes(coordinator);
  suite->excludes(fen)->excludes(startpos)->excludes(depth);
  cmd->callback([flags, &exit_code] {
    if (flags->suite.empty() && flags->depth == 0 && flags->fen.empty() && !flags->startpos) {
      std::cerr << "error: give --fen FEN or --startpos with --depth N, or --suite FILE\n";
      exit_code = 2;
      return;
    }
    exit_code = flags->suite.empty() ? RunSingle(*flags) : RunSuite(*flags);
  });
}

}  // namespace arbiter::cli

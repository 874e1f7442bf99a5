// `arbiter uci` (the builtin UCI engine on stdin/stdout) and `arbiter bench` (its signature).
#include <iostream>

#include "cli/commands.h"
#include "engine/search/uci.h"

namespace arbiter::cli {

void AddUciCommand(CLI::App& app, int& exit_code) {
  CLI::App* uci = app.add_subcommand("uci", "Run the builtin UCI engine on stdin/stdout");
  uci->callback([&exit_code] {
    std::ios::sync_with_stdio(false);
    search::RunUci(std::cin, std::cout);
    exit_code = 0;
  });

  auto depth = std::make_shared<int>(search::kBenchDepth);
  CLI::App* bench = app.add_subcommand(
      "bench", "Fixed-depth search over fixed positions: node signature and nodes/s");
  bench->add_option("--depth", *depth, "Search depth per position")->check(CLI::Range(1, 30));
  bench->callback([depth, &exit_code] {
    search::RunBench(*depth, std::cout);
    exit_code = 0;
  });
}

}  // namespace arbiter::cli

// The single `arbiter` binary: subcommands are registered from their own files.
#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // Logs go to stderr: stdout carries results (and the listening ports of the servers).
  spdlog::set_default_logger(spdlog::stderr_color_mt("arbiter"));
  CLI::App app{"arbiter: distributed engine testing and perft"};
  app.require_subcommand(1);
  int exit_code = 0;
  arbiter::cli::AddPerftCommand(app, exit_code);
  arbiter::cli::AddStatsCommand(app, exit_code);
  arbiter::cli::AddPerftDiffCommand(app, exit_code);
  arbiter::cli::AddUciCommand(app, exit_code);
  arbiter::cli::AddMatchCommand(app, exit_code);
  arbiter::cli::AddTournamentCommand(app, exit_code);
  arbiter::cli::AddClusterCommands(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}

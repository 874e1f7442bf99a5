// Each `arbiter` subcommand registers itself on the CLI11 app; the callback stores the exit code.
#pragma once

#include "CLI/CLI.hpp"

namespace arbiter::cli {

void AddPerftCommand(CLI::App& app, int& exit_code);
void AddStatsCommand(CLI::App& app, int& exit_code);
void AddPerftDiffCommand(CLI::App& app, int& exit_code);
void AddUciCommand(CLI::App& app, int& exit_code);
void AddMatchCommand(CLI::App& app, int& exit_code);
void AddTournamentCommand(CLI::App& app, int& exit_code);
// coordinator, worker, local, runs.
void AddClusterCommands(CLI::App& app, int& exit_code);
// `arbiter tokens`, `arbiter whoami`, `arbiter engines`.
void AddAccessCommands(CLI::App& app, int& exit_code);

}  // namespace arbiter::cli

// Each `arbiter` subcommand registers itself on the CLI11 app; the callback stores the exit code.
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "match/engine_users.h"
#include "match/sandbox.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace arbiter::cli {

void AddPerftCommand(CLI::App& app, int& exit_code);
void AddStatsCommand(CLI::App& app, int& exit_code);
void AddPerftDiffCommand(CLI::App& app, int& exit_code);
void AddMovegenCheckCommand(CLI::App& app, int& exit_code);
void AddUciCommand(CLI::App& app, int& exit_code);
void AddMatchCommand(CLI::App& app, int& exit_code);
void AddTournamentCommand(CLI::App& app, int& exit_code);
// coordinator, worker, local, runs.
void AddClusterCommands(CLI::App& app, int& exit_code);
// `arbiter tokens`, `whoami`, `engines`, `workers` and `ratings`.
void AddAccessCommands(CLI::App& app, int& exit_code);
// `arbiter runs residuals`, under `runs` (whose --coordinator and --json it shares).
void AddResidualsCommand(CLI::App& runs, std::shared_ptr<std::string> address,
                         std::shared_ptr<bool> json, int& exit_code);
// `arbiter health`: a server's gRPC health service.
void AddHealthCommand(CLI::App& app, int& exit_code);
// `arbiter engine-probe`: an engine in this machine's box, one move.
void AddEngineProbeCommand(CLI::App& app, int& exit_code);

// The rating list of `arbiter ratings` from the results of PGN files (each file one run, its
// run id the file's 1-based index): games without a result, or abandoned without a move, do not
// count.
absl::StatusOr<v1::GetRatingsResponse> RatePgnFiles(const std::vector<std::string>& files,
                                                    const v1::GetRatingsRequest& request);

// A CLI11 parse error: --help and --version print and return 0; anything else is said on stderr
// ("unknown option --rounds", with a hint for cutechess/fastchess spellings) and returns 2.
int ReportUsageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

// Duration flags carry their unit in their name (--move-timeout-ms, --lease-s); their old names
// (--move-timeout, --lease-seconds, ...) are rewritten in argv to the new ones, each with a
// deprecation warning on stderr, so that they stay hidden aliases.
void RenameDeprecatedFlags(int argc, char** argv);

// `--sandbox` and the engine limits of `worker`, `match` and `tournament`.
struct SandboxFlags {
  std::string mode;  // auto, namespaces or off
  match::ResourceLimits limits;
  std::string engine_uids = match::UidRangeText(match::kDefaultEngineUids);
  std::vector<std::string> read_dirs;  // SandboxOptions::read_only
};
void AddSandboxOptions(CLI::App* cmd, SandboxFlags& f);
// The box the flags ask for (probing bwrap once for `auto`; a fallback is logged as a warning).
absl::StatusOr<match::SandboxOptions> ResolveSandbox(const SandboxFlags& f);

}  // namespace arbiter::cli

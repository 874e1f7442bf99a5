// The single `arbiter` binary: subcommands are registered from their own files.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "CLI/CLI.hpp"
#include "base/version.h"
#include "cli/commands.h"
#include "engine/perft_path.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace {

// The binary is built for a CPU level (x86-64-v2 by default: hardware popcount; --native or
// --march=LEVEL for more). On a CPU below it, say so before anything runs an instruction it
// lacks (this runs before the other static initializers) instead of dying with SIGILL.
__attribute__((constructor(101))) void CheckCpuLevel() {
  __builtin_cpu_init();
  const char* missing = nullptr;
#ifdef __POPCNT__
  if (!__builtin_cpu_supports("popcnt")) missing = "POPCNT";
#endif
#ifdef __SSE4_2__
  if (!__builtin_cpu_supports("sse4.2")) missing = "SSE4.2";
#endif
#ifdef __AVX2__
  if (!__builtin_cpu_supports("avx2")) missing = "AVX2";
#endif
#ifdef __BMI2__
  if (!__builtin_cpu_supports("bmi2")) missing = "BMI2";
#endif
#ifdef __AVX512F__
  if (!__builtin_cpu_supports("avx512f")) missing = "AVX-512F";
#endif
#ifdef __AVX512VPOPCNTDQ__
  if (!__builtin_cpu_supports("avx512vpopcntdq")) missing = "AVX-512 VPOPCNTDQ";
#endif
  if (!missing) return;
  std::fprintf(stderr,
               "error: this arbiter was built for a CPU level with %s, which this CPU lacks; "
               "build one for it with scripts/build.sh --march=x86-64 (or --native)\n",
               missing);
  std::_Exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr: stdout carries results (and the listening ports of the servers).
  spdlog::set_default_logger(spdlog::stderr_color_mt("arbiter"));
  // ARBITER_PERFT_PATH=v2|v3|v4 forces a copy of the perft core (tests, measurements).
  if (absl::Status path = arbiter::UsePerftPathFromEnvironment(); !path.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(path.message()).c_str());
    return 2;
  }
  CLI::App app{"arbiter: distributed engine testing and perft"};
  app.set_version_flag("--version", std::string("arbiter ") + std::string(arbiter::kVersion) +
                                        " (" + std::string(arbiter::kRevision) + ")");
  app.require_subcommand(1);
  int exit_code = 0;
  // Credentials of every client command (and of `arbiter worker`): the flags set the environment
  // that net/client.h reads, so that ARBITER_TOKEN and friends work the same way.
  app.fallthrough();
  auto set_env = [](const char* var) {
    return [var](const std::string& v) { setenv(var, v.c_str(), 1); };
  };
  app.add_option("--token-file",
                 "File with the API token (default: $ARBITER_TOKEN, "
                 "$ARBITER_TOKEN_FILE, or arbiter local's own on loopback)")
      ->each(set_env("ARBITER_TOKEN_FILE"));
  app.add_option("--tls-ca", "CA certificate (PEM) of the coordinator's TLS: turns TLS on")
      ->each(set_env("ARBITER_TLS_CA"));
  app.add_option("--tls-cert", "Client certificate (PEM) for mutual TLS")
      ->each(set_env("ARBITER_TLS_CERT"));
  app.add_option("--tls-key", "Client key (PEM) for mutual TLS")->each(set_env("ARBITER_TLS_KEY"));
  app.add_option("--log-level",
                 "Log detail on stderr: trace, debug, info (default), warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->each([](const std::string& v) { spdlog::set_level(spdlog::level::from_str(v)); });
  arbiter::cli::AddPerftCommand(app, exit_code);
  arbiter::cli::AddStatsCommand(app, exit_code);
  arbiter::cli::AddPerftDiffCommand(app, exit_code);
  arbiter::cli::AddMovegenCheckCommand(app, exit_code);
  arbiter::cli::AddUciCommand(app, exit_code);
  arbiter::cli::AddMatchCommand(app, exit_code);
  arbiter::cli::AddTournamentCommand(app, exit_code);
  arbiter::cli::AddClusterCommands(app, exit_code);
  arbiter::cli::AddAccessCommands(app, exit_code);
  arbiter::cli::AddHealthCommand(app, exit_code);
  arbiter::cli::AddEngineProbeCommand(app, exit_code);
  arbiter::cli::RenameDeprecatedFlags(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return arbiter::cli::ReportUsageError(app, e, argc, argv);
  }
  return exit_code;
}

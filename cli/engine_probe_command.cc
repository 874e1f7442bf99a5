// `arbiter engine-probe [--sandbox MODE] -- PROGRAM [ARGS...]`: starts an engine in this
// machine's engine box exactly as a worker would, plays one move of the start position and prints
// the isolation it got and everything the engine said. For an operator asking "does my engine run
// in the box on this node?" and for the deployment test's hostile engine inside a played pod.
#include <iostream>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "match/uci_engine.h"

namespace arbiter::cli {
namespace {

int ProbeEngine(const SandboxFlags& flags, const std::vector<std::string>& argv) {
  absl::StatusOr<match::SandboxOptions> box = ResolveSandbox(flags);
  if (!box.ok()) {
    std::cerr << "error: " << box.status().message() << "\n";
    return 2;
  }
  std::cout << "isolation: " << match::IsolationName(box->isolation) << std::endl;
  match::EngineSpec spec{.name = "probe", .cmd = argv[0]};
  spec.args.assign(argv.begin() + 1, argv.end());
  match::UciEngine engine(spec, {}, {}, {}, *box);
  absl::Status st = engine.Start();
  if (st.ok()) st = engine.NewGame(false);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  (void)engine.Send("position startpos");
  (void)engine.Send("go wtime 10000 btime 10000");
  std::vector<match::OutputLine> lines;
  const match::ReadResult r =
      engine.ReadUntilBestmove(match::SteadyClock::now() + std::chrono::seconds(30), lines);
  for (const match::OutputLine& l : lines) std::cout << l.text << "\n";
  if (r == match::ReadResult::kEof) {
    std::cout << "engine ended: " << engine.EndAndDescribe() << "\n";
    return 1;
  }
  engine.Quit();
  return r == match::ReadResult::kLine ? 0 : 1;
}

}  // namespace

void AddEngineProbeCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SandboxFlags>(SandboxFlags{.mode = "auto"});
  auto argv = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "engine-probe",
      "Start an engine in this machine's engine box, play one move, print what it said");
  AddSandboxOptions(cmd, *flags);
  cmd->add_option("command", *argv, "The engine's program and its arguments (after --)")
      ->required();
  cmd->callback([flags, argv, &exit_code] { exit_code = ProbeEngine(*flags, *argv); });
}

}  // namespace arbiter::cli

// Usage errors: what CLI11 refuses (an unknown option, a missing or malformed value) is said in
// one line on stderr with exit status 2, with a hint when the spelling is cutechess-cli's or
// fastchess's (`-engine`, `-each`, `-rounds`); --help and --version still exit 0. Flags renamed
// to carry their unit are still taken under their old names, with a warning.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "cli/commands.h"

namespace arbiter::cli {
namespace {

// What arbiter calls a cutechess-cli/fastchess option ("use --games for -rounds"), or why it has
// none; empty for any other argument.
std::string Hint(std::string_view arg) {
  std::string_view bare = arg;
  while (!bare.empty() && bare[0] == '-') bare.remove_prefix(1);
  if (const size_t eq = bare.find('='); eq != std::string_view::npos) bare = bare.substr(0, eq);
  struct Alias {
    std::string_view theirs, ours, note;
  };
  static constexpr Alias kAliases[] = {
      {"engine", "--engine", "once per engine: name=A,cmd=PATH,option.Hash=64, or a bare PATH"},
      {"each", "", "arbiter has no -each: give the options in each --engine (option.X=V, tc=TC)"},
      {"rounds", "--games", "the number of games; each opening is played twice, colours reversed"},
      {"games", "--games", ""},
      {"concurrency", "--concurrency", ""},
      {"openings", "--openings FILE", "an .epd or .pgn book"},
      {"pgnout", "--pgn-out FILE", ""},
      {"tc", "--tc", "for the match, or tc= in an --engine"},
      {"sprt", "--sprt elo0=..,elo1=..", ""},
      {"repeat", "",
       "arbiter has no -repeat: each opening is always played twice, colours reversed"},
      {"recover", "", "arbiter has no -recover: a crashed engine is restarted for the next game"},
  };
  for (const Alias& a : kAliases) {
    if (bare != a.theirs) continue;
    if (a.ours.empty()) return std::string(a.note);
    return Cat("use ", a.ours, " for cutechess/fastchess's ", arg.substr(0, arg.find('=')),
               a.note.empty() ? "" : Cat(" (", a.note, ")"));
  }
  return "";
}

}  // namespace

void RenameDeprecatedFlags(int argc, char** argv) {
  // Every duration flag names its unit (-ms, -s); these are the names they had before.
  struct Renamed {
    std::string_view old_name, new_name;
  };
  static constexpr Renamed kRenamed[] = {
      {"--margin", "--margin-ms"},
      {"--stop-grace", "--stop-grace-ms"},
      {"--move-timeout", "--move-timeout-ms"},
      {"--handshake-timeout", "--handshake-timeout-ms"},
      {"--timeout", "--timeout-s"},
      {"--lease-seconds", "--lease-s"},
      {"--heartbeat-seconds", "--heartbeat-s"},
      {"--grace-seconds", "--grace-s"},
      {"--wait-seconds", "--wait-s"},
      {"--bench-timeout", "--bench-timeout-s"},
      {"--build-timeout", "--build-timeout-s"},
      {"--engine-cpu-seconds", "--engine-cpu-s"},
  };
  // argv keeps pointing into these for the life of the process.
  static std::deque<std::string> renamed;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    for (const Renamed& r : kRenamed) {
      if (!arg.starts_with(r.old_name)) continue;
      const std::string_view rest = arg.substr(r.old_name.size());
      if (!rest.empty() && rest[0] != '=') continue;
      std::fprintf(stderr, "warning: %s is deprecated, use %s (the same value)\n",
                   std::string(r.old_name).c_str(), std::string(r.new_name).c_str());
      argv[i] = renamed.emplace_back(Cat(r.new_name, rest)).data();
      break;
    }
  }
}

int ReportUsageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
  // cutechess-cli and fastchess spellings (single dash) anywhere on the line: they are what is
  // wrong, whatever CLI11 met first, and each gets its arbiter counterpart.
  std::string theirs;
  std::vector<std::string> hints;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-' || arg[1] == '-') continue;
    std::string hint = Hint(arg);
    if (hint.empty() || std::find(hints.begin(), hints.end(), hint) != hints.end()) continue;
    theirs += Cat(" ", arg.substr(0, arg.find('=')));
    hints.push_back(std::move(hint));
  }
  // The arguments CLI11 did not take (also when it stopped at a missing --engine): an unknown
  // option is what to name first, since it is often the missing one misspelled.
  std::vector<std::string> extras = app.remaining();
  for (const CLI::App* sub : app.get_subcommands())
    for (const std::string& r : sub->remaining())
      if (std::find(extras.begin(), extras.end(), r) == extras.end()) extras.push_back(r);
  std::string options, values;
  for (const std::string& w : extras) (w.size() > 1 && w[0] == '-' ? options : values) += " " + w;
  std::string message = e.what();
  if (!theirs.empty()) {
    message = Cat("unknown option", theirs);
  } else if (!options.empty()) {
    message = Cat("unknown option", options);
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) && !values.empty()) {
    message = Cat("unexpected argument", values);
  }
  std::fprintf(stderr, "error: %s\n", message.c_str());
  for (const std::string& hint : hints) std::fprintf(stderr, "hint: %s\n", hint.c_str());
  std::fprintf(stderr, "Run with --help for the options.\n");
  return 2;
}

}  // namespace arbiter::cli

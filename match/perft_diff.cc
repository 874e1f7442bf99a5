#include "match/perft_diff.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <memory>

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/notation.h"
#include "engine/perft.h"
#include "re2/re2.h"

namespace arbiter::match {

namespace {

constexpr size_t kMaxRegex = 200, kMaxCommand = 200, kMaxMatchedLine = 512;
constexpr size_t kMaxDivideLines = 1000;

std::string DialectHelp(const PerftDialect& tried) {
  std::string others;
  for (std::string_view d : {"go-perft", "perft", "custom"})
    if (d != tried.name) others += Cat(others.empty() ? "" : ", ", d);
  return Cat("the '", tried.name, "' dialect (`", tried.command,
             "`) was tried; the others: --dialect ", others,
             " (custom: --perft-command 'divide {depth}' --total-regex R --divide-regex R)");
}

// RE2, not std::regex: a user's pattern against an engine's output is two strangers' input, and
// std::regex backtracks (exponential time on `^(\d+)+x$`) and recurses per character (a stack
// overflow on long lines); RE2 matches in time linear in the line, in bounded memory.
using Regex = std::shared_ptr<const re2::RE2>;

absl::StatusOr<Regex> CompileRegex(std::string_view what, std::string_view re, int groups) {
  if (re.empty() || re.size() > kMaxRegex)
    return absl::InvalidArgumentError(
        Cat(what, ": ", re.size(), " characters, want 1..", kMaxRegex));
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(1 << 20);
  auto r = std::make_shared<const re2::RE2>(re2::StringPiece(re.data(), re.size()), options);
  if (!r->ok()) return absl::InvalidArgumentError(Cat(what, " '", re, "': ", r->error()));
  if (r->NumberOfCapturingGroups() != groups)
    return absl::InvalidArgumentError(
        Cat(what, " '", re, "' has ", r->NumberOfCapturingGroups(), " groups, want ", groups));
  return r;
}

bool ParseCount(const std::string& s, uint64_t& n) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

absl::StatusOr<PerftDialect> MakePerftDialect(std::string_view name, std::string_view command,
                                              std::string_view total_regex,
                                              std::string_view divide_regex) {
  PerftDialect d;
  if (name == "perft") {
    d.name = "perft";
    d.command = "perft {depth}";
    d.total_regex = R"(^\s*(?:Nodes searched|Nodes|Total|Total nodes)\s*:?\s*(\d+)\s*$)";
    d.divide_regex = R"(^\s*([a-h][1-8][a-h][1-8][qrbnQRBN]?)\s*:?\s+(\d+)\s*$)";
  } else if (name == "custom") {
    d.name = "custom";
    if (command.empty() || total_regex.empty() || divide_regex.empty())
      return absl::InvalidArgumentError(
          "--dialect custom needs --perft-command, --total-regex and --divide-regex");
  } else if (name != "go-perft") {
    return absl::InvalidArgumentError(
        Cat("--dialect '", name, "': want go-perft, perft or custom"));
  }
  if (!command.empty()) d.command = std::string(command);
  if (!total_regex.empty()) d.total_regex = std::string(total_regex);
  if (!divide_regex.empty()) d.divide_regex = std::string(divide_regex);
  if (d.command.size() > kMaxCommand || d.command.find("{depth}") == std::string::npos ||
      d.command.find_first_of("\r\n") != std::string::npos)
    return absl::InvalidArgumentError(Cat("perft command '", d.command, "': one line of at most ",
                                          kMaxCommand, " characters with {depth} in it"));
  ASSIGN_OR_RETURN(d.total_re, CompileRegex("--total-regex", d.total_regex, 1));
  ASSIGN_OR_RETURN(d.divide_re, CompileRegex("--divide-regex", d.divide_regex, 2));
  return d;
}

absl::StatusOr<EngineDivide> RunEnginePerft(UciEngine& engine, const PerftDialect& dialect,
                                            int depth, Millis timeout, bool probe) {
  Regex total_re = dialect.total_re, divide_re = dialect.divide_re;
  if (!total_re) {
    ASSIGN_OR_RETURN(total_re, CompileRegex("total regex", dialect.total_regex, 1));
  }
  if (!divide_re) {
    ASSIGN_OR_RETURN(divide_re, CompileRegex("divide regex", dialect.divide_regex, 2));
  }
  std::string command = dialect.command;
  command.replace(command.find("{depth}"), 7, std::to_string(depth));
  const SteadyTime start = SteadyClock::now();
  RETURN_IF_ERROR(engine.Send(command));
  if (probe) RETURN_IF_ERROR(engine.Send("isready"));
  SteadyTime deadline = start + timeout;
  EngineDivide out;
  bool ready = false, have_total = false;
  uint64_t sum = 0;
  OutputLine line;
  auto not_spoken = [&](std::string_view why) {
    return absl::FailedPreconditionError(Cat(engine.name(), ": does not answer `", command,
                                             "` with perft output (", why,
                                             "): ", DialectHelp(dialect)));
  };
  for (;;) {
    ReadResult r = engine.ReadLine(deadline, line);
    if (r == ReadResult::kTimeout) {
      if (have_total) return absl::DeadlineExceededError(Cat(engine.name(), ": no readyok"));
      if (ready) return not_spoken("it answered isready and then printed nothing more");
      return absl::DeadlineExceededError(Cat(engine.name(), ": no total line (", dialect.name,
                                             " dialect) within ", timeout.count(), " ms after `",
                                             command, "`"));
    }
    if (r == ReadResult::kEof)
      return absl::UnavailableError(
          Cat(engine.name(), ": exited during `", command, "`: ", engine.EndAndDescribe()));
    std::string_view s = Strip(line.text);
    if (s == "readyok") {
      ready = true;
      if (have_total) return out;
      // A depth-1 perft is instant: an engine that is idle after readyok never answers it.
      deadline = std::min(deadline, SteadyClock::now() + Millis(2000));
      continue;
    }
    if (have_total) continue;
    if (s.starts_with("bestmove"))
      return not_spoken(Cat("it searched and answered `", s.substr(0, 40), "`"));
    if (s.find("nknown command") != s.npos || s.starts_with("Unknown") || s.starts_with("unknown"))
      return not_spoken(Cat("it said `", s.substr(0, 80), "`"));
    if (s.empty() || s.size() > kMaxMatchedLine || s.starts_with("info")) continue;
    const re2::StringPiece text(s.data(), s.size());
    std::string first, second;
    if (re2::RE2::FullMatch(text, *total_re, &first)) {
      if (!ParseCount(first, out.total))
        return absl::DataLossError(Cat(engine.name(), ": total line `", s, "` has no count"));
      out.seconds = std::chrono::duration<double>(line.time - start).count();
      if (!out.moves.empty() && sum != out.total)
        return absl::DataLossError(Cat(engine.name(), ": its divide lines add up to ", sum,
                                       " but its total says ", out.total));
      have_total = true;
      if (!probe || ready) return out;
      continue;
    }
    if (re2::RE2::FullMatch(text, *divide_re, &first, &second)) {
      uint64_t n = 0;
      if (!ParseCount(second, n) || sum + n < sum)
        return absl::DataLossError(Cat(engine.name(), ": divide line `", s, "` has a bad count"));
      if (out.moves.size() >= kMaxDivideLines)
        return absl::DataLossError(Cat(engine.name(), ": more than ", kMaxDivideLines,
                                       " divide lines (a position has at most 218 moves)"));
      sum += n;
      out.moves.emplace_back(std::move(first), n);
    }
  }
}

absl::Status ProbePerftDialect(UciEngine& engine, const PerftDialect& dialect, std::string_view fen,
                               Millis timeout) {
  RETURN_IF_ERROR(engine.Send(Cat("position fen ", fen)));
  return RunEnginePerft(engine, dialect, 1, timeout, /*probe=*/true).status();
}

absl::Status ApplyUciMoves(Position& pos, std::span<const std::string> moves,
                           std::vector<std::string>& played, std::string& setup) {
  for (const std::string& text : moves) {
    absl::StatusOr<Move> m = ParseUciMove(pos, text);
    if (!m.ok())
      return absl::InvalidArgumentError(
          Cat("move '", text, "': ", std::string(m.status().message())));
    std::string uci = MoveToUci(pos, *m);
    setup += Cat(played.empty() ? " moves " : " ", uci);
    played.push_back(std::move(uci));
    UndoInfo undo;
    pos.DoMove(*m, undo);
  }
  return absl::OkStatus();
}

absl::Status CecpCannotCount(const UciEngine& engine) {
  return absl::FailedPreconditionError(
      Cat(engine.name(),
          " speaks CECP (xboard): movegen-check and perft-diff count perft over "
          "UCI (`position` and `go perft` or a --perft-command dialect), so a CECP "
          "engine cannot be checked"));
}

absl::StatusOr<PerftDiffReport> PerftDiff(UciEngine& engine, std::string_view fen, int depth,
                                          Millis timeout, const PerftDialect& dialect,
                                          const std::vector<std::string>& moves) {
  if (depth < 1 || depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(Cat("--depth ", depth, " is outside 1..", kMaxPerftDepth));
  ASSIGN_OR_RETURN(Position pos, Position::FromFen(fen));
  if (!engine.Running()) RETURN_IF_ERROR(engine.Start());
  if (engine.protocol() == Protocol::kXboard) return CecpCannotCount(engine);
  RETURN_IF_ERROR(engine.NewGame(pos.IsChess960()));
  RETURN_IF_ERROR(ProbePerftDialect(engine, dialect, pos.Fen(), timeout));
  PerftDiffReport report;
  report.engine = engine.id_name().empty() ? engine.name() : engine.id_name();
  std::string setup = Cat("position fen ", pos.Fen());
  RETURN_IF_ERROR(ApplyUciMoves(pos, moves, report.path, setup));
  for (;;) {
    ASSIGN_OR_RETURN(PerftResult ours, Perft(pos, PerftOptions{.depth = depth, .divide = true}));
    RETURN_IF_ERROR(engine.Send(setup));
    ASSIGN_OR_RETURN(EngineDivide answer, RunEnginePerft(engine, dialect, depth, timeout));
    auto& theirs_list = answer.moves;
    // The engine's moves, normalised through our parser (both castling spellings accepted).
    std::map<std::string, uint64_t> theirs;
    uint64_t reported = 0;
    for (auto& [text, n] : theirs_list) {
      absl::StatusOr<Move> m = ParseUciMove(pos, text);
      theirs[m.ok() ? MoveToUci(pos, *m) : text] += n;
      reported += n;
    }
    PerftDiffStep step{
        .fen = pos.Fen(), .depth = depth, .expected = ours.nodes, .reported = reported};
    report.fen = step.fen;
    report.depth = depth;
    std::map<std::string, uint64_t> expected;
    for (const PerftDivide& d : ours.divide) expected[MoveToUci(pos, d.move)] = d.nodes;
    for (const auto& [m, n] : expected)
      if (!theirs.count(m)) report.missing.push_back(m);
    for (const auto& [m, n] : theirs)
      if (!expected.count(m)) report.extra.push_back(m);
    if (!report.missing.empty() || !report.extra.empty()) {
      report.steps.push_back(step);
      return report;
    }
    const PerftDivide* differing = nullptr;
    for (const PerftDivide& d : ours.divide)
      if (theirs[MoveToUci(pos, d.move)] != d.nodes) {
        differing = &d;
        break;
      }
    if (!differing) {
      report.steps.push_back(step);
      report.identical = report.path.size() == moves.size();
      return report;
    }
    if (depth == 1) {
      for (const PerftDivide& d : ours.divide)
        if (theirs[MoveToUci(pos, d.move)] != d.nodes)
          report.wrong_counts.push_back(MoveToUci(pos, d.move));
      report.steps.push_back(step);
      return report;
    }
    step.move = MoveToUci(pos, differing->move);
    report.steps.push_back(step);
    RETURN_IF_ERROR(ApplyUciMoves(pos, std::span(&step.move, 1), report.path, setup));
    --depth;
  }
}

}  // namespace arbiter::match

#include "match/perft_diff.h"

#include <charconv>
#include <map>

#include "base/status_macros.h"
#include "base/strings.h"
#include "engine/notation.h"
#include "engine/perft.h"

namespace arbiter::match {

absl::StatusOr<std::vector<std::pair<std::string, uint64_t>>> ReadDivide(UciEngine& engine,
                                                                         Millis timeout) {
  std::vector<std::pair<std::string, uint64_t>> out;
  const SteadyTime deadline = SteadyClock::now() + timeout;
  OutputLine line;
  for (;;) {
    ReadResult r = engine.ReadLine(deadline, line);
    if (r == ReadResult::kTimeout)
      return absl::DeadlineExceededError(
          Cat(engine.name(), ": no 'Nodes searched' line within ", timeout.count(), " ms"));
    if (r == ReadResult::kEof)
      return absl::UnavailableError(Cat(engine.name(), ": exited during go perft"));
    std::string_view s = Strip(line.text);
    if (s.starts_with("Nodes searched")) return out;
    size_t colon = s.find(": ");
    if (colon == std::string_view::npos || s.starts_with("info")) continue;
    std::string_view move = s.substr(0, colon), count = Strip(s.substr(colon + 2));
    uint64_t n = 0;
    auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
    if (ec != std::errc() || p != count.data() + count.size() || move.find(' ') != move.npos)
      continue;
    out.emplace_back(std::string(move), n);
  }
}

absl::StatusOr<PerftDiffReport> PerftDiff(UciEngine& engine, std::string_view fen, int depth,
                                          Millis timeout) {
  if (depth < 1 || depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(Cat("--depth ", depth, " is outside 1..", kMaxPerftDepth));
  ASSIGN_OR_RETURN(Position pos, Position::FromFen(fen));
  if (!engine.Running()) RETURN_IF_ERROR(engine.Start());
  RETURN_IF_ERROR(engine.NewGame(pos.IsChess960()));
  PerftDiffReport report;
  report.engine = engine.id_name().empty() ? engine.name() : engine.id_name();
  const std::string root = pos.Fen();
  std::string moves_text;
  for (;;) {
    ASSIGN_OR_RETURN(PerftResult ours, Perft(pos, PerftOptions{.depth = depth, .divide = true}));
    RETURN_IF_ERROR(engine.Send(Cat("position fen ", root, moves_text)));
    RETURN_IF_ERROR(engine.Send(Cat("go perft ", depth)));
    ASSIGN_OR_RETURN(auto theirs_list, ReadDivide(engine, timeout));
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
      report.identical = report.path.empty();
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
    report.path.push_back(step.move);
    moves_text += Cat(moves_text.empty() ? " moves " : " ", step.move);
    UndoInfo undo;
    pos.DoMove(differing->move, undo);
    --depth;
  }
}

}  // namespace arbiter::match

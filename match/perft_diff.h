// Finds where another engine's move generator is wrong: asks it for `go perft N` divide output
// (Stockfish's "move: count" lines), compares with arbiter's perft, descends into the first move
// whose count differs, and stops at the position where the legal move lists differ.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/position.h"
#include "match/uci_engine.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace arbiter::match {

// FAILED_PRECONDITION for an engine that speaks CECP: perft counting is asked in UCI (`go perft`
// or a dialect's command after `position`), so a CECP engine cannot be checked.
absl::Status CecpCannotCount(const UciEngine& engine);

struct PerftDiffStep {
  std::string fen;
  int depth = 0;
  uint64_t expected = 0, reported = 0;
  std::string move;  // the move descended into ("" at the last step)
};

struct PerftDiffReport {
  std::string engine;  // id name
  bool identical = false;
  std::string fen;  // where the difference shows
  int depth = 0;
  std::vector<std::string> path;          // moves from the root (UCI)
  std::vector<std::string> missing;       // legal moves the engine did not list
  std::vector<std::string> extra;         // moves the engine listed that are not legal
  std::vector<std::string> wrong_counts;  // same moves, different counts, at depth 1
  std::vector<PerftDiffStep> steps;
};

// How an engine is asked for perft and how its answer reads: a command template ("{depth}" is
// replaced by the depth), a regular expression for the total line (one group: the count) and one
// for divide lines (two groups: the move, the count). Tested dialects: `go-perft` (Stockfish's
// `go perft N`, "e2e4: 20" lines, "Nodes searched: N"; arbiter uci, Stockfish), `perft` (a bare
// `perft N`, "e2e4: 20" or "e2e4 20" lines, "Nodes searched: N" / "Nodes: N" / "Total: N") and
// `custom` (everything given).
struct PerftDialect {
  std::string name = "go-perft";
  std::string command = "go perft {depth}";
  std::string total_regex = R"(^\s*Nodes searched\s*:\s*(\d+)\s*$)";
  std::string divide_regex = R"(^\s*([a-h][1-8][a-h][1-8][qrbnQRBN]?)\s*:\s*(\d+)\s*$)";
  // The two patterns compiled once by MakePerftDialect and shared by the dialect's copies; unset
  // in a dialect built by hand, whose patterns RunEnginePerft then compiles at each call.
  std::shared_ptr<const re2::RE2> total_re, divide_re;
};

// A dialect by name ("go-perft", "perft", "custom"); `custom` needs the command and both
// regular expressions, the others take them as overrides. Bounded and compiled here, once.
absl::StatusOr<PerftDialect> MakePerftDialect(std::string_view name, std::string_view command,
                                              std::string_view total_regex,
                                              std::string_view divide_regex);

struct EngineDivide {
  std::vector<std::pair<std::string, uint64_t>> moves;  // as printed, in the engine's order
  uint64_t total = 0;
  double seconds = 0;  // from the request written to the total line read
};

// Asks the engine (already set up with `position`) for perft at `depth` in `dialect` and reads
// its answer. An answer that shows the engine does not speak the dialect (a `bestmove`, an
// "Unknown command", or going idle: `readyok` to a following `isready` and then nothing when
// `probe` is set) fails with FAILED_PRECONDITION at once, naming the dialect and the others; a
// crash UNAVAILABLE, no total within `timeout` DEADLINE_EXCEEDED, divide lines that do not add
// up to the total DATA_LOSS.
absl::StatusOr<EngineDivide> RunEnginePerft(UciEngine& engine, const PerftDialect& dialect,
                                            int depth, Millis timeout, bool probe = false);

// Sets up `fen` (+ moves) in the engine and checks with a depth-1 request that it answers the
// dialect at all (a quick, clear failure instead of waiting the whole timeout).
absl::Status ProbePerftDialect(UciEngine& engine, const PerftDialect& dialect, std::string_view fen,
                               Millis timeout);

// Plays `moves` (UCI, either castling spelling) on `pos`, each checked legal, appending each in
// arbiter's spelling to `played` and to `setup`, the engine's `position fen F [moves ...]` command
// for the same line (" moves" is written before the first of `played`). A move that is not legal
// is INVALID_ARGUMENT "move 'M': why".
absl::Status ApplyUciMoves(Position& pos, std::span<const std::string> moves,
                           std::vector<std::string>& played, std::string& setup);

// The descent from `fen` at `depth`; with `moves` (UCI, legal), from the position after them,
// which the engine is given as `position fen FEN moves ...` (its own make of them is checked too);
// the moves head the report's path.
absl::StatusOr<PerftDiffReport> PerftDiff(UciEngine& engine, std::string_view fen, int depth,
                                          Millis timeout, const PerftDialect& dialect = {},
                                          const std::vector<std::string>& moves = {});

}  // namespace arbiter::match

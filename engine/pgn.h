// PGN (Portable Game Notation) writing and reading. The writer produces export format: the seven
// tag roster, optional tags, SAN movetext wrapped to 79 characters, per-move comments and the
// result. The reader takes a stream of games (tags, SAN moves, comments, NAGs, variations
// (skipped), move numbers, results) and replays every move, so each game comes back as a start
// position and a list of legal moves. Usage:
//   PgnReader reader(text);
//   while (true) {
//     ASSIGN_OR_RETURN(std::optional<PgnGame> game, reader.Next());
//     if (!game) break;
//     ... game->start, game->moves ...
//   }
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/position.h"

namespace arbiter {

struct PgnGame {
  // The seven tag roster (PGN's "unknown" values by default).
  std::string event = "?";
  std::string site = "?";
  std::string date = "????.??.??";
  std::string round = "?";
  std::string white = "?";
  std::string black = "?";
  std::string result = "*";  // "1-0", "0-1", "1/2-1/2" or "*"
  // Optional tags, written only when not empty.
  std::string time_control;
  std::string termination;
  // Any other tags, in order (FEN, SetUp, Variant and PlyCount are derived, never listed here).
  std::vector<std::pair<std::string, std::string>> extra_tags;

  // The start position (a FEN/SetUp tag pair is written when it is not the standard one, with
  // Variant "Chess960" when the position is a Chess960 one).
  Position start = Position::StartPosition();
  std::vector<Move> moves;
  // Empty, or one comment per move (an empty string means no comment after that move).
  std::vector<std::string> comments;

  // 1-based position of the game in the stream it was read from (0 when not read).
  int game_number = 0;

  // Value of a tag by name among the roster, the optional and the extra tags (nullopt if absent).
  std::optional<std::string> Tag(std::string_view name) const;
};

// The game in PGN export format, ending with a blank line (games can be concatenated).
std::string WritePgn(const PgnGame& game);

struct PgnReadOptions {
  // Keep at most this many plies of each game (the rest is read but not replayed); -1 = all.
  int max_plies = -1;
};

// Reads games one at a time from PGN text (which must outlive the reader).
class PgnReader {
 public:
  explicit PgnReader(std::string_view text, PgnReadOptions options = {});

  // The next game, nullopt at the end of the text, or an error that names the game number, the
  // line and the bad token. After an error the reader skips to the next game.
  absl::StatusOr<std::optional<PgnGame>> Next();

 private:
  struct Token;
  Token NextToken();
  void SkipToNextGame(bool in_movetext);

  std::string_view text_;
  PgnReadOptions options_;
  size_t pos_ = 0;
  int line_ = 1;
  int game_number_ = 0;
};

// All games of a PGN text; fails on the first bad game.
absl::StatusOr<std::vector<PgnGame>> ReadPgn(std::string_view text, PgnReadOptions options = {});
// Same, from a file.
absl::StatusOr<std::vector<PgnGame>> ReadPgnFile(const std::string& path,
                                                 PgnReadOptions options = {});

}  // namespace arbiter

// Opening books for matches: EPD positions or PGN games (cut to a ply limit), taken in file
// order or in a seeded random order from a start offset; each opening is used for one game pair.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "match/game.h"

namespace arbiter::match {

struct BookOptions {
  std::string path;  // .epd or .pgn; empty: the standard start position only
  int plies = -1;    // PGN: keep at most this many plies (-1: all)
  bool random = false;
  uint64_t seed = 1;
  int start = 1;  // 1-based index of the first opening used
};

class OpeningBook {
 public:
  static absl::StatusOr<OpeningBook> Load(const BookOptions& options);

  size_t size() const { return openings_.size(); }
  // The opening of game pair `pair` (0-based), wrapping around the book.
  const Opening& ForPair(uint64_t pair) const;
  // True when any position needs Chess960 castling (UCI_Chess960 is then set for every game).
  bool chess960() const { return chess960_; }

 private:
  std::vector<Opening> openings_;
  std::vector<uint32_t> order_;
  size_t start_ = 0;
  bool chess960_ = false;
};

// The book as EPD text, one line per game pair in the order the local runner uses: the position
// after each opening's book moves (a cluster run replays its games from that position). Empty
// for no book.
absl::StatusOr<std::string> BookEpdText(const BookOptions& options);

}  // namespace arbiter::match

#include "match/openings.h"

#include <random>

#include "base/strings.h"
#include "engine/epd.h"
#include "engine/pgn.h"

namespace arbiter::match {

absl::StatusOr<OpeningBook> OpeningBook::Load(const BookOptions& options) {
  OpeningBook book;
  if (options.path.empty()) {
    book.openings_.push_back(Opening{});
  } else if (options.path.ends_with(".epd")) {
    absl::StatusOr<std::vector<EpdEntry>> entries = ReadEpdFile(options.path);
    if (!entries.ok()) return entries.status();
    for (EpdEntry& e : *entries) book.openings_.push_back(Opening{.start = e.position});
  } else if (options.path.ends_with(".pgn")) {
    absl::StatusOr<std::vector<PgnGame>> games =
        ReadPgnFile(options.path, PgnReadOptions{.max_plies = options.plies});
    if (!games.ok()) return games.status();
    for (PgnGame& g : *games) {
      Opening o{.start = g.start, .moves = std::move(g.moves)};
      if (options.plies >= 0 && int(o.moves.size()) > options.plies) o.moves.resize(options.plies);
      book.openings_.push_back(std::move(o));
    }
  } else {
    return absl::InvalidArgumentError(
        Cat("opening book '", options.path, "': expected a .epd or .pgn file"));
  }
  if (book.openings_.empty())
    return absl::InvalidArgumentError(Cat("opening book '", options.path, "' has no openings"));
  if (options.start < 1 || size_t(options.start) > book.openings_.size())
    return absl::InvalidArgumentError(Cat("opening start ", options.start,
                                          " is outside the book (1..", book.openings_.size(), ")"));
  for (const Opening& o : book.openings_) book.chess960_ |= o.start.IsChess960();
  book.order_.resize(book.openings_.size());
  for (size_t i = 0; i < book.order_.size(); ++i) book.order_[i] = uint32_t(i);
  if (options.random) {
    // Fisher-Yates with the standard 64-bit Mersenne Twister: the same order on every platform.
    std::mt19937_64 rng(options.seed);
    for (size_t i = book.order_.size(); i > 1; --i)
      std::swap(book.order_[i - 1], book.order_[rng() % i]);
  }
  book.start_ = size_t(options.start - 1);
  return book;
}

const Opening& OpeningBook::ForPair(uint64_t pair) const {
  return openings_[order_[(start_ + pair) % order_.size()]];
}

absl::StatusOr<std::string> BookEpdText(const BookOptions& options) {
  if (options.path.empty()) return std::string();
  absl::StatusOr<OpeningBook> book = OpeningBook::Load(options);
  if (!book.ok()) return book.status();
  std::string text;
  for (size_t p = 0; p < book->size(); ++p) {
    const Opening& o = book->ForPair(p);
    Position pos = o.start;
    for (Move m : o.moves) {
      UndoInfo undo;
      pos.DoMove(m, undo);
    }
    text += pos.Fen() + "\n";
  }
  return text;
}

}  // namespace arbiter::match

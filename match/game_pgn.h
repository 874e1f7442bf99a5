// A played game as PGN: the seven tags plus TimeControl, Termination (and FEN/SetUp/PlyCount
// from the writer), SAN moves with `{score/depth time}` comments, the end reason last.
#pragma once

#include <string>

#include "engine/pgn.h"
#include "match/game.h"

namespace arbiter::match {

struct PgnContext {
  std::string event = "arbiter match";
  std::string site = "?";
  std::string date;  // "YYYY.MM.DD"; empty: today (UTC)
  std::string round = "?";
};

// "+0.31/12 0.105s", "-M3/20 1.2s", "book", "auto move ..." for one move.
std::string MoveComment(const MoveRecord& m);
PgnGame ToPgnGame(const GameRecord& game, const PgnContext& context);
// Today's date in UTC as PGN writes it.
std::string PgnDateToday();

}  // namespace arbiter::match

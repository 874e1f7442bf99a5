#include "match/game_pgn.h"

#include <cstdio>
#include <ctime>

#include "base/strings.h"

namespace arbiter::match {

std::string PgnDateToday() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d.%02d.%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
  return buf;
}

std::string MoveComment(const MoveRecord& m) {
  if (m.book) return "";
  std::string s;
  if (m.score.kind == UciScore::kMate) {
    s = Cat(m.score.value > 0 ? "+M" : "-M", std::abs(m.score.value));
  } else if (m.score.kind == UciScore::kCp) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.2f", m.score.value / 100.0);
    s = buf;
  }
  if (!s.empty() && m.depth >= 0) s += Cat("/", m.depth);
  char t[32];
  std::snprintf(t, sizeof t, "%.3fs", m.time.count() / 1000.0);
  s += Cat(s.empty() ? "" : " ", t);
  if (m.auto_move) s += ", auto move (time expired)";
  return s;
}

PgnGame ToPgnGame(const GameRecord& game, const PgnContext& context) {
  PgnGame g;
  g.event = context.event;
  g.site = context.site;
  g.date = context.date.empty() ? PgnDateToday() : context.date;
  g.round = context.round;
  g.white = game.white;
  g.black = game.black;
  g.result = std::string(ResultString(game.result));
  // TimeControl as the PGN standard reads it ("?" when it cannot say the clock), and the exact
  // `--tc` text in ArbiterTimeControl when it does not (docs/rules.md, "Clocks").
  g.time_control = game.tc[kWhite].ToPgn();
  if (std::string ext = game.tc[kWhite].PgnExtension(); !ext.empty())
    g.extra_tags.emplace_back("ArbiterTimeControl", ext);
  if (game.tc[kWhite].ToString() != game.tc[kBlack].ToString()) {
    for (Color c : {kWhite, kBlack}) {
      const char* side = c == kWhite ? "White" : "Black";
      g.extra_tags.emplace_back(Cat(side, "TimeControl"), game.tc[c].ToPgn());
      if (std::string ext = game.tc[c].PgnExtension(); !ext.empty())
        g.extra_tags.emplace_back(Cat(side, "ArbiterTimeControl"), ext);
    }
  }
  g.termination = std::string(GameEndPgnTag(game.end));
  g.start = game.start;
  for (const MoveRecord& m : game.moves) {
    g.moves.push_back(m.move);
    g.comments.push_back(MoveComment(m));
  }
  if (!game.reason.empty()) {
    if (g.comments.empty()) {
      // No move to hang the reason on: it goes into a tag instead.
      g.extra_tags.emplace_back("TerminationDetails", game.reason);
    } else {
      std::string& last = g.comments.back();
      last += Cat(last.empty() ? "" : ", ", game.reason);
    }
  }
  return g;
}

}  // namespace arbiter::match

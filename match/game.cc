#include "match/game.h"

#include <cstdlib>

#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"

namespace arbiter::match {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

const char* kColorName[2] = {"White", "Black"};

// A score in centipawns from White's point of view; mates are large.
int WhiteCp(const UciScore& s, Color mover) {
  int cp =
      s.kind == UciScore::kMate ? (s.value > 0 ? 100000 - s.value : -100000 - s.value) : s.value;
  return mover == kWhite ? cp : -cp;
}

std::string GoCommand(const Clock clocks[2], Color side) {
  const TimeControl& tc = clocks[side].tc();
  switch (tc.kind) {
    case TimeControl::Kind::kMoveTime:
      return Cat("go movetime ", tc.movetime.count());
    case TimeControl::Kind::kDepth:
      return Cat("go depth ", tc.depth);
    case TimeControl::Kind::kNodes:
      return Cat("go nodes ", tc.nodes);
    case TimeControl::Kind::kClock:
      break;
  }
  GoLimits own = clocks[side].ForGo();
  GoLimits other =
      clocks[~side].tc().kind == TimeControl::Kind::kClock ? clocks[~side].ForGo() : own;
  const GoLimits& w = side == kWhite ? own : other;
  const GoLimits& b = side == kWhite ? other : own;
  std::string go = Cat("go wtime ", w.time.count(), " btime ", b.time.count());
  if (w.increment.count() || b.increment.count())
    go += Cat(" winc ", w.increment.count(), " binc ", b.increment.count());
  if (own.movestogo) go += Cat(" movestogo ", own.movestogo);
  return go;
}

// Tracks the score-based adjudications (docs/rules.md, "Adjudication and game length").
class Adjudicator {
 public:
  explicit Adjudicator(const Adjudication& a) : a_(a) {}

  // After a move by `mover` at full move `fullmove`; returns the adjudicated result or kOngoing.
  GameResult Update(const MoveRecord& m, Color mover, int fullmove, std::string& reason) {
    if (m.score.kind == UciScore::kNone || m.book) {
      white_streak_ = black_streak_ = draw_streak_ = 0;
      return GameResult::kOngoing;
    }
    const int cp = WhiteCp(m.score, mover);
    if (a_.resign_move_count > 0) {
      white_streak_ = cp >= a_.resign_score ? white_streak_ + 1 : 0;
      black_streak_ = cp <= -a_.resign_score ? black_streak_ + 1 : 0;
      if (white_streak_ >= 2 * a_.resign_move_count) {
        reason = "White wins by adjudication (both engines agree)";
        return GameResult::kWhiteWins;
      }
      if (black_streak_ >= 2 * a_.resign_move_count) {
        reason = "Black wins by adjudication (both engines agree)";
        return GameResult::kBlackWins;
      }
    }
    if (a_.draw_move_count > 0 && fullmove >= a_.draw_move_number) {
      draw_streak_ = std::abs(cp) <= a_.draw_score ? draw_streak_ + 1 : 0;
      if (draw_streak_ >= 2 * a_.draw_move_count) {
        reason = "Draw by adjudication (scores near zero)";
        return GameResult::kDraw;
      }
    }
    return GameResult::kOngoing;
  }

 private:
  Adjudication a_;
  int white_streak_ = 0, black_streak_ = 0, draw_streak_ = 0;
};

}  // namespace

std::string_view GameEndName(GameEnd end) {
  switch (end) {
    case GameEnd::kNormal:
      return "normal";
    case GameEnd::kTimeForfeit:
      return "time forfeit";
    case GameEnd::kIllegalMove:
      return "illegal move";
    case GameEnd::kDisconnect:
      return "disconnect";
    case GameEnd::kStall:
      return "stall";
    case GameEnd::kAdjudication:
      return "adjudication";
    case GameEnd::kResignation:
      return "resignation";
    case GameEnd::kAborted:
      return "aborted";
  }
  return "?";
}

std::string_view GameEndPgnTag(GameEnd end) {
  switch (end) {
    case GameEnd::kNormal:
    case GameEnd::kResignation:  // the standard's "normal" (cutechess too); the reason says so
      return "normal";
    case GameEnd::kTimeForfeit:
      return "time forfeit";
    case GameEnd::kIllegalMove:
      return "rules infraction";
    case GameEnd::kDisconnect:
    case GameEnd::kStall:
      return "abandoned";
    case GameEnd::kAdjudication:
      return "adjudication";
    case GameEnd::kAborted:
      return "unterminated";
  }
  return "unterminated";
}

bool IsFault(GameEnd end) {
  return end == GameEnd::kTimeForfeit || end == GameEnd::kIllegalMove ||
         end == GameEnd::kDisconnect || end == GameEnd::kStall;
}

void FaultCounts::Add(GameEnd end) {
  if (end == GameEnd::kTimeForfeit) ++time_losses;
  if (end == GameEnd::kDisconnect) ++disconnects;
  if (end == GameEnd::kStall) ++stalls;
  if (end == GameEnd::kIllegalMove) ++illegal_moves;
}

bool Unplayed(const GameRecord& r) {
  if (!r.start_error.empty()) return true;
  if (r.end != GameEnd::kDisconnect) return false;
  Color side = r.start.SideToMove();
  for (const MoveRecord& m : r.moves) {
    if (!m.book && side == r.faulty) return false;
    side = ~side;
  }
  return true;
}

GameRecord PlayGame(UciEngine* engines[2], const Opening& opening, const GameSettings& settings,
                    const std::atomic<bool>* abort) {
  GameRecord rec;
  rec.white = engines[kWhite]->name();
  rec.black = engines[kBlack]->name();
  rec.start = opening.start;
  rec.start.SetChess960(settings.chess960 || opening.start.IsChess960());
  rec.tc[0] = settings.tc[0];
  rec.tc[1] = settings.tc[1];

  auto lose = [&](Color side, GameEnd end, std::string reason) {
    rec.result = side == kWhite ? GameResult::kBlackWins : GameResult::kWhiteWins;
    rec.end = end;
    rec.faulty = side;
    rec.reason = std::move(reason);
  };

  // The flag of `side` fell (a late move, a stall past its clock, a disconnect with its clock
  // running): it loses unless the opponent cannot checkmate by any series of legal moves, and then
  // it is a draw (the Laws, 6.9). `end` still says how (a stall or a crash is that engine's
  // fault). Without a clock (depth=/nodes= searches) nothing falls: a plain loss.
  auto on_time = [&](const Position& pos, Color side, GameEnd end, const std::string& what,
                     bool clocked) {
    if (clocked && !CanCheckmate(pos, ~side)) {
      rec.result = GameResult::kDraw;
      rec.end = end;
      rec.faulty = side;
      rec.reason = Cat(what, ", but ", kColorName[~side], " cannot checkmate: draw");
      return;
    }
    lose(side, end, what);
  };

  // Engines that cannot be (re)started or do not answer ucinewgame lose by disconnect.
  bool failed[2] = {false, false};
  std::string why[2];
  for (Color c : {kWhite, kBlack}) {
    absl::Status st = engines[c]->EnsureRunning();
    if (st.ok()) st = engines[c]->NewGame(rec.start.IsChess960());
    if (!st.ok()) {
      failed[c] = true;
      why[c] = std::string(st.message());
      engines[c]->Kill();
    }
  }
  if (failed[kWhite] && failed[kBlack]) {
    rec.end = GameEnd::kAborted;
    rec.reason = Cat("both engines failed to start: ", why[kWhite], "; ", why[kBlack]);
    rec.start_error = why[kWhite];
    return rec;
  }
  for (Color c : {kWhite, kBlack})
    if (failed[c]) {
      lose(c, GameEnd::kDisconnect, Cat(kColorName[c], " disconnects (", why[c], ")"));
      rec.start_error = why[c];
      return rec;
    }

  Game game(rec.start);
  for (Move m : opening.moves) {
    MoveRecord mr{.move = m, .san = MoveToSan(game.Current(), m), .book = true};
    if (!game.Play(m).ok()) break;  // books are replayed when loaded; cannot happen
    rec.moves.push_back(std::move(mr));
  }
  const bool startpos =
      !rec.start.IsChess960() && rec.start.Fen() == Position::StartPosition().Fen();
  std::string position_cmd = startpos ? "position startpos" : Cat("position fen ", rec.start.Fen());
  if (!game.Moves().empty()) {
    position_cmd += " moves";
    Position p = rec.start;
    for (Move m : game.Moves()) {
      position_cmd += Cat(" ", MoveToUci(p, m));
      UndoInfo u;
      p.DoMove(m, u);
    }
  }
  bool have_moves = !game.Moves().empty();

  Clock clocks[2] = {Clock(settings.tc[kWhite]), Clock(settings.tc[kBlack])};
  Adjudicator adjudicator(settings.adjudication);
  const SteadyTime game_start = SteadyClock::now();
  auto finish = [&]() {
    rec.wall = duration_cast<microseconds>(SteadyClock::now() - game_start);
    return rec;
  };

  while (!game.Outcome().IsOver()) {
    if (abort && abort->load(std::memory_order_relaxed)) {
      rec.end = GameEnd::kAborted;
      rec.reason = "match stopped";
      return finish();
    }
    const int max_moves = settings.adjudication.max_moves;
    if (max_moves > 0 && game.Plies() >= 2 * max_moves) {
      rec.result = GameResult::kDraw;
      rec.end = GameEnd::kAdjudication;
      rec.reason = Cat("Draw by adjudication (maximum length of ", max_moves, " moves)");
      return finish();
    }
    const Position& pos = game.Current();
    const Color side = pos.SideToMove();
    UciEngine& eng = *engines[side];
    Clock& clock = clocks[side];

    const std::string go = GoCommand(clocks, side);
    const Clock& other = clocks[~side];
    const SearchRequest request{.start = rec.start,
                                .moves = game.Moves(),
                                .uci_position = position_cmd,
                                .uci_go = go,
                                .tc = clock.tc(),
                                .own_time = clock.ForGo().time,
                                .opponent_time = other.tc().kind == TimeControl::Kind::kClock
                                                     ? other.ForGo().time
                                                     : clock.ForGo().time};
    absl::Status st = eng.StartSearch(request);
    const bool clocked = clock.tc().HasClock();
    if (!st.ok() && st.code() == absl::StatusCode::kFailedPrecondition) {
      // It cannot be given this game (a CECP engine without setboard, a node limit): a fault of
      // the engine, not a crash.
      lose(side, GameEnd::kDisconnect,
           Cat(kColorName[side], " cannot play this game (", std::string(st.message()), ")"));
      eng.Kill();
      return finish();
    }
    if (!st.ok()) {
      // It died during the opponent's time: its clock runs, and it can only fall.
      on_time(pos, side, GameEnd::kDisconnect,
              Cat(kColorName[side], " disconnects (", std::string(st.message()), "; ",
                  eng.EndAndDescribe(), ")"),
              clocked);
      return finish();
    }
    const SteadyTime t0 = eng.LastWriteTime();
    SteadyTime deadline =
        t0 + (clocked ? clock.Allowance() + settings.margin : settings.no_clock_timeout);

    InfoLine last_info, info;
    std::optional<std::string> best;
    SteadyTime t1{};
    bool stop_sent = false;
    std::vector<OutputLine> lines;
    while (!best) {
      lines.clear();
      ReadResult r = eng.ReadUntilBestmove(deadline, lines);
      for (const OutputLine& line : lines) {
        std::string text;
        switch (eng.ParseSearchLine(line.text, info, text)) {
          case SearchOutput::kInfo:
            if (info.multipv == 1 && info.score.kind != UciScore::kNone && !info.score.lowerbound &&
                !info.score.upperbound)
              last_info = info;
            else if (info.multipv == 1 && info.depth > last_info.depth)
              last_info.depth = info.depth;
            break;
          case SearchOutput::kMove:
            best = std::move(text);
            t1 = line.time;
            break;
          case SearchOutput::kResign:
            // The engine's own resignation (CECP): a loss of its own, not a fault.
            (void)eng.EndSearch();
            rec.result = side == kWhite ? GameResult::kBlackWins : GameResult::kWhiteWins;
            rec.end = GameEnd::kResignation;
            rec.reason = Cat(kColorName[side], " resigns");
            return finish();
          case SearchOutput::kRefusal:
            // It refused a legal move or command arbiter sent: a protocol fault, its loss.
            lose(side, GameEnd::kIllegalMove,
                 Cat(kColorName[side], " refuses what arbiter sent: ", text));
            rec.illegal_move = text;
            rec.illegal_fen = pos.Fen();
            eng.Kill();
            return finish();
          case SearchOutput::kOther:
            break;
        }
        if (best) break;
      }
      if (best) break;
      if (r == ReadResult::kEof) {
        on_time(pos, side, GameEnd::kDisconnect,
                Cat(kColorName[side], " disconnects (", eng.EndAndDescribe(), ")"), clocked);
        return finish();
      }
      if (r == ReadResult::kLine) continue;
      if (!stop_sent) {
        (void)eng.StopSearch();
        stop_sent = true;
        deadline = SteadyClock::now() + settings.stop_grace;
      } else {
        eng.Kill();
        // Silent past its whole clock and the grace after `stop`: a flag fall (and a stall).
        on_time(pos, side, GameEnd::kStall,
                Cat(kColorName[side], " stalls (no bestmove ", settings.stop_grace.count(),
                    " ms after stop)", clocked ? "; its flag fell" : ""),
                clocked);
        rec.overrun = duration_cast<Millis>(SteadyClock::now() - t0) - clock.Allowance();
        return finish();
      }
    }
    const microseconds used_us = duration_cast<microseconds>(t1 - t0);
    rec.think += used_us;
    ++rec.engine_moves;
    const Millis used = duration_cast<Millis>(used_us);
    MoveVerdict verdict = clock.Finish(used, settings.margin);
    if (verdict.flag_fell) {
      rec.overrun = verdict.overrun;
      on_time(pos, side, GameEnd::kTimeForfeit,
              Cat(kColorName[side], "'s flag fell (overrun ", verdict.overrun.count(), " ms)"),
              true);
      return finish();
    }
    if (clock.tc().sandclock) clocks[~side].CreditOpponentTime(used);
    (void)eng.EndSearch();
    absl::StatusOr<Move> move = eng.ParseMove(pos, *best);
    MoveRecord mr;
    if (verdict.expired) {
      // Online per-move limit: the arbiter moves for the player (the engine's move if legal).
      if (!move.ok()) {
        MoveList legal;
        GenerateLegal(pos, legal);
        move = legal.moves[0];
      }
      mr.auto_move = true;
    } else if (!move.ok()) {
      lose(side, GameEnd::kIllegalMove,
           Cat(kColorName[side], " plays an illegal move: ", best->empty() ? "(empty)" : *best));
      rec.illegal_move = *best;
      rec.illegal_fen = pos.Fen();
      return finish();
    }
    mr.move = *move;
    mr.san = MoveToSan(pos, *move);
    mr.score = last_info.score;
    mr.depth = last_info.depth;
    mr.time = used;
    position_cmd += Cat(have_moves ? " " : " moves ", MoveToUci(pos, *move));
    have_moves = true;
    const int fullmove = pos.FullmoveNumber();
    (void)game.Play(*move);
    rec.moves.push_back(mr);
    if (settings.plies) settings.plies->fetch_add(1, std::memory_order_relaxed);
    if (game.Outcome().IsOver()) break;
    std::string adj_reason;
    GameResult adj = adjudicator.Update(rec.moves.back(), side, fullmove, adj_reason);
    if (adj != GameResult::kOngoing) {
      rec.result = adj;
      rec.end = GameEnd::kAdjudication;
      rec.reason = std::move(adj_reason);
      return finish();
    }
  }
  GameOutcome out = game.Outcome();
  rec.result = out.result;
  rec.end = GameEnd::kNormal;
  rec.board = out.termination;
  if (out.termination == Termination::kCheckmate)
    rec.reason = Cat(kColorName[out.result == GameResult::kWhiteWins ? 0 : 1], " mates");
  else
    rec.reason = Cat("Draw by ", TerminationName(out.termination));
  return finish();
}

}  // namespace arbiter::match

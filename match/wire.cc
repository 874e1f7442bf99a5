#include "match/wire.h"

#include <algorithm>

namespace arbiter::match {

v1::GameEnd GameEndToProto(GameEnd end) {
  switch (end) {
    case GameEnd::kNormal:
      return v1::GAME_END_NORMAL;
    case GameEnd::kTimeForfeit:
      return v1::GAME_END_TIME_FORFEIT;
    case GameEnd::kIllegalMove:
      return v1::GAME_END_ILLEGAL_MOVE;
    case GameEnd::kDisconnect:
      return v1::GAME_END_DISCONNECT;
    case GameEnd::kStall:
      return v1::GAME_END_STALL;
    case GameEnd::kAdjudication:
      return v1::GAME_END_ADJUDICATION;
    case GameEnd::kResignation:
      return v1::GAME_END_RESIGNATION;
    case GameEnd::kAborted:
      break;
  }
  return v1::GAME_END_UNSPECIFIED;
}

std::optional<GameEnd> GameEndFromProto(v1::GameEnd end) {
  switch (end) {
    case v1::GAME_END_NORMAL:
      return GameEnd::kNormal;
    case v1::GAME_END_TIME_FORFEIT:
      return GameEnd::kTimeForfeit;
    case v1::GAME_END_ILLEGAL_MOVE:
      return GameEnd::kIllegalMove;
    case v1::GAME_END_DISCONNECT:
      return GameEnd::kDisconnect;
    case v1::GAME_END_STALL:
      return GameEnd::kStall;
    case v1::GAME_END_ADJUDICATION:
      return GameEnd::kAdjudication;
    case v1::GAME_END_RESIGNATION:
      return GameEnd::kResignation;
    default:
      return std::nullopt;
  }
}

v1::GameResult GameResultToProto(GameResult result) {
  switch (result) {
    case GameResult::kWhiteWins:
      return v1::GAME_RESULT_WHITE_WINS;
    case GameResult::kBlackWins:
      return v1::GAME_RESULT_BLACK_WINS;
    case GameResult::kDraw:
      return v1::GAME_RESULT_DRAW;
    case GameResult::kOngoing:
      break;
  }
  return v1::GAME_RESULT_UNSPECIFIED;
}

std::optional<GameResult> GameResultFromProto(v1::GameResult result) {
  switch (result) {
    case v1::GAME_RESULT_WHITE_WINS:
      return GameResult::kWhiteWins;
    case v1::GAME_RESULT_BLACK_WINS:
      return GameResult::kBlackWins;
    case v1::GAME_RESULT_DRAW:
      return GameResult::kDraw;
    default:
      return std::nullopt;
  }
}

std::string_view GameResultText(v1::GameResult result) {
  return ResultString(GameResultFromProto(result).value_or(GameResult::kOngoing));
}

void SetResultAndEnd(v1::GameSummary& game, v1::GameResult result, v1::GameEnd end) {
  game.set_game_result(result);
  game.set_end(end);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  game.set_result(std::string(GameResultText(result)));
  game.set_termination(std::string(GameEndName(GameEndFromProto(end).value_or(GameEnd::kAborted))));
#pragma GCC diagnostic pop
}

v1::Side SideToProto(Color side) { return side == kWhite ? v1::SIDE_WHITE : v1::SIDE_BLACK; }

std::optional<Color> SideFromProto(v1::Side side) {
  if (side == v1::SIDE_WHITE) return kWhite;
  if (side == v1::SIDE_BLACK) return kBlack;
  return std::nullopt;
}

v1::EngineFaults FaultsToProto(const FaultCounts& faults, const std::string& name) {
  v1::EngineFaults out;
  out.set_name(name);
  out.set_time_losses(faults.time_losses);
  out.set_disconnects(faults.disconnects);
  out.set_stalls(faults.stalls);
  out.set_illegal_moves(faults.illegal_moves);
  return out;
}

v1::GameRules RulesToProto(const MatchOptions& options, const std::string& event,
                           const v1::EngineLimits& limits) {
  v1::GameRules r;
  const GameSettings& s = options.settings;
  r.set_margin_ms(uint32_t(s.margin.count()));
  r.set_stop_grace_ms(uint32_t(s.stop_grace.count()));
  r.set_move_timeout_ms(uint32_t(s.no_clock_timeout.count()));
  r.set_handshake_timeout_ms(uint32_t(options.timeouts.handshake.count()));
  const Adjudication& a = s.adjudication;
  r.set_draw_move_number(uint32_t(std::max(0, a.draw_move_number)));
  r.set_draw_move_count(uint32_t(std::max(0, a.draw_move_count)));
  r.set_draw_score_cp(uint32_t(std::max(0, a.draw_score)));
  r.set_resign_move_count(uint32_t(std::max(0, a.resign_move_count)));
  r.set_resign_score_cp(uint32_t(std::max(0, a.resign_score)));
  r.set_max_moves(uint32_t(std::max(0, a.max_moves)));
  r.set_event(event);
  r.set_chess960(options.chess960);
  r.set_affinity(options.affinity);
  *r.mutable_engine_limits() = limits;
  return r;
}

void ApplyRules(const v1::GameRules& rules, GameSettings& settings, EngineTimeouts& timeouts) {
  if (rules.has_margin_ms()) settings.margin = Millis(rules.margin_ms());
  if (rules.has_stop_grace_ms()) settings.stop_grace = Millis(rules.stop_grace_ms());
  if (rules.has_move_timeout_ms()) settings.no_clock_timeout = Millis(rules.move_timeout_ms());
  Adjudication& a = settings.adjudication;
  a.draw_move_number = int(rules.draw_move_number());
  a.draw_move_count = int(rules.draw_move_count());
  a.draw_score = int(rules.draw_score_cp());
  a.resign_move_count = int(rules.resign_move_count());
  a.resign_score = int(rules.resign_score_cp());
  a.max_moves = int(rules.max_moves());
  if (rules.has_handshake_timeout_ms())
    timeouts.handshake = timeouts.ready = Millis(rules.handshake_timeout_ms());
}

}  // namespace arbiter::match

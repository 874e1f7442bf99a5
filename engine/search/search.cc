#include "engine/search/search.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "engine/movegen.h"

namespace arbiter::search {
namespace {

constexpr int kSeeValue[7] = {100, 320, 330, 500, 950, 20000, 0};

// Move ordering tiers (higher first).
constexpr int kHashMoveScore = 4'000'000;
constexpr int kGoodCaptureScore = 2'000'000;
constexpr int kKillerScore = 1'000'000;
constexpr int kBadCaptureScore = -1'000'000;
constexpr int kHistoryMax = 16384;

// Mate scores are stored relative to the node, not the root.
int ScoreToTt(int s, int ply) { return s >= kMateBound ? s + ply : s <= -kMateBound ? s - ply : s; }
int ScoreFromTt(int s, int ply) {
  return s >= kMateBound ? s - ply : s <= -kMateBound ? s + ply : s;
}

PieceType CapturedType(const Position& pos, Move m) {
  if (m.KindOf() == Move::kEnPassant) return kPawn;
  const Piece p = pos.PieceOn(m.To());
  return p == kNoPiece ? kNoPieceType : TypeOf(p);
}

bool HasNonPawnMaterial(const Position& pos, Color c) {
  return pos.Pieces(c) & ~(pos.Pieces(kPawn) | pos.Pieces(kKing));
}

// Legal moves with ordering scores, handed out best first by selection.
struct MovePicker {
  MoveList list;
  int scores[256];
  int next = 0;

  Move Next() {
    if (next >= list.size) return Move::None();
    int best = next;
    for (int i = next + 1; i < list.size; ++i)
      if (scores[i] > scores[best]) best = i;
    std::swap(list.moves[next], list.moves[best]);
    std::swap(scores[next], scores[best]);
    return list.moves[next++];
  }
};

// MVV-LVA: the most valuable victim first, then the least valuable attacker.
int MvvLva(const Position& pos, Move m) {
  const PieceType victim = CapturedType(pos, m);
  const int v = victim == kNoPieceType ? 0 : kSeeValue[victim];
  return v * 8 - int(TypeOf(pos.PieceOn(m.From())));
}

}  // namespace

bool SeeAtLeast(const Position& pos, Move m, int threshold) {
  if (m.KindOf() != Move::kNormal) return threshold <= 0;
  const Square from = m.From(), to = m.To();
  const Piece victim = pos.PieceOn(to);
  int swap = (victim == kNoPiece ? 0 : kSeeValue[TypeOf(victim)]) - threshold;
  if (swap < 0) return false;
  swap = kSeeValue[TypeOf(pos.PieceOn(from))] - swap;
  if (swap <= 0) return true;

  Bitboard occ = pos.Pieces() ^ SquareBb(from) ^ SquareBb(to);
  Color side = ColorOf(pos.PieceOn(from));
  Bitboard attackers = pos.AttackersTo(to, kWhite, occ) | pos.AttackersTo(to, kBlack, occ);
  const Bitboard diagonal = pos.Pieces(kBishop) | pos.Pieces(kQueen);
  const Bitboard straight = pos.Pieces(kRook) | pos.Pieces(kQueen);
  int result = 1;
  for (;;) {
    side = ~side;
    attackers &= occ;
    const Bitboard mine = attackers & pos.Pieces(side);
    if (!mine) break;
    result ^= 1;
    int pt = kPawn;
    Bitboard bb = 0;
    for (; pt <= kKing; ++pt)
      if ((bb = mine & pos.Pieces(PieceType(pt)))) break;
    // A king may only recapture when nothing defends the square any more.
    if (pt == kKing) return (attackers & pos.Pieces(~side)) ? result ^ 1 : result;
    swap = kSeeValue[pt] - swap;
    if (swap < result) break;
    occ ^= bb & (0 - bb);
    if (pt == kPawn || pt == kBishop || pt == kQueen)
      attackers |= BishopAttacks(to, occ) & diagonal;
    if (pt == kRook || pt == kQueen) attackers |= RookAttacks(to, occ) & straight;
  }
  return result;
}

bool InsufficientMaterial(const Position& pos) {
  if (pos.Pieces(kPawn) | pos.Pieces(kRook) | pos.Pieces(kQueen)) return false;
  const Bitboard minors = pos.Pieces(kKnight) | pos.Pieces(kBishop);
  if (!MoreThanOne(minors)) return true;
  // Only bishops, all on squares of one colour.
  if (pos.Pieces(kKnight)) return false;
  const Bitboard b = pos.Pieces(kBishop);
  return !(b & kDarkSquares) || !(b & ~kDarkSquares);
}

Searcher::Searcher(size_t hash_mb) : tt_(hash_mb) {
  for (int d = 1; d < 64; ++d)
    for (int m = 1; m < 64; ++m)
      reductions_[d][m] = uint8_t(0.6 + std::log(double(d)) * std::log(double(m)) / 2.3);
}

void Searcher::NewGame() {
  tt_.Clear();
  std::memset(history_, 0, sizeof(history_));
  std::memset(killers_, 0, sizeof(killers_));
}

int64_t Searcher::ElapsedMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start_)
      .count();
}

bool Searcher::ShouldAbort() {
  if (aborted_) return true;
  if (node_limit_ && nodes_ >= node_limit_) {
    aborted_ = true;
  } else if ((nodes_ & 1023) == 0) {
    if (control_->stop.load(std::memory_order_relaxed))
      aborted_ = true;
    else if (budget_.hard_ms >= 0 && !control_->pondering.load(std::memory_order_relaxed) &&
             ElapsedMs() >= budget_.hard_ms)
      aborted_ = true;
  }
  return aborted_;
}

bool Searcher::IsDraw(const Position& pos) const {
  if (InsufficientMaterial(pos)) return true;
  if (pos.HalfmoveClock() >= 100) return !pos.InCheck() || CountLegal(pos) > 0;
  // Any earlier occurrence with the same side to move since the last irreversible move (and not
  // across a null move) counts: the opponent can always steer into a third one.
  const int last = int(keys_.size()) - 1;
  const int reach = std::min(pos.HalfmoveClock(), last - null_floor_);
  const uint64_t key = keys_[last];
  for (int i = 4; i <= reach; i += 2)
    if (keys_[last - i] == key) return true;
  return false;
}

void Searcher::UpdateQuietStats(Move best, int ply, int depth, const Move* quiets, int quiet_count,
                                Color us) {
  if (killers_[ply][0] != best) {
    killers_[ply][1] = killers_[ply][0];
    killers_[ply][0] = best;
  }
  const int bonus = std::min(depth * depth, 400);
  auto update = [&](Move m, int delta) {
    int& h = history_[us][m.From()][m.To()];
    h += delta - h * std::abs(delta) / kHistoryMax;
  };
  update(best, bonus);
  for (int i = 0; i < quiet_count; ++i)
    if (quiets[i] != best) update(quiets[i], -bonus);
}

// The principal variation at `ply` becomes `m` followed by the child's line.
void Searcher::UpdatePv(Move m, int ply) {
  pv_[ply][ply] = m;
  for (int i = ply + 1; i < pv_length_[ply + 1]; ++i) pv_[ply][i] = pv_[ply + 1][i];
  pv_length_[ply] = std::max(pv_length_[ply + 1], ply + 1);
}

int Searcher::Quiescence(Position& pos, int alpha, int beta, int ply) {
  pv_length_[ply] = ply;
  ++nodes_;
  if (ShouldAbort()) return 0;
  seldepth_ = std::max(seldepth_, ply);
  if (IsDraw(pos)) return 0;
  if (ply >= kMaxPly) return Evaluate(pos, eval_params_);

  const bool in_check = pos.InCheck();
  const TtEntry* entry = tt_.Probe(pos.Key());
  Move tt_move;
  if (entry) {
    tt_move = Move(entry->move);
    const int s = ScoreFromTt(entry->score, ply);
    const Bound b = entry->bound();
    if (b == kBoundExact || (b == kBoundLower && s >= beta) || (b == kBoundUpper && s <= alpha))
      return s;
  }

  int best = -kMate + ply, stand_pat = -kInfinite;
  const int alpha_in = alpha;
  if (!in_check) {
    stand_pat = entry ? entry->eval : Evaluate(pos, eval_params_);
    if (stand_pat >= beta) return stand_pat;
    alpha = std::max(alpha, stand_pat);
    best = stand_pat;
  }

  MovePicker picker;
  if (in_check)
    GenerateLegal(pos, picker.list);
  else
    GenerateTactical(pos, picker.list);
  if (in_check && picker.list.size == 0) return -kMate + ply;
  for (int i = 0; i < picker.list.size; ++i) {
    const Move m = picker.list.moves[i];
    picker.scores[i] = m == tt_move ? kHashMoveScore
                       : pos.IsCapture(m) || m.KindOf() == Move::kPromotion
                           ? kGoodCaptureScore + MvvLva(pos, m)
                           : history_[pos.SideToMove()][m.From()][m.To()];
  }

  Move best_move;
  for (Move m = picker.Next(); !m.IsNone(); m = picker.Next()) {
    if (!in_check) {
      const PieceType victim = CapturedType(pos, m);
      const int gain = victim == kNoPieceType ? 0 : kSeeValue[victim];
      // Delta pruning: even winning this piece for free would not reach alpha.
      if (m.KindOf() != Move::kPromotion && stand_pat + gain + 200 <= alpha) continue;
      if (!SeeAtLeast(pos, m, 0)) continue;
    }
    UndoInfo undo;
    pos.DoMove(m, undo);
    keys_.push_back(pos.Key().lo);
    const int score = -Quiescence(pos, -beta, -alpha, ply + 1);
    keys_.pop_back();
    pos.UndoMove(m, undo);
    if (aborted_) return 0;
    if (score > best) {
      best = score;
      if (score > alpha) {
        alpha = score;
        best_move = m;
        UpdatePv(m, ply);
        if (score >= beta) break;
      }
    }
  }
  const Bound bound = best >= beta ? kBoundLower : best > alpha_in ? kBoundExact : kBoundUpper;
  tt_.Store(pos.Key(), 0, ScoreToTt(best, ply), in_check ? 0 : stand_pat, bound, best_move);
  return best;
}

int Searcher::AlphaBeta(Position& pos, int alpha, int beta, int depth, int ply, bool cut_node,
                        bool null_allowed) {
  if (depth <= 0) return Quiescence(pos, alpha, beta, ply);
  pv_length_[ply] = ply;
  ++nodes_;
  if (ShouldAbort()) return 0;
  seldepth_ = std::max(seldepth_, ply);
  const bool root = ply == 0;
  const bool pv_node = beta - alpha > 1;
  if (!root) {
    if (IsDraw(pos)) return 0;
    if (ply >= kMaxPly) return Evaluate(pos, eval_params_);
    // Mate distance pruning: no line here can beat a mate already found closer to the root.
    alpha = std::max(alpha, -kMate + ply);
    beta = std::min(beta, kMate - ply - 1);
    if (alpha >= beta) return alpha;
  }

  const Color us = pos.SideToMove();
  const bool in_check = pos.InCheck();
  const TtEntry* entry = tt_.Probe(pos.Key());
  Move tt_move = root ? root_best_ : Move();
  if (entry) {
    if (!root) tt_move = Move(entry->move);
    const int s = ScoreFromTt(entry->score, ply);
    const Bound b = entry->bound();
    if (!pv_node && entry->depth >= depth &&
        (b == kBoundExact || (b == kBoundLower && s >= beta) || (b == kBoundUpper && s <= alpha)))
      return s;
  }

  int static_eval = -kInfinite;
  if (!in_check) static_eval = entry ? entry->eval : Evaluate(pos, eval_params_);
  static_eval_[ply] = static_eval;
  const bool improving = !in_check && ply >= 2 && static_eval > static_eval_[ply - 2];

  if (!pv_node && !in_check) {
    // Reverse futility pruning: far above beta at low depth, assume the cutoff.
    if (depth <= 6 && std::abs(beta) < kMateBound &&
        static_eval - params_.futility_margin * (depth - improving) >= beta)
      return static_eval;
    // Null-move pruning: if passing still fails high, a real move would too (not in zugzwang,
    // which needs pieces besides pawns to be unlikely).
    if (null_allowed && depth >= 3 && static_eval >= beta && HasNonPawnMaterial(pos, us)) {
      const int r =
          params_.null_move_reduction + depth / 4 + std::min((static_eval - beta) / 200, 3);
      UndoInfo undo;
      pos.DoNullMove(undo);
      keys_.push_back(pos.Key().lo);
      const int saved_floor = null_floor_;
      null_floor_ = int(keys_.size()) - 1;
      const int s = -AlphaBeta(pos, -beta, -beta + 1, depth - 1 - r, ply + 1, !cut_node, false);
      null_floor_ = saved_floor;
      keys_.pop_back();
      pos.UndoNullMove(undo);
      if (aborted_) return 0;
      if (s >= beta) return s >= kMateBound ? beta : s;
    }
  }
  // Internal iterative reduction: without a hash move the ordering is poor, search shallower.
  if (!root && tt_move.IsNone() && depth >= 5) --depth;

  MovePicker picker;
  GenerateLegal(pos, picker.list);
  if (picker.list.size == 0) return in_check ? -kMate + ply : 0;
  for (int i = 0; i < picker.list.size; ++i) {
    const Move m = picker.list.moves[i];
    int s;
    if (m == tt_move) {
      s = kHashMoveScore;
    } else if (pos.IsCapture(m) || m.KindOf() == Move::kPromotion) {
      if (m.KindOf() == Move::kPromotion && m.Promotion() != kQueen)
        s = kBadCaptureScore - 1000 + int(m.Promotion());
      else
        s = (SeeAtLeast(pos, m, 0) ? kGoodCaptureScore : kBadCaptureScore) + MvvLva(pos, m);
    } else if (m == killers_[ply][0]) {
      s = kKillerScore + 1;
    } else if (m == killers_[ply][1]) {
      s = kKillerScore;
    } else {
      s = history_[us][m.From()][m.To()];
    }
    picker.scores[i] = s;
  }

  const int alpha_in = alpha;
  int best = -kInfinite, moves_searched = 0, quiet_count = 0;
  Move best_move, quiets[64];
  const int lmp_limit = improving ? 3 + depth * depth : (3 + depth * depth) / 2;
  for (Move m = picker.Next(); !m.IsNone(); m = picker.Next()) {
    const bool quiet = !pos.IsCapture(m) && m.KindOf() != Move::kPromotion;
    const bool may_prune = !root && !in_check && best > -kMateBound;
    // Losing captures at low depth are not worth a search.
    if (may_prune && !quiet && depth <= 4 && picker.scores[picker.next - 1] < kKillerScore &&
        !SeeAtLeast(pos, m, -100 * depth))
      continue;

    UndoInfo undo;
    pos.DoMove(m, undo);
    const bool gives_check = pos.InCheck();
    if (may_prune && quiet && !gives_check && depth <= 5) {
      // Late-move pruning and futility pruning of quiet moves near the leaves.
      if (moves_searched >= lmp_limit ||
          static_eval + params_.futility_margin * depth + 60 <= alpha) {
        pos.UndoMove(m, undo);
        continue;
      }
    }
    keys_.push_back(pos.Key().lo);
    ++moves_searched;
    const int extension = gives_check && ply < 2 * root_depth_ ? 1 : 0;
    const int new_depth = depth - 1 + extension;
    int score;
    if (moves_searched == 1) {
      score = -AlphaBeta(pos, -beta, -alpha, new_depth, ply + 1, !pv_node && !cut_node, true);
    } else {
      // Late-move reductions for quiet moves ordered after the good ones.
      int r = 0;
      if (depth >= 3 && quiet && moves_searched > 2) {
        r = reductions_[std::min(depth, 63)][std::min(moves_searched, 63)] * params_.lmr_percent /
            100;
        r += !pv_node;
        r -= improving;
        r -= gives_check;
        r += cut_node;
        r -= history_[us][m.From()][m.To()] / 6000;
        if (picker.scores[picker.next - 1] >= kKillerScore) r -= 1;
        r = std::clamp(r, 0, new_depth - 1);
      }
      score = -AlphaBeta(pos, -alpha - 1, -alpha, new_depth - r, ply + 1, true, true);
      if (score > alpha && r > 0)
        score = -AlphaBeta(pos, -alpha - 1, -alpha, new_depth, ply + 1, !cut_node, true);
      if (score > alpha && score < beta)
        score = -AlphaBeta(pos, -beta, -alpha, new_depth, ply + 1, false, true);
    }
    keys_.pop_back();
    pos.UndoMove(m, undo);
    if (aborted_) return 0;

    if (score > best) {
      best = score;
      if (score > alpha) {
        alpha = score;
        best_move = m;
        UpdatePv(m, ply);
        if (score >= beta) {
          if (quiet) UpdateQuietStats(m, ply, depth, quiets, quiet_count, us);
          break;
        }
      }
    }
    if (quiet && quiet_count < 64) quiets[quiet_count++] = m;
  }
  // Every move was pruned: only possible with a fail-low position; return a bound.
  if (moves_searched == 0) return alpha;

  const Bound bound = best >= beta ? kBoundLower : best > alpha_in ? kBoundExact : kBoundUpper;
  tt_.Store(pos.Key(), depth, ScoreToTt(best, ply), in_check ? 0 : static_eval, bound, best_move);
  return best;
}

SearchResult Searcher::Search(const Position& root, const std::vector<uint64_t>& history,
                              const GoLimits& limits, int move_overhead_ms, SearchControl& control,
                              const std::function<void(const SearchInfo&)>& on_info) {
  start_ = std::chrono::steady_clock::now();
  control_ = &control;
  budget_ = AllocateTime(limits, root.SideToMove(), move_overhead_ms);
  node_limit_ = limits.nodes;
  nodes_ = 0;
  aborted_ = false;
  null_floor_ = 0;
  root_best_ = Move();
  keys_ = history;
  keys_.push_back(root.Key().lo);
  tt_.NewSearch();
  std::memset(killers_, 0, sizeof(killers_));
  for (auto& side : history_)
    for (auto& from : side)
      for (int& h : from) h /= 2;

  SearchResult result;
  Position pos = root;
  MoveList legal;
  GenerateLegal(pos, legal);
  if (legal.size == 0) return result;
  result.best = legal.moves[0];

  const int max_depth = limits.depth > 0 ? std::min(limits.depth, kMaxPly - 1) : kMaxPly - 1;
  const bool time_managed = budget_.soft_ms >= 0;
  int score = 0;
  for (int depth = 1; depth <= max_depth; ++depth) {
    root_depth_ = depth;
    seldepth_ = 0;
    int delta = params_.aspiration_window;
    int alpha = -kInfinite, beta = kInfinite;
    if (depth >= 5 && delta > 0) {
      alpha = std::max(score - delta, -kInfinite);
      beta = std::min(score + delta, int(kInfinite));
    }
    int s = 0;
    for (;;) {
      s = AlphaBeta(pos, alpha, beta, depth, 0, false, false);
      if (aborted_) break;
      if (s <= alpha) {
        beta = (alpha + beta) / 2;
        alpha = std::max(s - delta, -kInfinite);
      } else if (s >= beta) {
        beta = std::min(s + delta, int(kInfinite));
      } else {
        break;
      }
      delta += delta;
      if (pv_length_[0] > 0) root_best_ = pv_[0][0];
    }
    if (aborted_) {
      // A root move that beat the previous best in the unfinished iteration is still better.
      if (pv_length_[0] > 0 && depth > 1) result.best = pv_[0][0];
      break;
    }
    score = s;
    result.best = pv_[0][0];
    result.ponder = pv_length_[0] > 1 ? pv_[0][1] : Move();
    result.score = s;
    result.depth = depth;
    root_best_ = result.best;
    if (on_info) {
      SearchInfo info{.depth = depth,
                      .seldepth = seldepth_,
                      .score = s,
                      .nodes = nodes_,
                      .time_ms = ElapsedMs(),
                      .hashfull = tt_.Hashfull(),
                      .pv = {}};
      info.pv.assign(pv_[0], pv_[0] + pv_length_[0]);
      on_info(info);
    }
    if (time_managed && !control.pondering.load()) {
      // The next iteration would take longer than what is left of the soft limit.
      if (ElapsedMs() >= budget_.soft_ms / 2) break;
      if (legal.size == 1 && depth >= 6) break;
    }
    if (!limits.infinite && !control.pondering.load() && std::abs(s) >= kMateBound &&
        depth >= 2 * (kMate - std::abs(s)) + 6)
      break;
  }
  result.nodes = nodes_;
  return result;
}

}  // namespace arbiter::search

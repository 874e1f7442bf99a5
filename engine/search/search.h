// The builtin engine's search: iterative deepening over a principal-variation alpha-beta search
// with a transposition table, quiescence search, null-move pruning, late-move reductions, check
// extensions, and move ordering by hash move, MVV-LVA, killers and history. Single-threaded.
// See https://www.chessprogramming.org/Principal_Variation_Search.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/position.h"
#include "engine/search/eval.h"
#include "engine/search/timeman.h"
#include "engine/search/tt.h"

namespace arbiter::search {

inline constexpr int kInfinite = 32001;
inline constexpr int kMate = 32000;
inline constexpr int kMaxPly = 128;
// Scores beyond this are mates: kMate - plies to mate (positive: the side to move mates).
inline constexpr int kMateBound = kMate - kMaxPly;

// Search knobs exposed as UCI spin options for A/B tests.
struct SearchParams {
  int futility_margin = 90;     // centipawns per ply (reverse futility and futility pruning)
  int null_move_reduction = 3;  // base reduction of the null-move search
  int lmr_percent = 100;        // scales the late-move reduction table
  int aspiration_window = 25;   // initial half-width at depth >= 5
};

// One completed iteration, as reported by `info`.
struct SearchInfo {
  int depth = 0;
  int seldepth = 0;
  int score = 0;  // centipawns, or a mate score (see kMateBound)
  Bound bound = kBoundExact;
  uint64_t nodes = 0;
  int64_t time_ms = 0;
  int hashfull = 0;
  std::vector<Move> pv;
};

struct SearchResult {
  Move best;    // None only when the side to move has no legal move
  Move ponder;  // None when unknown
  int score = 0;
  int depth = 0;
  uint64_t nodes = 0;
};

// Side channels a UCI front end uses while a search runs (all may be changed from other threads).
struct SearchControl {
  std::atomic<bool> stop{false};
  // While set, time limits are ignored (go ponder / go infinite until ponderhit or stop).
  std::atomic<bool> pondering{false};
};

class Searcher {
 public:
  explicit Searcher(size_t hash_mb = 16);

  void SetHashSize(size_t mb) { tt_.Resize(mb); }
  // Forgets everything learned (table, history, killers): `ucinewgame`.
  void NewGame();

  EvalParams& eval_params() { return eval_params_; }
  SearchParams& params() { return params_; }

  // Searches `root`; `history` holds the keys (Key128::lo) of the positions before it in the game,
  // oldest first, for repetition detection. Calls `on_info` after each completed iteration.
  SearchResult Search(const Position& root, const std::vector<uint64_t>& history,
                      const GoLimits& limits, int move_overhead_ms, SearchControl& control,
                      const std::function<void(const SearchInfo&)>& on_info);

 private:
  int AlphaBeta(Position& pos, int alpha, int beta, int depth, int ply, bool cut_node,
                bool null_allowed);
  int Quiescence(Position& pos, int alpha, int beta, int ply);
  void UpdatePv(Move m, int ply);
  bool ShouldAbort();
  bool IsDraw(const Position& pos) const;
  int64_t ElapsedMs() const;
  void UpdateQuietStats(Move best, int ply, int depth, const Move* quiets, int quiet_count,
                        Color us);

  TranspositionTable tt_;
  EvalParams eval_params_;
  SearchParams params_;

  // Per-search state.
  SearchControl* control_ = nullptr;
  std::chrono::steady_clock::time_point start_;
  TimeBudget budget_;
  uint64_t node_limit_ = 0;
  uint64_t nodes_ = 0;
  int seldepth_ = 0;
  bool aborted_ = false;
  int null_floor_ = 0;  // keys_ index of the position after the last null move on the path
  int root_depth_ = 1;
  Move root_best_;
  std::vector<uint64_t> keys_;  // game history then the search path, for repetitions
  Move killers_[kMaxPly + 2][2] = {};
  int history_[2][64][64] = {};
  int static_eval_[kMaxPly + 2] = {};
  Move pv_[kMaxPly + 2][kMaxPly + 2] = {};
  int pv_length_[kMaxPly + 2] = {};
  uint8_t reductions_[64][64] = {};
};

// Static exchange evaluation: true when `m` wins at least `threshold` centipawns after the best
// sequence of recaptures on its destination. See
// https://www.chessprogramming.org/SEE_-_The_Swap_Algorithm.
bool SeeAtLeast(const Position& pos, Move m, int threshold);

// True when neither side can ever mate (K v K, K+minor v K): a draw at once.
bool InsufficientMaterial(const Position& pos);

}  // namespace arbiter::search

#include "coordinator/perft_split.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "base/strings.h"
#include "engine/movegen.h"
#include "engine/notation.h"
#include "engine/perft.h"

namespace arbiter::coordinator {
namespace {

// Exact identity of a position for perft: pieces on squares, side to move, castling rights and
// the en passant square (the move clocks do not change the tree). 34 bytes, no hashing loss.
using PackedPosition = std::array<uint8_t, 34>;

PackedPosition Pack(const Position& pos) {
  PackedPosition p{};
  for (int s = 0; s < 64; s += 2)
    p[s / 2] = uint8_t(pos.PieceOn(Square(s)) | (pos.PieceOn(Square(s + 1)) << 4));
  p[32] = uint8_t(pos.SideToMove() | (pos.CastlingRights() << 1));
  p[33] = uint8_t(pos.EpSquare());
  return p;
}

struct Node {
  Position pos;
  std::vector<std::pair<uint32_t, uint64_t>> weights;
};

void AddWeight(std::vector<std::pair<uint32_t, uint64_t>>& into, uint32_t root, uint64_t mult) {
  for (auto& [r, m] : into) {
    if (r == root) {
      m += mult;
      return;
    }
  }
  into.emplace_back(root, mult);
}

// One ply deeper, merging equal positions.
std::vector<Node> ExpandLevel(const std::vector<Node>& level, uint64_t& with_duplicates) {
  std::vector<Node> next;
  absl::flat_hash_map<PackedPosition, uint32_t> index;
  with_duplicates = 0;
  for (const Node& node : level) {
    MoveList list;
    GenerateLegal(node.pos, list);
    Position pos = node.pos;
    for (Move m : list) {
      UndoInfo undo;
      pos.DoMove(m, undo);
      uint64_t mult = 0;
      for (const auto& w : node.weights) mult += w.second;
      with_duplicates += mult;
      auto [it, inserted] = index.try_emplace(Pack(pos), uint32_t(next.size()));
      if (inserted) next.push_back({pos, {}});
      for (const auto& [root, m2] : node.weights) AddWeight(next[it->second].weights, root, m2);
      pos.UndoMove(m, undo);
    }
  }
  return next;
}

}  // namespace

size_t TargetJobs(const SplitOptions& opts) {
  if (opts.target_jobs > 0) return opts.target_jobs;
  return std::max<size_t>(16, 16 * size_t(std::max(1, opts.workers)));
}

absl::StatusOr<PerftSplit> SplitPerft(const Position& root, const SplitOptions& opts) {
  if (opts.depth < 1 || opts.depth > kMaxPerftDepth)
    return absl::InvalidArgumentError(
        Cat("depth must be in 1..", kMaxPerftDepth, ", got ", opts.depth));
  if (opts.split_depth < 0 || opts.split_depth > opts.depth)
    return absl::InvalidArgumentError(
        Cat("split depth must be in 0..depth (", opts.depth, "), got ", opts.split_depth));
  PerftSplit split;
  split.depth = opts.depth;
  MoveList roots;
  GenerateLegal(root, roots);
  std::vector<Node> level;
  for (int i = 0; i < roots.size; ++i) {
    split.root_moves.push_back(MoveToUci(root, roots.moves[i]));
    Position pos = root;
    UndoInfo undo;
    pos.DoMove(roots.moves[i], undo);
    level.push_back({pos, {{uint32_t(i), 1}}});
  }
  const size_t wanted = 8 * TargetJobs(opts);
  const int max_auto = std::max(1, opts.depth - 1);
  int plies = 1;
  uint64_t with_duplicates = level.size();
  for (;;) {
    bool deeper = opts.split_depth > 0
                      ? plies < opts.split_depth
                      : plies < max_auto && level.size() < wanted && !level.empty();
    if (!deeper) break;
    uint64_t dup = 0;
    std::vector<Node> next = ExpandLevel(level, dup);
    if (opts.split_depth == 0 && next.size() > kMaxSplitPositions) break;
    level = std::move(next);
    with_duplicates = dup;
    ++plies;
  }
  split.split_depth = plies;
  split.split_positions = with_duplicates;
  const int remaining = opts.depth - plies;
  split.unique.reserve(level.size());
  for (Node& n : level) {
    // Leaves two plies down are a fair proxy for the subtree's size.
    double estimate = 1;
    if (remaining >= 2) {
      Position p = n.pos;
      estimate = double(PerftReference(p, 2));
      if (remaining > 2) estimate *= std::pow(std::max(1.0, std::sqrt(estimate)), remaining - 2);
    } else if (remaining == 1) {
      estimate = CountLegal(n.pos);
    }
    split.unique.push_back({n.pos, std::move(n.weights), std::max(1.0, estimate)});
  }
  return split;
}

std::vector<std::vector<uint32_t>> PackJobs(const PerftSplit& split, size_t jobs) {
  const size_t n = split.unique.size();
  jobs = std::max<size_t>(1, std::min(jobs, n));
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = uint32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return split.unique[a].estimate > split.unique[b].estimate;
  });
  using Load = std::pair<double, size_t>;  // (estimate, group)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> heap;
  std::vector<std::vector<uint32_t>> groups(jobs);
  std::vector<double> load(jobs, 0);
  for (size_t g = 0; g < jobs; ++g) heap.push({0.0, g});
  for (uint32_t i : order) {
    auto [l, g] = heap.top();
    heap.pop();
    groups[g].push_back(i);
    load[g] = l + split.unique[i].estimate;
    heap.push({load[g], g});
  }
  std::vector<size_t> by_load(jobs);
  for (size_t g = 0; g < jobs; ++g) by_load[g] = g;
  std::stable_sort(by_load.begin(), by_load.end(),
                   [&](size_t a, size_t b) { return load[a] > load[b]; });
  std::vector<std::vector<uint32_t>> out;
  for (size_t g : by_load)
    if (!groups[g].empty()) out.push_back(std::move(groups[g]));
  return out;
}

}  // namespace arbiter::coordinator

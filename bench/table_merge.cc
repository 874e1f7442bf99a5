// bench/table_merge.sh: the workers' counting CPU for start-position perft(8) when the
// coordinator merges ply 5 (the reference: what the planner does) against the workers' tables
// merging it ("lanes by key", docs/scaling.md): each of `lanes` workers, with a table of its own,
// counts the children of every merged ply-4 position whose key falls in its lane, so every path
// to a ply-5 position reaches the same table. Rounds alternate; one thread; CPU time.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "coordinator/perft_split.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft.h"

namespace arbiter {
namespace {

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

// The merged positions at `ply` of start-position perft(8), in the split's order.
std::vector<Position> MergedAt(int ply) {
  const Position root = Position::StartPosition();
  const coordinator::PerftSplit split =
      *coordinator::SplitPerft(root, {.depth = 8, .split_depth = ply, .estimate_positions = 0});
  std::vector<Position> out;
  for (const coordinator::SplitPosition& sp : split.unique)
    out.push_back(*UnpackPosition(AsBytes(sp.packed), root));
  return out;
}

// The reference: ply 5 merged, in `lanes` contiguous ranges of the order, a table each.
double Merged(const std::vector<Position>& ply5, int lanes, int hash_mb) {
  double cpu = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    std::shared_ptr<PerftTable> table = MakePerftTable(hash_mb);
    const std::vector<Position> range(ply5.begin() + ptrdiff_t(ply5.size() * lane / lanes),
                                      ply5.begin() + ptrdiff_t(ply5.size() * (lane + 1) / lanes));
    const double start = CpuSeconds();
    (void)*PerftBatch(range, {.depth = 3, .table = table.get(), .distinct = true});
    cpu += CpuSeconds() - start;
  }
  return cpu;
}

// Lanes by key: every lane walks all of ply 4 and counts its children in the lane, a table each.
double ByKey(const std::vector<Position>& ply4, int lanes, int hash_mb,
             const std::function<uint64_t(const Position&)>& key) {
  double cpu = 0;
  for (int lane = 0; lane < lanes; ++lane) {
    std::shared_ptr<PerftTable> table = MakePerftTable(hash_mb);
    const double start = CpuSeconds();
    constexpr size_t kBlock = 2000;  // ply-4 positions a job might hold
    for (size_t first = 0; first < ply4.size(); first += kBlock) {
      std::vector<Position> children;
      for (size_t i = first; i < std::min(ply4.size(), first + kBlock); ++i) {
        Position pos = ply4[i];
        MoveList list;
        GenerateLegal(pos, list);
        UndoInfo undo;
        for (Move m : list) {
          pos.DoMove(m, undo);
          if (key(pos) % uint64_t(lanes) == uint64_t(lane)) children.push_back(pos);
          pos.UndoMove(m, undo);
        }
      }
      (void)*PerftBatch(children, {.depth = 3, .table = table.get()});
    }
    cpu += CpuSeconds() - start;
  }
  return cpu;
}

}  // namespace
}  // namespace arbiter

int main(int argc, char** argv) {
  using namespace arbiter;
  const int hash_mb = argc > 1 ? std::atoi(argv[1]) : 128;
  const int lanes = argc > 2 ? std::atoi(argv[2]) : 2;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 2;
  if (hash_mb < 1 || hash_mb > 65536 || lanes < 1 || lanes > 64 || rounds < 1 || rounds > 20) {
    std::fprintf(stderr, "usage: %s [HASH_MB 1..65536] [LANES 1..64] [ROUNDS 1..20]\n", argv[0]);
    return 2;
  }
  const std::vector<Position> ply4 = MergedAt(4), ply5 = MergedAt(5);
  std::printf(
      "perft(8) from the start position, %d lanes, %d MB each: %zu positions at ply 4, "
      "%zu at ply 5 (merged)\n",
      lanes, hash_mb, ply4.size(), ply5.size());
  auto whole = [](const Position& p) { return p.Key().hi; };
  // The streamed split's shard key: a hash of the pieces of the side not to move.
  auto theirs = [](const Position& p) { return coordinator::ShardKey(p); };
  for (int round = 1; round <= rounds; ++round) {
    const double merged = Merged(ply5, lanes, hash_mb);
    const double by_whole = ByKey(ply4, lanes, hash_mb, whole);
    const double by_theirs = ByKey(ply4, lanes, hash_mb, theirs);
    std::printf(
        "round %d: ply 5 merged (reference) %.2f s CPU; lanes by the whole position's "
        "key %.2f s (%.2fx); by the pieces of the side not to move %.2f s (%.2fx)\n",
        round, merged, by_whole, by_whole / merged, by_theirs, by_theirs / merged);
  }
  return 0;
}

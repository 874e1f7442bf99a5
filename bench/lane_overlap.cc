// What two workers with tables of their own count twice in start-position perft(8)
// (bench/lane_overlap.sh, docs/scaling.md, "Lanes"). A model with perfect tables:
// each lane's table keeps every position its subtrees reach, so the lanes count a position twice
// exactly when subtrees of both reach it. For each plan it prints, for every ply from the split to
// ply 6 (the last ply whose counts a worker's table keeps: below it the counter counts in bulk),
// the unique positions each lane reaches, their sum and the union (what one shared table counts
// once): sum / union is the plan's duplication at that ply. The plans:
//   planned:   what the planner gives 2 workers that fill the coordinator's cores (ply 3
//              unmerged, the jobs packed for 2 lanes, each job's lane as PlanPerftRun sets it);
//   annealed:  the same ply-3 positions in 2 lanes by the pieces of the side not to move (white's
//              after 2 moves), the partition chosen by simulated annealing to count the fewest
//              ply-5 positions twice with the lanes' estimates within 50 +- 3 %: the best a
//              partition of those jobs found;
//   merged N:  ply N merged by the coordinator, in the split's order, in two halves (the merged
//              plan's lanes: N = 5 is what the planner does for workers on other hosts).
// Then, with ROUNDS > 0, the real thing: in one thread, CPU seconds, rounds alternating, the
// ply-3 positions all into one table of HASH MB (one worker alone), the planned lanes each into a
// table of their own, ply 5 merged by the coordinator in halves each into a table of its own (the
// workers' counting in the merged plan, without the coordinator's merge and the workers'
// unpacking), and ply 5 merged by each worker for its own lane (WorkerMergedLane, a design not
// built: its merge included; the lanes' leaves must add up to perft(8)).
// Usage: arbiter_lane_overlap [HASH=128] [ROUNDS=1] [MODEL=1]  (MODEL=0: the CPU rounds only)
#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "coordinator/perft_split.h"
#include "engine/movegen.h"
#include "engine/packed_position.h"
#include "engine/perft.h"

namespace {

using arbiter::Move;
using arbiter::MoveList;
using arbiter::Position;
using arbiter::UndoInfo;
using namespace arbiter::coordinator;

constexpr int kDepth = 8;
constexpr uint64_t kLeaves = 84'998'978'956;  // start-position perft(8)
constexpr int kLastTablePly = 6;  // perft(8): ply 6's counts (2 plies left) are the table's last

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Calls f(move) with each legal move of `pos` made on it.
template <class F>
void ForEachChild(Position& pos, F&& f) {
  MoveList moves;
  arbiter::GenerateLegal(pos, moves);
  for (Move m : moves) {
    UndoInfo undo;
    pos.DoMove(m, undo);
    f(m);
    pos.UndoMove(m, undo);
  }
}

using PlySets = std::vector<absl::flat_hash_set<uint64_t>>;  // [ply] -> keys reached

// Adds every position below `pos` (at `ply`) down to kLastTablePly to `sets`; a position already
// there is not walked again (a perfect table).
void Reach(Position& pos, int ply, PlySets& sets) {
  if (!sets[ply].insert(pos.Key().lo).second || ply == kLastTablePly) return;
  ForEachChild(pos, [&](Move) { Reach(pos, ply + 1, sets); });
}

std::vector<Position> Positions(const PerftSplit& split) {
  std::vector<Position> out;
  out.reserve(split.unique.size());
  for (const SplitPosition& sp : split.unique)
    out.push_back(*arbiter::UnpackPosition(arbiter::AsBytes(sp.packed), split.root));
  return out;
}

// Prints the duplication of `lane` (one per position of `split`, 0 or 1) at each ply.
void PrintDuplication(const char* plan, const PerftSplit& split, const std::vector<Position>& pos,
                      const std::vector<int>& lane) {
  std::array<PlySets, 3> sets;  // lane 0, lane 1, both together
  for (PlySets& s : sets) s.resize(kLastTablePly + 1);
  for (size_t i = 0; i < pos.size(); ++i) {
    Position a = pos[i], b = pos[i];
    Reach(a, split.split_depth, sets[size_t(lane[i])]);
    Reach(b, split.split_depth, sets[2]);
  }
  for (int ply = split.split_depth + 1; ply <= kLastTablePly; ++ply) {
    const size_t l0 = sets[0][size_t(ply)].size(), l1 = sets[1][size_t(ply)].size();
    const size_t all = sets[2][size_t(ply)].size();
    std::printf("%-10s ply %d: lanes %zu + %zu = %zu, once %zu: duplication %.3f\n", plan, ply, l0,
                l1, l0 + l1, all, double(l0 + l1) / double(all));
  }
}

// The lane of each position when the planner packs `split` into jobs for 2 lanes.
std::vector<int> PlannedLanes(const PerftSplit& split, const SplitOptions& so) {
  const std::vector<std::vector<uint32_t>> groups =
      PackJobs(split, LaneJobTargets(TotalEstimate(split), TargetJobs(so), 2));
  const std::vector<uint32_t> job_lanes = JobLanes(split, groups, 2);
  std::vector<int> lane(split.unique.size());
  for (size_t g = 0; g < groups.size(); ++g)
    for (uint32_t i : groups[g]) lane[i] = int(job_lanes[g]);
  return lane;
}

// A partition of the positions by ShardKey (the pieces of the side not to move) into 2 lanes
// that counts few ply-(split + 2) positions twice, by simulated annealing from `start`.
std::vector<int> AnnealedLanes(const PerftSplit& split, const std::vector<Position>& pos,
                               const std::vector<int>& start) {
  absl::flat_hash_map<uint64_t, uint32_t> group_of_key;
  std::vector<uint32_t> group(pos.size());
  std::vector<double> weight;  // estimates per group
  for (size_t i = 0; i < pos.size(); ++i) {
    auto [it, fresh] = group_of_key.try_emplace(ShardKey(pos[i]), uint32_t(weight.size()));
    if (fresh) weight.push_back(0);
    group[i] = it->second;
    weight[group[i]] += split.unique[i].estimate;
  }
  // The groups each position two plies down is reached from.
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> reached_from;
  for (size_t i = 0; i < pos.size(); ++i) {
    Position p = pos[i];
    ForEachChild(p, [&](Move) {
      ForEachChild(p, [&](Move) {
        std::vector<uint32_t>& from = reached_from[p.Key().lo];
        if (std::find(from.begin(), from.end(), group[i]) == from.end()) from.push_back(group[i]);
      });
    });
  }
  std::vector<std::vector<uint32_t>> nodes_of(weight.size());
  std::vector<std::array<int, 2>> count;  // per position below: its groups in each lane
  std::vector<int> lane_of(weight.size(), 0);
  {
    std::vector<double> in_lane1(weight.size(), 0);
    for (size_t i = 0; i < pos.size(); ++i)
      if (start[i] == 1) in_lane1[group[i]] += split.unique[i].estimate;
    for (size_t g = 0; g < weight.size(); ++g) lane_of[g] = in_lane1[g] * 2 > weight[g] ? 1 : 0;
  }
  for (const auto& [key, from] : reached_from) {
    std::array<int, 2> c{0, 0};
    for (uint32_t g : from) {
      nodes_of[g].push_back(uint32_t(count.size()));
      ++c[size_t(lane_of[g])];
    }
    count.push_back(c);
  }
  std::array<double, 2> lane_weight{0, 0};
  for (size_t g = 0; g < weight.size(); ++g) lane_weight[size_t(lane_of[g])] += weight[g];
  const double total = lane_weight[0] + lane_weight[1];
  constexpr double kTolerance = 0.03;
  auto in_both = [](const std::array<int, 2>& c) { return c[0] > 0 && c[1] > 0 ? 1 : 0; };
  long twice = 0;
  for (const std::array<int, 2>& c : count) twice += in_both(c);
  long best = twice;
  std::vector<int> best_lanes = lane_of;
  std::mt19937_64 rng(1);
  constexpr int kSteps = 400'000;
  for (int step = 0; step < kSteps; ++step) {
    const double temperature = 2000.0 * std::pow(0.0005, double(step) / kSteps);
    const size_t g = rng() % weight.size();
    const int from = lane_of[g], to = 1 - from;
    if ((lane_weight[size_t(to)] + weight[g]) / total > 0.5 + kTolerance) continue;
    long delta = 0;
    for (uint32_t n : nodes_of[g]) {
      std::array<int, 2> c = count[n];
      --c[size_t(from)];
      ++c[size_t(to)];
      delta += in_both(c) - in_both(count[n]);
    }
    if (delta > 0 &&
        std::uniform_real_distribution<double>(0, 1)(rng) >= std::exp(-double(delta) / temperature))
      continue;
    for (uint32_t n : nodes_of[g]) {
      --count[n][size_t(from)];
      ++count[n][size_t(to)];
    }
    lane_weight[size_t(from)] -= weight[g];
    lane_weight[size_t(to)] += weight[g];
    lane_of[g] = to;
    twice += delta;
    if (twice < best && std::abs(lane_weight[0] / total - 0.5) <= kTolerance) {
      best = twice;
      best_lanes = lane_of;
    }
  }
  std::vector<int> lane(pos.size());
  for (size_t i = 0; i < pos.size(); ++i) lane[i] = best_lanes[group[i]];
  return lane;
}

// Lane 0 for the first half of `n` positions, 1 for the rest.
std::vector<int> Halves(size_t n) {
  std::vector<int> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = i * 2 >= n ? 1 : 0;
  return out;
}

using Lanes = std::array<std::vector<Position>, 2>;
Lanes ByLane(const std::vector<Position>& pos, const std::vector<int>& lane) {
  Lanes out;
  for (size_t i = 0; i < pos.size(); ++i) out[size_t(lane[i])].push_back(pos[i]);
  return out;
}

double CountCpu(const std::vector<Position>& positions, int hash_mb, int plies) {
  std::shared_ptr<arbiter::PerftTable> table = arbiter::MakePerftTable(hash_mb);
  const double start = CpuSeconds();
  (void)*arbiter::PerftBatch(positions, {.depth = plies, .table = table.get(), .distinct = true});
  return CpuSeconds() - start;
}

// A hash of white's pieces (the pieces of the side not to move at ply 5).
uint64_t WhiteKey(const Position& pos) {
  uint64_t h = 0;
  for (int pt = arbiter::kPawn; pt <= arbiter::kKing; ++pt) {
    h ^= pos.Pieces(arbiter::kWhite, arbiter::PieceType(pt)) *
         (0x9E3779B97F4A7C15ull + 2 * uint64_t(pt));
    h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ull;
  }
  return h ^ (h >> 32);
}

struct MergeCpu {
  double generate = 0, sort = 0;
};

// A worker's lane of ply 5 merged by the worker itself (a design, not built): it takes the merged
// ply-4 positions (`level4`, multiplicities `mult4`: 72,078 positions the coordinator merges in
// ~0.05 s), keeps the children whose white pieces hash into its lane (every path to a ply-5
// position reaches the same lane, and so do its ply-6 transpositions), orders them by that hash
// and then by key, and counts each position once, with the multiplicity of all its paths, into a
// table of its own. Returns its CPU seconds (the paths' generation and sort also in `merge`) and
// adds the lane's leaves to `total`.
double WorkerMergedLane(const std::vector<Position>& level4, const std::vector<uint64_t>& mult4,
                        int lane, int hash_mb, MergeCpu& merge, uint64_t& total) {
  const double start = CpuSeconds();
  struct Path {
    uint64_t white, key;
    uint32_t parent;
    uint16_t move;
  };
  std::vector<Path> paths;
  paths.reserve(1'200'000);
  for (size_t i = 0; i < level4.size(); ++i) {
    Position p = level4[i];
    ForEachChild(p, [&](Move m) {
      const uint64_t white = WhiteKey(p);
      if (int(white >> 63) == lane) paths.push_back({white, p.Key().lo, uint32_t(i), m.Raw()});
    });
  }
  const double t_generated = CpuSeconds();
  std::sort(paths.begin(), paths.end(), [](const Path& a, const Path& b) {
    return a.white != b.white ? a.white < b.white : a.key < b.key;
  });
  const double t_sorted = CpuSeconds();
  // Counted in chunks, the positions made as they are needed (a list of them all would fault in
  // ~120 MB of fresh pages: more than the merge).
  std::shared_ptr<arbiter::PerftTable> table = arbiter::MakePerftTable(hash_mb);
  constexpr size_t kChunk = 4096;
  std::vector<Position> kids;
  std::vector<uint64_t> mult;
  kids.reserve(kChunk);
  mult.reserve(kChunk);
  auto flush = [&] {
    const std::vector<uint64_t> counts =
        *arbiter::PerftBatch(kids, {.depth = kDepth - 5, .table = table.get(), .distinct = true});
    for (size_t j = 0; j < counts.size(); ++j) total += counts[j] * mult[j];
    kids.clear();
    mult.clear();
  };
  for (size_t j = 0; j < paths.size(); ++j) {
    if (j > 0 && paths[j].key == paths[j - 1].key && paths[j].white == paths[j - 1].white) {
      mult.back() += mult4[paths[j].parent];
      continue;
    }
    if (kids.size() == kChunk) flush();
    kids.push_back(level4[paths[j].parent]);
    UndoInfo undo;
    kids.back().DoMove(Move(paths[j].move), undo);
    mult.push_back(mult4[paths[j].parent]);
  }
  flush();
  merge.generate += t_generated - start;
  merge.sort += t_sorted - t_generated;
  return CpuSeconds() - start;
}

// The engine's lane of keys `lane` of 2 (engine/perft_lane.h, as a worker counts one: every ply-3
// job, only the ply-5 positions whose key is in the lane) into a table of its own, or with
// `walk_only` a lane of one key, which counts nearly nothing below the lane's ply: the walk to it.
// Returns its CPU seconds and adds its leaves (with the positions' multiplicities) to `total`.
double KeyLane(const std::vector<Position>& ply3, const std::vector<uint64_t>& mult3, int lane,
               int hash_mb, uint64_t& total, bool walk_only = false) {
  std::shared_ptr<arbiter::PerftTable> table = arbiter::MakePerftTable(hash_mb);
  const uint64_t half = arbiter::kShardKeyEnd / 2;
  const double start = CpuSeconds();
  const std::vector<uint64_t> counts =
      *arbiter::PerftBatch(ply3, {.depth = kDepth - 3,
                                  .table = table.get(),
                                  .distinct = true,
                                  .lane_begin = walk_only ? 0 : half * uint64_t(lane),
                                  .lane_end = walk_only ? 1 : half * uint64_t(lane + 1)});
  const double cpu = CpuSeconds() - start;
  for (size_t i = 0; i < counts.size(); ++i) total += counts[i] * mult3[i];
  return cpu;
}

}  // namespace

int main(int argc, char** argv) {
  const int hash_mb = argc > 1 ? std::atoi(argv[1]) : 128;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
  const bool model = argc > 3 ? std::atoi(argv[3]) != 0 : true;
  const Position root = Position::StartPosition();
  // The planner's options for 2 workers filling the coordinator's host (PlanPerftRun).
  const SplitOptions planned{
      .depth = kDepth, .workers = 2, .merge = false, .defer_from_paths = kDeferFromPaths};
  const PerftSplit split = *SplitPerft(root, planned);
  const std::vector<Position> pos = Positions(split);
  const std::vector<int> lanes = PlannedLanes(split, planned);
  if (model) {
    PrintDuplication("planned", split, pos, lanes);
    PrintDuplication("annealed", split, pos, AnnealedLanes(split, pos, lanes));
  }
  std::vector<Position> merged5;  // ply 5 merged, in the split's order
  for (int ply : {4, 5}) {
    const PerftSplit merged = *SplitPerft(root, {.depth = kDepth, .split_depth = ply});
    std::vector<Position> merged_pos = Positions(merged);
    char name[16];
    std::snprintf(name, sizeof name, "merged %d", ply);
    if (model) PrintDuplication(name, merged, merged_pos, Halves(merged_pos.size()));
    if (ply == 5) merged5 = std::move(merged_pos);
  }
  const Lanes planned_lanes = ByLane(pos, lanes);
  const Lanes merged_lanes = ByLane(merged5, Halves(merged5.size()));
  const PerftSplit level4 =
      *SplitPerft(root, {.depth = kDepth, .split_depth = 4, .threads = 1, .estimate_positions = 0});
  const std::vector<Position> pos4 = Positions(level4);
  std::vector<uint64_t> mult4;
  for (const SplitPosition& sp : level4.unique) {
    uint64_t m = 0;
    for (const auto& [root_move, n] : sp.weights) m += n;
    mult4.push_back(m);
  }
  std::vector<uint64_t> mult3;
  for (const SplitPosition& sp : split.unique) {
    uint64_t m = 0;
    for (const auto& [root_move, n] : sp.weights) m += n;
    mult3.push_back(m);
  }
  if (std::getenv("DFS_LANES")) {
    for (int r = 1; r <= rounds; ++r) {
      uint64_t total = 0, walked = 0;
      const double k0 = KeyLane(pos, mult3, 0, hash_mb, total);
      const double k1 = KeyLane(pos, mult3, 1, hash_mb, total);
      if (total != kLeaves) {
        std::fprintf(stderr, "the lanes of keys counted %llu leaves, not %llu\n",
                     (unsigned long long)total, (unsigned long long)kLeaves);
        return 1;
      }
      const double walk = KeyLane(pos, mult3, 0, hash_mb, walked, true);
      const double one = CountCpu(pos, hash_mb, kDepth - split.split_depth);
      const double p0 = CountCpu(planned_lanes[0], hash_mb, kDepth - split.split_depth);
      const double p1 = CountCpu(planned_lanes[1], hash_mb, kDepth - split.split_depth);
      std::printf(
          "round %d, CPU seconds, a %d MB table per lane: ply 3 into one table %.2f; planned "
          "lanes of jobs %.2f + %.2f = %.2f (%.3f); lanes of keys %.2f + %.2f = %.2f (%.3f), the "
          "walk of one lane %.3f\n",
          r, hash_mb, one, p0, p1, p0 + p1, (p0 + p1) / one, k0, k1, k0 + k1, (k0 + k1) / one,
          walk);
    }
    return 0;
  }
  for (int r = 1; r <= rounds; ++r) {
    MergeCpu merge;
    uint64_t total = 0;
    const double w0 = WorkerMergedLane(pos4, mult4, 0, hash_mb, merge, total);
    const double w1 = WorkerMergedLane(pos4, mult4, 1, hash_mb, merge, total);
    if (total != kLeaves) {
      std::fprintf(stderr, "the workers' merge counted %llu leaves, not %llu\n",
                   (unsigned long long)total, (unsigned long long)kLeaves);
      return 1;
    }
    const double one = CountCpu(pos, hash_mb, kDepth - split.split_depth);
    const double p0 = CountCpu(planned_lanes[0], hash_mb, kDepth - split.split_depth);
    const double p1 = CountCpu(planned_lanes[1], hash_mb, kDepth - split.split_depth);
    const double m0 = CountCpu(merged_lanes[0], hash_mb, kDepth - 5);
    const double m1 = CountCpu(merged_lanes[1], hash_mb, kDepth - 5);
    std::printf(
        "round %d, CPU seconds, a %d MB table per lane: ply 3 into one table %.2f; planned lanes "
        "%.2f + %.2f = %.2f (%.3f); ply 5 merged, in halves %.2f + %.2f = %.2f (%.3f); ply 5 "
        "merged by each worker for its lane %.2f + %.2f = %.2f (%.3f; its paths generated %.2f, "
        "sorted %.2f)\n",
        r, hash_mb, one, p0, p1, p0 + p1, (p0 + p1) / one, m0, m1, m0 + m1, (m0 + m1) / one, w0, w1,
        w0 + w1, (w0 + w1) / one, merge.generate, merge.sort);
  }
  return 0;
}

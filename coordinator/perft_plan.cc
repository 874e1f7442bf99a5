// The plan of a perft run: the request checked, the root split (in memory, or streamed in shards
// when its positions or paths would not fit), the positions packed into jobs, and lanes for
// workers with hashes of their own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/perft_run.h"
#include "coordinator/perft_run_internal.h"
#include "coordinator/perft_split.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"
#include "engine/perft_table.h"
#include "engine/position.h"
#include "proto/arbiter/store/v1/store.pb.h"

namespace arbiter::coordinator {

using perft_detail::BuildJobSpec;
using perft_detail::ChunkLevel;
using perft_detail::NewPerftRun;
using perft_detail::Seconds;

namespace {

// Perft runs get lanes only with up to this many workers (hash tables): finding a worker's lane
// in the queue costs up to the queue's length, ~16 jobs a worker.
constexpr size_t kMaxLanes = 64;

// Key lanes (PlanPerftRun) pick positions kLanePlies below the jobs' positions; below those, at
// least two plies with table entries (a position's count is stored with 2 plies or more left).
constexpr int kMinKeyLaneDepth = kLanePlies + 2;
// Each lane walks every job's plies down to the lane's ply (start-position perft(8): its 72,078
// positions at ply 4 and their 1.8 M children keyed, ~0.06 s, about 1 % of the count), so the
// walk grows with the lanes while the count does not: at most this many lanes of keys (~10 %),
// more workers get lanes of jobs.
constexpr size_t kMaxKeyLanes = 8;

// The automatic split and job count consider at most this many workers.
constexpr size_t kMaxPlanWorkers = 1024;

// A FEN's longest form is under 100 bytes; this leaves room for odd spacing.
constexpr size_t kMaxFenBytes = 256;

// Bounds of split_memory_positions: below, shards of a few dozen positions cost a transaction
// and a walk each; above, one shard takes gigabytes (~110 bytes a position, and its job specs).
constexpr uint64_t kMinSplitMemoryPositions = 100;
constexpr uint64_t kMaxSplitMemoryPositions = 4'000'000;

// A ply multiplies the positions by about this much (the mean number of legal moves): an automatic
// streamed split goes at most as many plies below the deepest walk ply as one position's subtree
// is expected to fit the memory bound, and the walk starts at most that far above the split.
constexpr double kBranching = 35;

absl::Status CheckPerftRequest(const v1::SubmitPerftRequest& request) {
  const v1::PerftRequest& p = request.perft();
  if (Strip(p.fen()).empty()) return absl::InvalidArgumentError("perft.fen is required");
  if (p.fen().size() > 64 * kMaxFenBytes || Strip(p.fen()).size() > kMaxFenBytes)
    return absl::InvalidArgumentError(
        Cat("perft.fen must have at most ", kMaxFenBytes, " bytes after trimming, got ",
            p.fen().size() > 64 * kMaxFenBytes ? p.fen().size() : Strip(p.fen()).size()));
  if (p.depth() < 1 || p.depth() > uint32_t(kMaxPerftDepth))
    return absl::InvalidArgumentError(
        Cat("perft.depth must be in 1..", kMaxPerftDepth, ", got ", p.depth()));
  if (request.split_depth() > p.depth())
    return absl::InvalidArgumentError(
        Cat("split_depth ", request.split_depth(), " is deeper than the perft depth ", p.depth()));
  if (p.hash_mb() > (1u << 16))
    return absl::InvalidArgumentError(
        Cat("perft.hash_mb must be at most 65536, got ", p.hash_mb()));
  if (request.target_jobs() > 1'000'000)
    return absl::InvalidArgumentError(
        Cat("target_jobs must be at most 1000000, got ", request.target_jobs()));
  const uint64_t memory = request.split_memory_positions();
  if (memory != 0 && (memory < kMinSplitMemoryPositions || memory > kMaxSplitMemoryPositions))
    return absl::InvalidArgumentError(Cat("split_memory_positions must be 0 (automatic) or in ",
                                          kMinSplitMemoryPositions, "..", kMaxSplitMemoryPositions,
                                          ", got ", memory));
  return absl::OkStatus();
}

// A streamed split's plan: the run's spec with its walk ply and an empty cursor; its jobs come
// from the run's JobSource as the coordinator asks for them.
// `max_chunk_ply`: the walk starts at most this deep (a ply known to fit the memory bound).
// `max_split_depth`: an automatic split goes at most this deep.
// `reached`: the in-memory split that stopped at max_chunk_ply, if any (its positions are the
// walk's when it starts there).
// `lanes`: the run's lane count (0 or 1: none); each batch's jobs are spread over them.
// `exact_split_depth`: 0, or the split depth (an in-memory split deferred its last ply).
absl::StatusOr<RunPlan> PlanStreamedPerftRun(const v1::SubmitPerftRequest& request,
                                             const Position& root, const SplitOptions& so,
                                             size_t lanes, int max_chunk_ply, int max_split_depth,
                                             std::optional<PerftSplit> reached = std::nullopt,
                                             int exact_split_depth = 0) {
  const v1::PerftRequest& p = request.perft();
  const uint64_t bound = request.split_memory_positions() > 0 ? request.split_memory_positions()
                                                              : uint64_t(kMaxSplitPositions);
  int split_depth = exact_split_depth > 0       ? exact_split_depth
                    : request.split_depth() > 0 ? int(request.split_depth())
                                                : std::max(1, int(p.depth()) - kWorkerPlies);
  // Plies below the chunk ply: as many as one position's subtree is expected to fit the bound (for
  // the automatic split depth; the walk starts deeper when it can).
  int below = 0;
  for (double paths = kBranching; below < split_depth - 1 && paths <= double(bound);
       paths *= kBranching)
    ++below;
  // An automatic split goes no deeper than that below the deepest chunk ply.
  if (request.split_depth() == 0 && exact_split_depth == 0)
    split_depth = std::min({split_depth, max_chunk_ply + below, max_split_depth});
  store::v1::StoredPerftRun run;
  *run.mutable_request() = request;
  run.set_split_depth(uint32_t(split_depth));
  run.set_fen(root.Fen());
  run.set_streamed(true);
  run.set_sharded(true);
  run.set_max_chunk_positions(bound);
  run.set_target_jobs(TargetJobs(so));
  const auto start = SteadyClock::now();
  // The walk of each shard starts from the deepest ply above the split whose positions fit the
  // coordinator's memory (at most kMaxSplitPositions): the deeper, the fewer paths it walks. The
  // in-memory split that stopped at max_chunk_ply has them; else plies are tried from one above
  // the split up to `below` plies above (each try gives up within one chunk of its last ply).
  const int deepest = std::max(1, std::min(split_depth - 1, max_chunk_ply));
  const int shallowest = std::max(1, std::min(split_depth - below, deepest));
  std::optional<PerftSplit> level;
  if (reached && reached->split_depth == deepest) {
    run.set_chunk_ply(uint32_t(deepest));
    level = std::move(reached);
  } else {
    reached.reset();
    for (int ply = deepest;; --ply) {
      run.set_chunk_ply(uint32_t(ply));
      absl::StatusOr<PerftSplit> tried = ChunkLevel(root, run);
      if (tried.ok() || ply <= shallowest) {
        ASSIGN_OR_RETURN(level, std::move(tried));
        break;
      }
    }
  }
  run.set_chunk_positions(level->unique.size());
  // Paths that fit in memory are generated once, not walked again for every shard.
  // Paths of more plies keep their end positions: ~40 bytes each, so fewer of them fit.
  const int plies = split_depth - int(run.chunk_ply());
  const uint64_t per_position =
      plies <= BucketedShards::kMaxPlies ? kBucketedPathsPerPosition : kPackedPathsPerPosition;
  run.set_paths_in_memory(EstimatePaths(*level, plies) <= per_position * bound);
  for (const std::string& m : level->root_moves) run.add_root_moves(m);
  RunPlan plan;
  if (lanes >= 2) run.set_lanes(uint32_t(lanes));
  plan.summary =
      Cat("perft depth ", p.depth(), " of '", run.fen(), "' streamed: split at depth ", split_depth,
          " in shards of at most ", bound, " positions walked from the ", level->unique.size(),
          " positions at ply ", run.chunk_ply(), " (", Seconds(start, SteadyClock::now()),
          " s), about ", run.target_jobs(), " jobs", request.verify() ? ", verified" : "");
  plan.handler = NewPerftRun(std::move(run), {}, std::move(*level));
  return plan;
}

}  // namespace

// Workers pooling one hash get a merged split from this depth when its last ply has at least
// this many paths (PlanPerftRun).
constexpr int kPooledMergeDepth = 9;
constexpr uint64_t kPooledMergeFromPaths = 8'000'000;

absl::StatusOr<RunPlan> PlanPerftRun(const v1::SubmitPerftRequest& submitted,
                                     const PlanContext& context) {
  RETURN_IF_ERROR(CheckPerftRequest(submitted));
  // Kept as trimmed (runs are listed with their requests).
  v1::SubmitPerftRequest request = submitted;
  request.mutable_perft()->set_fen(std::string(Strip(submitted.perft().fen())));
  const v1::PerftRequest& p = request.perft();
  absl::StatusOr<Position> root = Position::FromFen(p.fen());
  if (!root.ok())
    return absl::InvalidArgumentError(
        Cat("malformed FEN '", p.fen(), "': ", std::string(root.status().message())));
  // Workers that fill the coordinator's own host share its cores (a single machine running a
  // coordinator and separate workers): the CPU the coordinator's merge of the split costs is then
  // theirs, and they are planned for as one pooled table (below: the merge only where its paths
  // outnumber the tables' entries, perft(9) and deeper from the start position), with lanes.
  // Measured with `DEPTH=8 bench/cluster_scaling.sh` (docs/scaling.md).
  const bool shared_cores = context.workers_fill_host && context.hash_tables > 1;
  SplitOptions so{.depth = int(p.depth()),
                  .split_depth = int(request.split_depth()),
                  // Bounded: job counts follow workers, and registrations are cheap.
                  .workers = int(std::clamp<size_t>(context.connected_workers, 1, kMaxPlanWorkers)),
                  .target_jobs = request.target_jobs(),
                  // Merge unless every worker hashes into one table; with no worker connected
                  // yet nobody knows (merge); a verified run's workers hash on their own.
                  .merge = (context.hash_tables != 1 && !shared_cores) || request.verify(),
                  // A last ply of many paths is merged while the workers count its first jobs.
                  .defer_from_paths = kDeferFromPaths};
  // The run's hash on each worker (workers with a fixed --hash of their own may differ).
  if (so.merge) so.table_entries = PerftTable::Entries(p.hash_mb());
  // Workers with hashes of their own get lanes: contiguous ranges of the jobs, one per worker,
  // so that each worker's hash sees one region of the tree (a streamed run's: of each batch).
  // Up to kMaxLanes workers: each has a large share of the tree then, and the queue scans stay
  // short.
  const size_t lanes =
      (so.merge || shared_cores) && !request.verify() && context.hash_tables <= kMaxLanes
          ? context.hash_tables
          : 0;
  if (request.split_memory_positions() > 0)
    return PlanStreamedPerftRun(request, *root, so, lanes, kMaxPerftDepth, kMaxPerftDepth);
  // Workers pooling one hash merge transpositions in it as one process's threads do, except
  // below a split whose deferred ply has very many paths, more than the pooled table has entries
  // (perft(9) and deeper from the start position: 25 M from ply 5 to ply 6): a table of a few
  // hundred MB saturates on such trees, and the exact merge of that ply on the coordinator left
  // the workers 1.38x less to count (`DEPTH=9 bench/cluster_scaling.sh`, a 256 MB table of 8 M
  // entries: arbiter local 1.33 of in-process, against 0.95 unmerged). A larger table does
  // better without: perft(10) on 2 workers pooling 4 GB (134 M entries), 1,121 s merged at ply 6
  // against 965 s unmerged (`DEPTH=10 HASH=2048 MEMORY=0 bench/perft_streamed.sh`, SPLIT=0 and
  // 3). The table is taken as the run's hash on each connected worker (what `arbiter local`
  // pools when its --hash is the run's). Tried from depth 9 only, and only for tables that the
  // most paths a deferred ply may have could outnumber: the try costs a plan that does not
  // qualify ~1 s.
  const uint64_t pooled_entries =
      PerftTable::Entries(p.hash_mb()) * std::max<size_t>(1, context.connected_workers);
  const uint64_t most_deferred = kBucketedPathsPerPosition * uint64_t(so.max_positions);
  if (!so.merge && so.split_depth == 0 && int(p.depth()) >= kPooledMergeDepth &&
      pooled_entries < most_deferred) {
    SplitOptions merged = so;
    merged.merge = true;
    merged.table_entries = pooled_entries;
    ASSIGN_OR_RETURN(PerftSplit split, SplitPerft(*root, merged));
    const int chunk_ply = split.split_depth, deferred = split.deferred_ply;
    if (deferred > 0 && split.deferred_paths >= std::max(kPooledMergeFromPaths, pooled_entries))
      return PlanStreamedPerftRun(request, *root, merged, lanes, chunk_ply, deferred,
                                  std::move(split), deferred);
  }
  const auto split_start = SteadyClock::now();
  ASSIGN_OR_RETURN(PerftSplit split, SplitPerft(*root, so));
  // The split left its last ply, of many paths, to be merged shard by shard by key while the
  // workers count the first shards' jobs (perft(8) from the start position: its 2.2 M paths
  // from ply 4 to ply 5), rather than all of it before the first job exists.
  if (split.deferred_ply > 0) {
    const int chunk_ply = split.split_depth, deferred = split.deferred_ply;
    return PlanStreamedPerftRun(request, *root, so, lanes, chunk_ply, deferred, std::move(split),
                                deferred);
  }
  // The automatic split stopped three or more plies short of where it merges, at a ply whose
  // next one has too many paths to keep in memory (SplitPerft defers a next ply whose paths fit:
  // perft(10) and deeper from the start position, ply 6): the split is streamed instead, one ply
  // deeper than the in-memory split reached, each shard walking its level again. Not deeper: every
  // position of the split passes through the coordinator (~3 us of its CPU and ~38 bytes of SQLite
  // each), so a split at ply 8 (~1-2 G positions) would keep a thousand workers waiting on the
  // coordinator for hours; their hashes merge the plies below (docs/scaling.md, "At the limits").
  if (so.split_depth == 0 && so.merge && split.split_depth + 2 < so.depth - kWorkerPlies) {
    const int fits = split.split_depth;
    return PlanStreamedPerftRun(request, *root, so, lanes, fits, fits + 1, std::move(split));
  }
  // With lanes, each lane's jobs go from large to small (LaneJobTargets): a worker that ends its
  // lane takes the small last jobs of another's, so the workers finish together.
  const size_t jobs = TargetJobs(so);
  const double total = TotalEstimate(split);
  // Workers sharing the coordinator's cores, each with a table of its own, count lanes of keys
  // (engine/perft_lane.h) rather than lanes of jobs: every lane's jobs hold all the positions, and
  // each counts only the positions two plies further down whose key is in its lane, so that no
  // two tables count one position of those plies (start-position perft(8): plies 5 and 6, where
  // two workers' tables with lanes of jobs counted 10-25 % twice). Only where the lane's ply
  // still has table entries below it (kMinKeyLaneDepth), and only when every connected worker
  // counts lanes (a worker older than them would count its lane's jobs whole, twice over).
  const bool key_lanes = shared_cores && context.workers_count_key_lanes && lanes >= 2 &&
                         lanes <= kMaxKeyLanes && p.hash_mb() > 0 &&
                         so.depth - split.split_depth >= kMinKeyLaneDepth;
  std::vector<std::vector<uint32_t>> groups =
      key_lanes    ? PackJobs(split, JobTargets(total, std::max<size_t>(1, jobs / lanes)))
      : lanes >= 2 ? PackJobs(split, LaneJobTargets(total, jobs, lanes))
                   : PackJobs(split, jobs);
  const auto split_end = SteadyClock::now();

  store::v1::StoredPerftRun run;
  *run.mutable_request() = request;
  run.set_split_depth(split.split_depth);
  run.set_split_positions(split.split_positions);
  run.set_unique_positions(split.unique.size());
  run.set_fen(root->Fen());
  for (const std::string& m : split.root_moves) run.add_root_moves(m);

  // Job specs (packed positions and their multiplicities) on every core.
  const std::string root_fen = root->Fen();
  RunPlan plan;
  plan.job_specs.resize(groups.size());
  std::vector<store::v1::StoredPerftJob> specs(groups.size());
  auto build = [&](size_t g) {
    specs[g] = BuildJobSpec(split, groups[g], request, root_fen);
    plan.job_specs[g] = specs[g].SerializeAsString();
  };
  const size_t threads = split.unique.size() < 20'000
                             ? 1
                             : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::atomic<size_t> next_group{0};
  auto builder = [&] {
    for (size_t g; (g = next_group.fetch_add(1)) < groups.size();) build(g);
  };
  std::vector<std::thread> builders;
  for (size_t t = 1; t < threads; ++t) builders.emplace_back(builder);
  builder();
  for (std::thread& t : builders) t.join();
  if (key_lanes) {
    // Each lane's copy of the jobs, with its range of keys (and its share of their estimates).
    const size_t per_lane = specs.size();
    const uint64_t width = kShardKeyEnd / lanes;
    for (size_t l = 1; l < lanes; ++l)
      for (size_t g = 0; g < per_lane; ++g) specs.push_back(specs[g]);
    plan.job_specs.clear();
    for (size_t j = 0; j < specs.size(); ++j) {
      const size_t l = j / per_lane;
      v1::PerftJob* work = specs[j].mutable_work();
      work->set_lane_begin(l * width);
      work->set_lane_end(l + 1 == lanes ? kShardKeyEnd : (l + 1) * width);
      specs[j].set_estimate(specs[j].estimate() / double(lanes));
      plan.job_specs.push_back(specs[j].SerializeAsString());
      plan.lanes.push_back(uint32_t(l));
    }
    run.set_lanes(uint32_t(lanes));
  } else if (lanes >= 2) {
    run.set_lanes(uint32_t(lanes));
    plan.lanes = JobLanes(split, groups, lanes);
  }
  plan.handler = NewPerftRun(std::move(run), std::move(specs));
  plan.summary =
      Cat("perft depth ", p.depth(), " of '", root_fen, "' split at depth ", split.split_depth,
          " into ", split.unique.size(), " unique positions (", split.split_positions,
          " with transpositions), ", plan.job_specs.size(), " jobs",
          key_lanes ? Cat(" in ", lanes, " lanes of keys") : "",
          request.verify() ? ", verified" : "", "; split ", Seconds(split_start, split_end),
          " s, job specs ", Seconds(split_end, SteadyClock::now()), " s");
  return plan;
}

}  // namespace arbiter::coordinator

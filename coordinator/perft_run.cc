#include "coordinator/perft_run.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "base/uint128.h"
#include "coordinator/metrics.h"
#include "coordinator/perft_split.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"
#include "engine/perft_table.h"
#include "engine/position.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

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

// Most results a verified job may collect without a majority before the run fails.
constexpr int kMaxVerifyResults = 5;

// Bounds of split_memory_positions: below, shards of a few dozen positions cost a transaction
// and a walk each; above, one shard takes gigabytes (~110 bytes a position, and its job specs).
constexpr uint64_t kMinSplitMemoryPositions = 100;
constexpr uint64_t kMaxSplitMemoryPositions = 4'000'000;

// A ply multiplies the positions by about this much (the mean number of legal moves): an automatic
// streamed split goes at most as many plies below the deepest walk ply as one position's subtree
// is expected to fit the memory bound, and the walk starts at most that far above the split.
constexpr double kBranching = 35;

// A shard's unique positions per key predict the next one's: it asks for keys to fill this share
// of the bound, at most kMaxShardGrowth times the last shard's.
constexpr double kChunkMargin = 0.8;
constexpr double kMaxShardGrowth = 16;
// A streamed split's jobs have at most max_chunk_positions / this many positions.
constexpr uint64_t kStreamedJobsPerBound = 16;
// A streamed split whose paths fit in memory comes in about this many shards (each a run of its
// jobs), so that the first jobs exist after a sixteenth of the merging.
constexpr size_t kShardsPerRun = 16;
constexpr size_t kMinStreamedJobPositions = 1024;

double Seconds(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The stored spec of one job: the split's positions `group`, packed, with their weights.
store::v1::StoredPerftJob BuildJobSpec(const PerftSplit& split, const std::vector<uint32_t>& group,
                                       const v1::SubmitPerftRequest& request,
                                       const std::string& root_fen) {
  const v1::PerftRequest& p = request.perft();
  store::v1::StoredPerftJob spec;
  v1::PerftJob* work = spec.mutable_work();
  work->set_chess960(split.root.IsChess960());
  work->set_depth(p.depth() - uint32_t(split.split_depth));
  work->set_hash_mb(p.hash_mb());
  work->set_root_fen(root_fen);
  work->set_independent(request.verify());
  std::string* packed = work->mutable_packed_positions();
  packed->reserve(group.size() * kPackedPositionSize);
  double estimate = 0;
  for (uint32_t i : group) {
    const SplitPosition& sp = split.unique[i];
    packed->append(AsBytes(sp.packed));
    spec.add_weight_counts(uint32_t(sp.weights.size()));
    for (auto [root_index, mult] : sp.weights) {
      spec.add_weight_roots(root_index);
      spec.add_weight_multiplicities(mult);
    }
    estimate += sp.estimate;
  }
  spec.set_estimate(estimate);
  return spec;
}

// The positions at a streamed split's chunk ply (where each shard's walk starts), merged, in the
// split's order (the same at every restart).
absl::StatusOr<PerftSplit> ChunkLevel(const Position& root, const store::v1::StoredPerftRun& run) {
  absl::StatusOr<PerftSplit> level = SplitPerft(root, {.depth = int(run.request().perft().depth()),
                                                       .split_depth = int(run.chunk_ply()),
                                                       .estimate_positions = 0});
  if (!level.ok())
    return absl::InvalidArgumentError(
        Cat("streamed split to ply ", run.split_depth(), ": its shards are walked from ply ",
            run.chunk_ply(), ", which has more than ", kMaxSplitPositions,
            " unique positions; raise split_memory_positions or lower split_depth"));
  return level;
}

// A streamed split stored before shards and still expanding: its chunks' positions would be
// counted again by shards. A split with its paths in memory whose cursor is not a bucket's
// boundary: the shard it is in would be counted again (the store was changed or damaged).
absl::Status ResumableSplit(const store::v1::StoredPerftRun& spec) {
  if (spec.streamed() && !spec.sharded() && spec.chunk_cursor() < spec.chunk_positions())
    return absl::FailedPreconditionError(
        "the run's streamed split was stored by an older arbiter (chunks of contiguous positions) "
        "and cannot be resumed by this one; submit the run again");
  constexpr uint64_t kBucketKeys = uint64_t{1} << BucketedShards::kBucketShift;
  if (spec.streamed() && spec.paths_in_memory() && spec.shard_cursor() < kShardKeyEnd &&
      spec.shard_cursor() % kBucketKeys != 0)
    return absl::DataLossError(Cat("the run's stored split cursor ", spec.shard_cursor(),
                                   " is not the boundary of a bucket of its paths (a multiple of ",
                                   kBucketKeys, "); the store was changed or damaged"));
  return absl::OkStatus();
}

// The jobs of a streamed split, shard by shard from the stored cursor (perft_split.h): each shard
// is the keys from the cursor that the stored width asks for, fewer when they have more than
// max_chunk_positions unique positions, packed into its share of the run's jobs. Only the
// chunk-ply positions and one shard are in memory.
class StreamedPerftSplit final : public JobSource {
 public:
  // `level`: the chunk-ply positions when the planner has them (else computed at the first Next).
  StreamedPerftSplit(store::v1::StoredPerftRun spec, std::optional<PerftSplit> level)
      : spec_(std::move(spec)), level_(std::move(level)) {}
  absl::StatusOr<JobBatch> Next() override;

 private:
  // The next shard from `begin` and the estimates its jobs aim at (their count is that of
  // `targets`), from the paths generated once when they fit in memory, else from a walk.
  SplitShard NextShard(uint64_t begin, const SplitOptions& opts, std::vector<double>& targets);

  store::v1::StoredPerftRun spec_;
  std::optional<PerftSplit> level_;         // the chunk-ply positions, once computed
  std::optional<BucketedShards> bucketed_;  // when the run's paths are kept in memory
};

SplitShard StreamedPerftSplit::NextShard(uint64_t begin, const SplitOptions& opts,
                                         std::vector<double>& targets) {
  const int split_depth = int(spec_.split_depth());
  if (spec_.paths_in_memory() && !bucketed_) bucketed_.emplace(*level_, split_depth, begin, 0);
  const size_t total_jobs = std::max<size_t>(1, spec_.target_jobs());
  if (!bucketed_) {
    // The shard's share of the run's jobs by its share of the keys.
    const uint64_t width = spec_.shard_width() > 0 ? spec_.shard_width() : kShardKeyEnd;
    const uint64_t end = width >= kShardKeyEnd - begin ? kShardKeyEnd : begin + width;
    SplitShard shard = SplitPerftShard(*level_, split_depth, begin, end, opts);
    const double share = double(shard.end - begin) / double(kShardKeyEnd);
    targets = JobTargets(1.0, std::max<size_t>(1, size_t(std::ceil(double(total_jobs) * share))));
    return shard;
  }
  return bucketed_->NextJobs(total_jobs, kShardsPerRun, opts, targets);
}

absl::StatusOr<JobBatch> StreamedPerftSplit::Next() {
  const auto start = SteadyClock::now();
  RETURN_IF_ERROR(ResumableSplit(spec_));
  absl::StatusOr<Position> root = Position::FromFen(spec_.fen());
  if (!root.ok()) return absl::DataLossError(Cat("stored root FEN '", spec_.fen(), "' is invalid"));
  if (!level_) {
    ASSIGN_OR_RETURN(PerftSplit level, ChunkLevel(*root, spec_));
    if (level.unique.size() != spec_.chunk_positions())
      return absl::DataLossError(Cat("ply ", spec_.chunk_ply(), " has ", level.unique.size(),
                                     " positions; the run was planned with ",
                                     spec_.chunk_positions()));
    level_ = std::move(level);
  }
  const uint64_t begin = spec_.shard_cursor();
  if (begin >= kShardKeyEnd) return absl::FailedPreconditionError("the streamed split is complete");
  const uint64_t bound = spec_.max_chunk_positions();
  std::vector<double> targets;
  SplitShard shard = NextShard(begin,
                               {.depth = int(spec_.request().perft().depth()),
                                .max_positions = bound,
                                .estimate_positions = 0},
                               targets);
  const PerftSplit& split = shard.split;
  const auto split_end = SteadyClock::now();
  // The shard's share of the run's jobs, and jobs of at most bound / kStreamedJobsPerBound
  // positions (the coordinator keeps about that many jobs queued ahead, so their specs in memory
  // stay near the bound), or kMinStreamedJobPositions.
  const size_t per_job = std::max<size_t>(kMinStreamedJobPositions, bound / kStreamedJobsPerBound);
  const size_t least = (split.unique.size() + per_job - 1) / per_job;
  const std::vector<std::vector<uint32_t>> groups =
      least > targets.size() ? PackJobs(split, least) : PackJobs(split, targets);
  const std::string root_fen = root->Fen();
  JobBatch batch;
  for (const std::vector<uint32_t>& group : groups)
    batch.job_specs.push_back(
        BuildJobSpec(split, group, spec_.request(), root_fen).SerializeAsString());
  // The next shard's keys: this one's, scaled so that its positions come to the bound less a
  // margin (shards differ), at most kMaxShardGrowth times as many.
  const double scale =
      split.unique.empty()
          ? kMaxShardGrowth
          : std::min(kMaxShardGrowth, kChunkMargin * double(bound) / double(split.unique.size()));
  spec_.set_shard_width(
      uint64_t(std::clamp(double(shard.end - begin) * scale, 1.0, double(kShardKeyEnd))));
  spec_.set_shard_cursor(shard.end);
  spec_.set_chunks(spec_.chunks() + 1);
  spec_.set_split_positions(spec_.split_positions() + split.split_positions);
  spec_.set_unique_positions(spec_.unique_positions() + split.unique.size());
  batch.run_spec = spec_.SerializeAsString();
  batch.summary = Cat(
      "streamed split shard ", spec_.chunks(), bucketed_ ? " (paths in memory)" : " (walked)",
      ": from ", begin, " to ", shard.end, " (",
      absl::StrFormat("%.1f", 100 * double(shard.end) / double(kShardKeyEnd)), " % done) -> ",
      split.unique.size(), " unique positions at ply ", spec_.split_depth(), " (",
      split.split_positions, " with their multiplicities), ", groups.size(), " jobs; split ",
      Seconds(start, split_end), " s, job specs ", Seconds(split_end, SteadyClock::now()), " s");
  return batch;
}

// Positions a perft job counts.
size_t PositionsOf(const v1::PerftJob& work) {
  return work.packed_positions().size() / kPackedPositionSize;
}

class PerftRun final : public RunHandler {
 public:
  // The chunk-ply positions of a streamed split, computed by the planner, for its job source.
  void SetPlannedLevel(PerftSplit level) { planned_level_ = std::move(level); }
  explicit PerftRun(store::v1::StoredPerftRun spec) : spec_(std::move(spec)) {
    divide_.assign(spec_.root_moves_size(), 0);
  }
  void AddSpec(store::v1::StoredPerftJob job) {
    positions_.push_back(uint32_t(PositionsOf(job.work())));
    jobs_.push_back(std::move(job));
  }

  v1::RunKind kind() const override { return v1::RUN_KIND_PERFT; }
  std::string SerializeSpec() const override { return spec_.SerializeAsString(); }
  v1::WorkerRequirements Requirements() const override {
    return spec_.request().scheduling().requirements();
  }
  absl::Status AddJob(const std::string& stored) override {
    store::v1::StoredPerftJob job;
    if (!job.ParseFromString(stored)) return absl::DataLossError("unreadable perft job spec");
    AddSpec(std::move(job));
    return absl::OkStatus();
  }
  int ResultsWanted() const override { return spec_.request().verify() ? 2 : 1; }
  bool SpotChecked() const override { return !spec_.request().verify(); }
  size_t LaneCount() const override { return spec_.lanes(); }
  uint32_t WorkLane(const Job& job) const override {
    const v1::PerftJob& work = jobs_[job.index].work();
    if (work.lane_end() == 0 || spec_.lanes() < 2) return kNoLane;
    return uint32_t(
        std::min<uint64_t>(spec_.lanes() - 1, work.lane_begin() / (kShardKeyEnd / spec_.lanes())));
  }
  double Estimate(const Job& job) const override { return jobs_[job.index].estimate(); }
  void FillWork(const Job& job, v1::Job& out) const override {
    *out.mutable_perft() = jobs_[job.index].work();
  }
  absl::StatusOr<Result> CheckResult(const Job& job, const v1::CompleteJobRequest& request,
                                     const std::optional<absl::Status>&, bool& requeue) override {
    requeue = false;
    const size_t positions = positions_[job.index];
    if (!request.has_perft() || size_t(request.perft().counts_size()) != positions)
      return absl::InvalidArgumentError(
          Cat("job ", job.id, " has ", positions,
              " positions; the result must carry as many perft counts, got ",
              request.has_perft() ? request.perft().counts_size() : 0));
    // No position has more than 218 legal moves: a count above 218^depth is forged or broken.
    const uint64_t bound = PerftCountBound(jobs_[job.index].work().depth());
    for (int i = 0; i < request.perft().counts_size(); ++i)
      if (request.perft().counts(i) > bound)
        return absl::InvalidArgumentError(Cat("job ", job.id, ": count ", request.perft().counts(i),
                                              " of position ", i, " exceeds 218^",
                                              jobs_[job.index].work().depth(), " = ", bound,
                                              ", the most any position has at that depth"));
    Result result;
    result.counts.assign(request.perft().counts().begin(), request.perft().counts().end());
    return result;
  }
  std::string SerializeResult(const Result& result) const override {
    v1::PerftJobResult pr;
    for (uint64_t c : result.counts) pr.add_counts(c);
    return pr.SerializeAsString();
  }
  absl::Status ParseResult(const std::string& blob, Result& out) const override {
    v1::PerftJobResult pr;
    if (!pr.ParseFromString(blob)) return absl::DataLossError("unreadable perft result");
    out.counts.assign(pr.counts().begin(), pr.counts().end());
    return absl::OkStatus();
  }
  IngestOutcome Ingest(Job& job, CoordinatorMetrics* metrics) override;
  void FillStatus(const Run& run, double elapsed, v1::Run& out) const override;
  void SetGauges(uint64_t run_id, double progress, CoordinatorMetrics& metrics) const override {
    metrics.SetRunProgress(run_id, progress, double(total_));
  }
  void ReleaseJobs() override {
    jobs_.clear();
    jobs_.shrink_to_fit();
    positions_.clear();
    positions_.shrink_to_fit();
  }
  bool Expanding() const override {
    if (!spec_.streamed()) return false;
    return spec_.sharded() ? spec_.shard_cursor() < kShardKeyEnd
                           : spec_.chunk_cursor() < spec_.chunk_positions();
  }
  double ExpandedFraction() const override {
    if (!Expanding()) return 1.0;
    return spec_.sharded() ? double(spec_.shard_cursor()) / double(kShardKeyEnd)
                           : double(spec_.chunk_cursor()) / double(spec_.chunk_positions());
  }
  std::unique_ptr<JobSource> MakeJobSource() const override {
    if (!Expanding()) return nullptr;
    std::optional<PerftSplit> level = std::move(planned_level_);
    planned_level_.reset();
    return std::make_unique<StreamedPerftSplit>(spec_, std::move(level));
  }
  absl::Status Resumable() const override { return ResumableSplit(spec_); }
  absl::Status ApplyBatch(const std::string& run_spec) override {
    store::v1::StoredPerftRun next;
    if (!next.ParseFromString(run_spec)) return absl::DataLossError("unreadable perft run spec");
    if (!next.streamed() || next.shard_cursor() <= spec_.shard_cursor())
      return absl::InternalError(Cat("a streamed split's cursor must advance, from ",
                                     spec_.shard_cursor(), ", got ", next.shard_cursor()));
    spec_ = std::move(next);
    return absl::OkStatus();
  }

 private:
  store::v1::StoredPerftRun spec_;
  // A counted job's positions and weights are freed (the store has them): the specs in memory
  // are those of the jobs not done yet (for a streamed split, a bounded number).
  void ReleaseJob(uint32_t index) {
    store::v1::StoredPerftJob& spec = jobs_[index];
    std::string().swap(*spec.mutable_work()->mutable_packed_positions());
    std::string().swap(*spec.mutable_work()->mutable_root_fen());
    google::protobuf::RepeatedField<uint32_t>().Swap(spec.mutable_weight_counts());
    google::protobuf::RepeatedField<uint32_t>().Swap(spec.mutable_weight_roots());
    google::protobuf::RepeatedField<uint64_t>().Swap(spec.mutable_weight_multiplicities());
  }

  mutable std::optional<PerftSplit> planned_level_;  // handed to the first job source
  std::vector<store::v1::StoredPerftJob> jobs_;      // by job index
  std::vector<uint32_t> positions_;                  // positions of each job
  unsigned __int128 total_ = 0;
  std::vector<unsigned __int128> divide_;
  std::vector<v1::Disagreement> disagreements_;
};

IngestOutcome PerftRun::Ingest(Job& job, CoordinatorMetrics* metrics) {
  IngestOutcome outcome;
  // Find the counts most results agree on.
  const auto [best, best_votes] = MajorityOf(job.results);
  const size_t needed = job.want > 1 ? 2 : 1;
  if (best_votes < needed) {
    // Verified job without a majority yet: ask one more worker once all copies are in.
    if (job.results.size() >= size_t(job.want)) {
      if (job.results.size() >= size_t(kMaxVerifyResults)) {
        outcome.job = IngestOutcome::JobEffect::kFailed;
        outcome.finish = v1::RUN_STATE_FAILED;
        outcome.message =
            Cat("job ", job.id, ": ", job.results.size(), " results without two that agree");
        return outcome;
      }
      ++job.want;
      outcome.job = IngestOutcome::JobEffect::kRequeue;
      spdlog::warn("job {}: workers disagree; asking a third worker", job.id);
    }
    return outcome;
  }
  const std::vector<uint64_t> counts = job.results[best].counts;
  for (const Result& r : job.results) {
    if (r.counts == counts) continue;
    v1::Disagreement d;
    d.set_job_id(job.id);
    d.set_worker_id(r.worker_id);
    d.set_worker_name(r.worker_name);
    uint64_t mine = 0, theirs = 0;
    for (uint64_t c : r.counts) mine += c;
    for (uint64_t c : counts) theirs += c;
    d.set_worker_nodes(mine);
    d.set_majority_nodes(theirs);
    disagreements_.push_back(d);
    if (metrics) metrics->disagreements.Increment();
    spdlog::warn("job {}: worker {} ('{}') disagrees with the majority ({} vs {} nodes)", job.id,
                 r.worker_id, r.worker_name, mine, theirs);
  }
  const store::v1::StoredPerftJob& spec = jobs_[job.index];
  unsigned __int128 added = 0;
  auto add = [&](size_t i, uint32_t root, uint64_t multiplicity) {
    unsigned __int128 n = (unsigned __int128)counts[i] * multiplicity;
    added += n;
    if (root < divide_.size()) divide_[root] += n;
  };
  for (int i = 0, next = 0; i < spec.weight_counts_size() && i < int(counts.size()); ++i) {
    for (uint32_t k = 0; k < spec.weight_counts(i) && next < spec.weight_roots_size() &&
                         next < spec.weight_multiplicities_size();
         ++k, ++next)
      add(i, spec.weight_roots(next), spec.weight_multiplicities(next));
  }
  total_ += added;
  if (metrics) {
    metrics->perft_nodes.Increment(double(added));
    metrics->duration.Observe(job.results[best].seconds);
  }
  outcome.job = IngestOutcome::JobEffect::kDone;
  ReleaseJob(job.index);
  for (Result& r : job.results) std::vector<uint64_t>().swap(r.counts);
  return outcome;
}

void PerftRun::FillStatus(const Run&, double elapsed, v1::Run& out) const {
  v1::PerftRunStatus* ps = out.mutable_perft();
  *ps->mutable_request() = spec_.request();
  ps->set_split_depth(spec_.split_depth());
  ps->set_split_positions(spec_.split_positions());
  ps->set_unique_positions(spec_.unique_positions());
  v1::PerftResult* r = ps->mutable_result();
  r->set_fen(spec_.fen());
  r->set_depth(spec_.request().perft().depth());
  r->set_nodes(uint64_t(total_));
  r->set_nodes_high(uint64_t(total_ >> 64));
  r->set_nodes_decimal(Uint128ToString(total_));
  for (int i = 0; i < spec_.root_moves_size(); ++i) {
    v1::PerftDivideEntry* e = r->add_divide();
    e->set_move(spec_.root_moves(i));
    e->set_nodes(uint64_t(divide_[i]));
    e->set_nodes_high(uint64_t(divide_[i] >> 64));
  }
  r->set_seconds(elapsed);
  r->set_nodes_per_second(elapsed > 0 ? double(total_) / elapsed : 0);
  r->set_hash_mb(spec_.request().perft().hash_mb());
  for (const v1::Disagreement& d : disagreements_) *ps->add_disagreements() = d;
  if (spec_.streamed()) {
    ps->set_streamed(true);
    ps->set_chunk_ply(spec_.chunk_ply());
    ps->set_chunk_positions(spec_.chunk_positions());
    // The share done, as a count of the chunk-ply positions: below them until the split is done.
    const uint64_t n = spec_.chunk_positions();
    ps->set_chunk_positions_expanded(
        Expanding() ? std::min<uint64_t>(n - std::min<uint64_t>(n, 1),
                                         uint64_t(ExpandedFraction() * double(n)))
                    : n);
    ps->set_chunks(spec_.chunks());
  }
}

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

}  // namespace

namespace {

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
  auto handler = std::make_unique<PerftRun>(std::move(run));
  handler->SetPlannedLevel(std::move(*level));
  plan.handler = std::move(handler);
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
  auto handler = std::make_unique<PerftRun>(std::move(run));
  for (store::v1::StoredPerftJob& spec : specs) handler->AddSpec(std::move(spec));
  plan.handler = std::move(handler);
  plan.summary =
      Cat("perft depth ", p.depth(), " of '", root_fen, "' split at depth ", split.split_depth,
          " into ", split.unique.size(), " unique positions (", split.split_positions,
          " with transpositions), ", plan.job_specs.size(), " jobs",
          key_lanes ? Cat(" in ", lanes, " lanes of keys") : "",
          request.verify() ? ", verified" : "", "; split ", Seconds(split_start, split_end),
          " s, job specs ", Seconds(split_end, SteadyClock::now()), " s");
  return plan;
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadPerftRun(const std::string& spec) {
  store::v1::StoredPerftRun run;
  if (!run.ParseFromString(spec)) return absl::DataLossError("unreadable perft run spec");
  return std::make_unique<PerftRun>(std::move(run));
}

}  // namespace arbiter::coordinator

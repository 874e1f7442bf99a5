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
#include "coordinator/perft_run_internal.h"
#include "coordinator/perft_split.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_lane.h"
#include "engine/perft_table.h"
#include "engine/position.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace perft_detail {

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

namespace {

// Most results a verified job may collect without a majority before the run fails.
constexpr int kMaxVerifyResults = 5;

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
  bool Recountable() const override { return true; }
  bool ReportsProgress() const override { return true; }
  absl::Status Uncount(const Job& job, const std::string& stored_spec,
                       const std::vector<uint64_t>& counts) override {
    store::v1::StoredPerftJob spec;
    if (!spec.ParseFromString(stored_spec) || job.index >= jobs_.size())
      return absl::DataLossError(Cat("unreadable perft job spec of job ", job.id));
    jobs_[job.index] = std::move(spec);
    Weigh(jobs_[job.index], counts, /*subtract=*/true);
    return absl::OkStatus();
  }
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

  // Adds (or takes back) `counts` of the job `spec`, times their multiplicities, to the total and
  // the divide; returns the nodes.
  unsigned __int128 Weigh(const store::v1::StoredPerftJob& spec,
                          const std::vector<uint64_t>& counts, bool subtract = false) {
    unsigned __int128 added = 0;
    auto add = [&](size_t i, uint32_t root, uint64_t multiplicity) {
      unsigned __int128 n = (unsigned __int128)counts[i] * multiplicity;
      added += n;
      if (root < divide_.size()) divide_[root] = subtract ? divide_[root] - n : divide_[root] + n;
    };
    for (int i = 0, next = 0; i < spec.weight_counts_size() && i < int(counts.size()); ++i) {
      for (uint32_t k = 0; k < spec.weight_counts(i) && next < spec.weight_roots_size() &&
                           next < spec.weight_multiplicities_size();
           ++k, ++next)
        add(i, spec.weight_roots(next), spec.weight_multiplicities(next));
    }
    total_ = subtract ? total_ - added : total_ + added;
    return added;
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
  const unsigned __int128 added = Weigh(jobs_[job.index], counts);
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

}  // namespace

std::unique_ptr<RunHandler> NewPerftRun(store::v1::StoredPerftRun run,
                                        std::vector<store::v1::StoredPerftJob> specs,
                                        std::optional<PerftSplit> planned_level) {
  auto handler = std::make_unique<PerftRun>(std::move(run));
  for (store::v1::StoredPerftJob& spec : specs) handler->AddSpec(std::move(spec));
  if (planned_level) handler->SetPlannedLevel(std::move(*planned_level));
  return handler;
}

}  // namespace perft_detail

absl::StatusOr<std::unique_ptr<RunHandler>> LoadPerftRun(const std::string& spec) {
  store::v1::StoredPerftRun run;
  if (!run.ParseFromString(spec)) return absl::DataLossError("unreadable perft run spec");
  return perft_detail::NewPerftRun(std::move(run), {});
}

}  // namespace arbiter::coordinator

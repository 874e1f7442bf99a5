#include "coordinator/movegen_run.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/engine_reports.h"
#include "coordinator/metrics.h"
#include "engine/perft.h"
#include "engine/position.h"
#include "match/movegen_check.h"
#include "match/uci_engine.h"

namespace arbiter::coordinator {
namespace {

constexpr size_t kMaxFenBytes = 256, kMaxText = 4096, kMaxMoves = 256;
constexpr uint32_t kMaxPositionsPerJob = 1000;
// Parts made by splitting deep positions, in all (each about 100 bytes in memory and store).
constexpr size_t kMaxParts = 100000;
constexpr uint32_t kDefaultTimeoutMs = 60000, kMaxTimeoutMs = 3600000;

class MovegenCheckRun final : public RunHandler {
 public:
  explicit MovegenCheckRun(v1::SubmitMovegenCheckRequest spec) : spec_(std::move(spec)) {}
  void AddSpec(v1::MovegenJob job) {
    CountParts(job);
    jobs_.push_back(std::move(job));
  }

  v1::RunKind kind() const override { return v1::RUN_KIND_MOVEGEN_CHECK; }
  std::string SerializeSpec() const override { return spec_.SerializeAsString(); }
  v1::WorkerRequirements Requirements() const override {
    v1::WorkerRequirements r = spec_.scheduling().requirements();
    r.set_cpu_level(std::max(r.cpu_level(), spec_.engine().cpu_level()));
    return r;
  }
  absl::Status AddJob(const std::string& stored) override {
    v1::MovegenJob job;
    if (!job.ParseFromString(stored)) return absl::DataLossError("unreadable movegen job spec");
    CountParts(job);
    jobs_.push_back(std::move(job));
    return absl::OkStatus();
  }
  double Estimate(const Job& job) const override {
    double e = 0;
    for (const v1::MovegenPosition& p : jobs_[job.index].positions())
      e += p.estimate_nodes() ? double(p.estimate_nodes()) : std::pow(30.0, p.depth());
    return e;
  }
  // Heartbeats carry the positions of the job checked so far.
  bool ReportsProgress() const override { return true; }
  bool ProgressDeclared() const override { return true; }
  void FillWork(const Job& job, v1::Job& out) const override {
    *out.mutable_movegen_check() = jobs_[job.index];
  }
  bool RunsUploadedCode(const Job&) const override {
    return spec_.engine().source_case() == v1::EngineSpec::kSha256 ||
           spec_.engine().source_case() == v1::EngineSpec::kSourceTree;
  }
  bool BuildsSource(const Job&) const override {
    return spec_.engine().source_case() == v1::EngineSpec::kSourceTree;
  }
  std::vector<std::string> EnginePaths(const Job&) const override {
    if (spec_.engine().source_case() == v1::EngineSpec::kPath) return {spec_.engine().path()};
    return {};
  }
  absl::StatusOr<Result> CheckResult(const Job& job, const v1::CompleteJobRequest& request,
                                     const std::optional<absl::Status>&, bool& requeue) override {
    requeue = false;
    const v1::MovegenJob& work = jobs_[job.index];
    if (!request.has_movegen_check())
      return absl::InvalidArgumentError(Cat("job ", job.id, ": not a movegen-check result"));
    const v1::MovegenJobResult& r = request.movegen_check();
    if (r.engine().size() > kMaxText || r.error().size() > kMaxText)
      return absl::InvalidArgumentError(Cat("job ", job.id, ": engine name or error too long"));
    if (r.error().empty() && r.positions_size() != work.positions_size())
      return absl::InvalidArgumentError(Cat("job ", job.id, " has ", work.positions_size(),
                                            " positions; the result carries ", r.positions_size()));
    for (int i = 0; i < r.positions_size(); ++i) {
      const v1::MovegenPositionResult& p = r.positions(i);
      const v1::MovegenPosition& asked = work.positions(i);
      const uint64_t bound = PerftCountBound(asked.depth());
      const int plies = int(asked.depth()) + asked.moves_size();
      if (p.fen() != asked.fen() || p.depth() != asked.depth())
        return absl::InvalidArgumentError(Cat("job ", job.id, ": result ", i,
                                              " is not of position '", asked.fen(), "' at depth ",
                                              asked.depth()));
      if (p.arbiter_nodes() > bound || p.engine_nodes() > bound || p.fault().size() > kMaxText ||
          !(p.arbiter_seconds() >= 0) || !(p.engine_seconds() >= 0) ||
          !std::isfinite(p.arbiter_seconds()) || !std::isfinite(p.engine_seconds()))
        return absl::InvalidArgumentError(
            Cat("job ", job.id, ": result ", i, " has counts, times or a fault out of bounds"));
      const v1::MovegenFailure& f = p.failure();
      if (f.fen().size() > kMaxFenBytes || f.path_size() > plies ||
          f.missing_moves_size() > int(kMaxMoves) || f.extra_moves_size() > int(kMaxMoves) ||
          f.wrong_count_moves_size() > int(kMaxMoves) || f.root_fen().size() > kMaxFenBytes ||
          f.root_source().size() > kMaxText)
        return absl::InvalidArgumentError(
            Cat("job ", job.id, ": failure of result ", i, " out of bounds"));
      if (p.has_failure() && !Position::FromFen(f.fen()).ok())
        return absl::InvalidArgumentError(
            Cat("job ", job.id, ": failure of result ", i, " has a malformed FEN"));
    }
    Result result;
    result.movegen = std::make_shared<v1::MovegenJobResult>(r);
    return result;
  }
  std::string SerializeResult(const Result& result) const override {
    return result.movegen ? result.movegen->SerializeAsString() : std::string();
  }
  absl::Status ParseResult(const std::string& blob, Result& out) const override {
    auto r = std::make_shared<v1::MovegenJobResult>();
    if (!r->ParseFromString(blob)) return absl::DataLossError("unreadable movegen result");
    out.movegen = std::move(r);
    return absl::OkStatus();
  }
  IngestOutcome Ingest(Job& job, CoordinatorMetrics*) override {
    IngestOutcome outcome;
    const Result& r = job.results.back();
    outcome.job = IngestOutcome::JobEffect::kDone;
    if (!r.movegen) return outcome;
    if (!r.movegen->engine().empty()) engine_ = r.movegen->engine();
    if (!r.movegen->error().empty()) {
      outcome.job = IngestOutcome::JobEffect::kFailed;
      outcome.finish = v1::RUN_STATE_FAILED;
      outcome.message = r.movegen->error();
      return outcome;
    }
    const v1::MovegenJob& work = jobs_[job.index];
    for (int i = 0; i < r.movegen->positions_size(); ++i) {
      const v1::MovegenPositionResult& p = r.movegen->positions(i);
      if (work.positions(i).parts() == 0) {
        sum_.Add(p);
      } else if (std::optional<v1::MovegenPositionResult> whole =
                     parts_.Add(work.positions(i), p)) {
        sum_.Add(*whole);
      }
    }
    return outcome;
  }
  void FillStatus(const Run&, double elapsed, v1::Run& out) const override {
    v1::MovegenCheckRunStatus* s = out.mutable_movegen_check();
    *s->mutable_request() = spec_;
    s->mutable_request()->clear_positions();
    v1::MovegenCheckResult* r = s->mutable_result();
    *r = sum_.Result(uint32_t(spec_.positions_size()));
    r->set_engine(engine_.empty() ? spec_.engine().name() : engine_);
    *r->mutable_dialect() = spec_.dialect();
    r->set_wall_seconds(elapsed);
    r->set_positions_split(split_.first);
    r->set_parts(split_.second);
  }
  void ReleaseJobs() override {
    jobs_.clear();
    split_indexes_.clear();
    jobs_.shrink_to_fit();
  }

 private:
  void CountParts(const v1::MovegenJob& job) {
    for (const v1::MovegenPosition& p : job.positions())
      if (p.parts()) {
        split_.second++;
        if (split_indexes_.insert(p.index()).second) split_.first++;
      }
  }

  v1::SubmitMovegenCheckRequest spec_;
  std::vector<v1::MovegenJob> jobs_;
  std::pair<uint32_t, uint32_t> split_;  // positions split, parts
  std::set<uint32_t> split_indexes_;
  match::MovegenAggregate sum_;
  match::MovegenParts parts_;  // split positions whose parts are not all in
  std::string engine_;
};

absl::Status CheckEngine(const v1::EngineSpec& e, const PlanContext& context) {
  if (e.name().empty() || e.name().size() > 64)
    return absl::InvalidArgumentError("engine.name: 1..64 characters");
  if (e.args_size() > 64) return absl::InvalidArgumentError("engine.args: at most 64");
  for (const auto& a : e.args())
    if (a.size() > 1024) return absl::InvalidArgumentError("engine.args: at most 1024 bytes each");
  if (e.options_size() > 64) return absl::InvalidArgumentError("engine.options: at most 64");
  for (const auto& [k, v] : e.options()) {
    if (k.size() > 256 || v.size() > 1024)
      return absl::InvalidArgumentError("engine.options: name at most 256, value 1024 bytes");
    RETURN_IF_ERROR(match::CheckOptionText(Cat("engine '", e.name(), "'"), k, v));
  }
  switch (e.source_case()) {
    case v1::EngineSpec::kBuiltin:
      return absl::OkStatus();
    case v1::EngineSpec::kPath:
      if (e.path().empty() || e.path()[0] != '/' || e.path().size() > 4096)
        return absl::InvalidArgumentError("engine.path: an absolute path of at most 4096 bytes");
      return absl::OkStatus();
    case v1::EngineSpec::kSha256:
      if (context.engine_known && !context.engine_known(e.sha256()))
        return absl::NotFoundError(Cat("engine ", e.sha256(), " was not uploaded"));
      return absl::OkStatus();
    case v1::EngineSpec::kSourceTree:
      return CheckSourceTree(e, context.engine_known, /*unknown_is_invalid=*/false);
    default:
      return absl::InvalidArgumentError("engine: give sha256, path, builtin or source_tree");
  }
}

}  // namespace

absl::StatusOr<RunPlan> PlanMovegenCheckRun(const v1::SubmitMovegenCheckRequest& request,
                                            const PlanContext& context) {
  RETURN_IF_ERROR(CheckEngine(request.engine(), context));
  ASSIGN_OR_RETURN(match::PerftDialect dialect, match::DialectFromProto(request.dialect()));
  if (request.positions_size() < 1 ||
      size_t(request.positions_size()) > match::kMaxMovegenPositions)
    return absl::InvalidArgumentError(
        Cat("positions: 1..", match::kMaxMovegenPositions, ", got ", request.positions_size()));
  if (request.timeout_ms() > kMaxTimeoutMs)
    return absl::InvalidArgumentError(Cat("timeout_ms: at most ", kMaxTimeoutMs));
  if (request.positions_per_job() > kMaxPositionsPerJob)
    return absl::InvalidArgumentError(Cat("positions_per_job: at most ", kMaxPositionsPerJob));
  v1::SubmitMovegenCheckRequest spec = request;
  *spec.mutable_dialect() = match::DialectToProto(dialect);
  if (spec.timeout_ms() == 0) spec.set_timeout_ms(kDefaultTimeoutMs);
  for (int i = 0; i < spec.positions_size(); ++i) {
    v1::MovegenPosition* p = spec.mutable_positions(i);
    if (p->fen().size() > kMaxFenBytes || p->source().size() > 1024)
      return absl::InvalidArgumentError(
          Cat("positions[", i, "]: fen at most ", kMaxFenBytes, " bytes, source at most 1024"));
    if (p->depth() < 1 || p->depth() > uint32_t(match::kMaxMovegenDepth))
      return absl::InvalidArgumentError(
          Cat("positions[", i, "].depth: 1..", match::kMaxMovegenDepth, ", got ", p->depth()));
    absl::StatusOr<Position> pos = Position::FromFen(p->fen());
    if (!pos.ok())
      return absl::InvalidArgumentError(
          Cat("positions[", i, "] '", p->fen(), "': ", std::string(pos.status().message())));
    if (p->moves_size() || p->index() || p->parts())
      return absl::InvalidArgumentError(
          Cat("positions[", i, "]: moves, index and parts are set by the coordinator"));
    if (p->source().empty()) p->set_source(Cat("position ", i));
    p->set_index(uint32_t(i));
  }
  // Jobs: four per connected worker (or positions_per_job; the worker keeps the engine running
  // from one job of the run to the next, so a job costs a round trip, not an engine start), filled
  // largest position (or part) first into the least loaded job (LPT), and leased largest job first,
  // so that no deep position finishes last.
  const size_t n = size_t(spec.positions_size());
  size_t njobs =
      spec.positions_per_job()
          ? (n + spec.positions_per_job() - 1) / spec.positions_per_job()
          : std::max<size_t>(2, 4 * std::clamp<size_t>(context.connected_workers, 1, 1024));
  auto estimate = [](const v1::MovegenPosition& p) {
    return p.estimate_nodes() ? double(p.estimate_nodes()) : std::pow(30.0, p.depth());
  };
  // Deep positions become parts, one per root move, so that one of them (Kiwipete is half of
  // the standard suite's nodes at depth 5) does not decide the run's time: a position is split
  // when it is over a quarter of a job's share.
  double total = 0;
  for (const v1::MovegenPosition& p : spec.positions()) total += estimate(p);
  const double unit = total / double(4 * njobs);
  std::vector<v1::MovegenPosition> units;
  size_t parts_made = 0;
  for (int i = 0; i < spec.positions_size(); ++i) {
    const v1::MovegenPosition& p = spec.positions(i);
    std::vector<v1::MovegenPosition> parts;
    if (estimate(p) > unit && parts_made < kMaxParts)
      parts = match::SplitMovegenPosition(p, uint32_t(i));
    if (parts.size() < 2) {
      units.push_back(p);
      continue;
    }
    parts_made += parts.size();
    for (v1::MovegenPosition& part : parts) units.push_back(std::move(part));
  }
  njobs = std::clamp<size_t>(njobs, (units.size() + kMaxPositionsPerJob - 1) / kMaxPositionsPerJob,
                             units.size());
  std::vector<size_t> order(units.size());
  for (size_t i = 0; i < units.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return estimate(units[a]) > estimate(units[b]); });
  std::vector<std::pair<double, std::vector<size_t>>> bins(njobs);
  for (size_t i : order) {
    auto least = std::min_element(bins.begin(), bins.end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second.size() < b.second.size());
    });
    least->first += estimate(units[i]);
    least->second.push_back(i);
  }
  std::stable_sort(bins.begin(), bins.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<v1::MovegenJob> jobs(njobs);
  for (size_t b = 0; b < njobs; ++b) {
    v1::MovegenJob& j = jobs[b];
    *j.mutable_engine() = spec.engine();
    *j.mutable_dialect() = spec.dialect();
    j.set_timeout_ms(spec.timeout_ms());
    for (size_t i : bins[b].second) *j.add_positions() = units[i];
  }
  RunPlan plan;
  auto handler = std::make_unique<MovegenCheckRun>(spec);
  for (v1::MovegenJob& j : jobs) {
    plan.job_specs.push_back(j.SerializeAsString());
    handler->AddSpec(std::move(j));
  }
  if (spec.engine().source_case() == v1::EngineSpec::kPath)
    plan.engine_paths.push_back(spec.engine().path());
  plan.summary = Cat("movegen-check of '", spec.engine().name(), "' over ", spec.positions_size(),
                     " positions (", parts_made, " parts of split ones) in ", njobs, " jobs");
  plan.handler = std::move(handler);
  return plan;
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadMovegenCheckRun(const std::string& spec) {
  v1::SubmitMovegenCheckRequest r;
  if (!r.ParseFromString(spec)) return absl::DataLossError("unreadable movegen-check run spec");
  return std::make_unique<MovegenCheckRun>(std::move(r));
}

}  // namespace arbiter::coordinator

#include "coordinator/movegen_run.h"

#include <algorithm>
#include <cmath>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/metrics.h"
#include "engine/position.h"
#include "match/movegen_check.h"

namespace arbiter::coordinator {
namespace {

constexpr size_t kMaxFenBytes = 256, kMaxText = 4096, kMaxMoves = 256;
constexpr uint32_t kMaxPositionsPerJob = 1000;
constexpr uint32_t kDefaultTimeoutMs = 60000, kMaxTimeoutMs = 3600000;

// 218^depth saturated: no position has more legal moves.
uint64_t CountBound(uint32_t depth) {
  uint64_t bound = 1;
  for (uint32_t d = 0; d < depth; ++d) {
    if (bound > UINT64_MAX / 218) return UINT64_MAX;
    bound *= 218;
  }
  return bound;
}

class MovegenCheckRun final : public RunHandler {
 public:
  explicit MovegenCheckRun(v1::SubmitMovegenCheckRequest spec) : spec_(std::move(spec)) {}
  void AddSpec(v1::MovegenJob job) { jobs_.push_back(std::move(job)); }

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
    jobs_.push_back(std::move(job));
    return absl::OkStatus();
  }
  double Estimate(const Job& job) const override {
    double e = 0;
    for (const v1::MovegenPosition& p : jobs_[job.index].positions())
      e += p.estimate_nodes() ? double(p.estimate_nodes()) : std::pow(30.0, p.depth());
    return e;
  }
  void FillWork(const Job& job, v1::Job& out) const override {
    *out.mutable_movegen_check() = jobs_[job.index];
  }
  bool RunsUploadedCode(const Job&) const override {
    return spec_.engine().source_case() == v1::EngineSpec::kSha256;
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
      const uint64_t bound = CountBound(asked.depth());
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
      if (f.fen().size() > kMaxFenBytes || f.path_size() > int(asked.depth()) ||
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
    for (const v1::MovegenPositionResult& p : r.movegen->positions()) sum_.Add(p);
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
  }
  void ReleaseJobs() override {
    jobs_.clear();
    jobs_.shrink_to_fit();
  }

 private:
  v1::SubmitMovegenCheckRequest spec_;
  std::vector<v1::MovegenJob> jobs_;
  match::MovegenAggregate sum_;
  std::string engine_;
};

absl::Status CheckEngine(const v1::EngineSpec& e, const PlanContext& context) {
  if (e.name().empty() || e.name().size() > 64)
    return absl::InvalidArgumentError("engine.name: 1..64 characters");
  if (e.args_size() > 64) return absl::InvalidArgumentError("engine.args: at most 64");
  for (const auto& a : e.args())
    if (a.size() > 1024) return absl::InvalidArgumentError("engine.args: at most 1024 bytes each");
  if (e.options_size() > 64) return absl::InvalidArgumentError("engine.options: at most 64");
  for (const auto& [k, v] : e.options())
    if (k.size() > 256 || v.size() > 1024)
      return absl::InvalidArgumentError("engine.options: name at most 256, value 1024 bytes");
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
    default:
      return absl::InvalidArgumentError("engine: give sha256, path or builtin");
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
    if (p->source().empty()) p->set_source(Cat("position ", i));
  }
  // Jobs: each starts the engine once, so few of them: two per connected worker (or
  // positions_per_job), filled largest position first into the least loaded job (LPT), and
  // leased largest job first, so that one deep position does not finish last.
  const size_t n = size_t(spec.positions_size());
  size_t njobs =
      spec.positions_per_job()
          ? (n + spec.positions_per_job() - 1) / spec.positions_per_job()
          : std::max<size_t>(2, 2 * std::clamp<size_t>(context.connected_workers, 1, 1024));
  njobs = std::clamp<size_t>(njobs, (n + kMaxPositionsPerJob - 1) / kMaxPositionsPerJob, n);
  auto estimate = [](const v1::MovegenPosition& p) {
    return p.estimate_nodes() ? double(p.estimate_nodes()) : std::pow(30.0, p.depth());
  };
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return estimate(spec.positions(int(a))) > estimate(spec.positions(int(b)));
  });
  std::vector<std::pair<double, std::vector<size_t>>> bins(njobs);
  for (size_t i : order) {
    auto least = std::min_element(bins.begin(), bins.end(), [](const auto& a, const auto& b) {
      return a.first < b.first || (a.first == b.first && a.second.size() < b.second.size());
    });
    least->first += estimate(spec.positions(int(i)));
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
    for (size_t i : bins[b].second) *j.add_positions() = spec.positions(int(i));
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
                     " positions in ", njobs, " jobs");
  plan.handler = std::move(handler);
  return plan;
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadMovegenCheckRun(const std::string& spec) {
  v1::SubmitMovegenCheckRequest r;
  if (!r.ParseFromString(spec)) return absl::DataLossError("unreadable movegen-check run spec");
  return std::make_unique<MovegenCheckRun>(std::move(r));
}

}  // namespace arbiter::coordinator

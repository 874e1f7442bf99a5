#include "coordinator/games_run.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/match_run.h"
#include "coordinator/metrics.h"
#include "coordinator/worker_registry.h"
#include "match/wire.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "stats/elo.h"

namespace arbiter::coordinator {
namespace {

// A copy of a match or tournament request with the batch size filled in when it is left open.
template <typename Request>
Request WithPairsPerJob(Request request, const PlanContext& context) {
  if (request.pairs_per_job() == 0)
    request.set_pairs_per_job(
        DefaultPairsPerJob(context.max_worker_threads, request.concurrency()));
  return request;
}

// The book without its text: its name, bytes and the positions in it (the lines PlanMatchJobs
// deals out: non-empty, not comments).
v1::BookSummary BookSummaryOf(const std::string& openings, const std::string& name) {
  v1::BookSummary out;
  out.set_name(name);
  out.set_size_bytes(openings.size());
  uint64_t positions = 0;
  for (std::string_view line : Split(openings, '\n')) {
    line = Strip(line);
    if (!line.empty() && line[0] != '#') ++positions;
  }
  out.set_positions(positions);
  return out;
}

// What match and tournament runs share: jobs of game pairs, replayed before they count.
class GamesRun : public RunHandler {
 public:
  void AddSpec(v1::MatchJob work) {
    store::v1::StoredMatchJob job;
    *job.mutable_work() = std::move(work);
    pairing_of_job_.push_back(job.work().pairing());
    jobs_.push_back(std::move(job));
  }
  absl::Status AddJob(const std::string& stored) override {
    store::v1::StoredMatchJob job;
    if (!job.ParseFromString(stored)) return absl::DataLossError("unreadable match job spec");
    pairing_of_job_.push_back(job.work().pairing());
    jobs_.push_back(std::move(job));
    return absl::OkStatus();
  }
  double Estimate(const Job& job) const override { return PairsOf(job); }
  bool RunsUploadedCode(const Job& job) const override {
    if (job.index >= jobs_.size()) return false;
    for (const v1::EngineSpec& e : jobs_[job.index].work().engines())
      if (e.source_case() == v1::EngineSpec::kSha256 ||
          e.source_case() == v1::EngineSpec::kSourceTree)
        return true;
    return false;
  }
  bool BuildsSource(const Job& job) const override {
    if (job.index >= jobs_.size()) return false;
    for (const v1::EngineSpec& e : jobs_[job.index].work().engines())
      if (e.source_case() == v1::EngineSpec::kSourceTree) return true;
    return false;
  }
  std::vector<std::string> EnginePaths(const Job& job) const override {
    std::vector<std::string> paths;
    if (job.index >= jobs_.size()) return paths;
    for (const v1::EngineSpec& e : jobs_[job.index].work().engines())
      if (e.source_case() == v1::EngineSpec::kPath) paths.push_back(e.path());
    return paths;
  }
  uint32_t ThreadsPerGame(const Job& job) const override {
    if (job.index >= jobs_.size()) return 1;
    return coordinator::ThreadsPerGame(jobs_[job.index].work().engines());
  }
  void FillWork(const Job& job, v1::Job& out) const override {
    *out.mutable_match() = jobs_[job.index].work();
  }
  std::function<absl::Status()> SlowCheck(const Job& job,
                                          const v1::CompleteJobRequest& request) const override {
    if (!job.open() || job.index >= jobs_.size() || !request.has_match()) return {};
    return [work = jobs_[job.index].work(), result = request.match()] {
      return CheckMatchResult(work, result);
    };
  }
  absl::StatusOr<Result> CheckResult(const Job& job, const v1::CompleteJobRequest& request,
                                     const std::optional<absl::Status>& slow,
                                     bool& requeue) override {
    requeue = false;
    if (job.index >= jobs_.size())
      return absl::FailedPreconditionError(Cat("job ", job.id, " takes no more results"));
    if (!request.has_match())
      return absl::InvalidArgumentError(
          Cat("job ", job.id, " is a match job; the result must carry its games"));
    absl::Status check = CheckWorkerEngineReport(jobs_[job.index].work(), request.match());
    if (check.ok())
      check = slow ? *slow : CheckMatchResult(jobs_[job.index].work(), request.match());
    if (!check.ok()) {
      // Refused and not counted: the job goes back to the queue for another worker.
      ++rejected_;
      requeue = true;
      return absl::InvalidArgumentError(Cat("job ", job.id, ": ", std::string(check.message())));
    }
    Result result;
    result.match = std::make_shared<v1::MatchJobResult>(request.match());
    return result;
  }
  std::string SerializeResult(const Result& result) const override {
    return result.match ? result.match->SerializeAsString() : std::string();
  }
  absl::Status ParseResult(const std::string& blob, Result& out) const override {
    auto m = std::make_shared<v1::MatchJobResult>();
    if (!m->ParseFromString(blob)) return absl::DataLossError("unreadable match result");
    out.match = std::move(m);
    return absl::OkStatus();
  }
  IngestOutcome Ingest(Job& job, CoordinatorMetrics* metrics) override {
    const Result& r = job.results.back();
    Count(job, *r.match);
    counted_.emplace_back(job.id, r.lease_id);
    if (metrics) {
      for (const v1::ReportedGame& g : r.match->games())
        metrics->Game(match::GameResultText(g.result()),
                      match::GameEndFromProto(g.end()).value_or(match::GameEnd::kAborted));
      metrics->duration.Observe(r.seconds);
    }
    IngestOutcome outcome;
    outcome.job = IngestOutcome::JobEffect::kDone;
    Decide(outcome);
    return outcome;
  }
  void ReleaseJobs() override {
    jobs_.clear();
    jobs_.shrink_to_fit();
  }

  PgnSource Pgn() const {
    PgnSource source;
    source.counted = counted_;
    source.pairing_of_job = pairing_of_job_;
    FillPgnEngines(source);
    return source;
  }

 protected:
  virtual void Count(const Job& job, const v1::MatchJobResult& result) = 0;
  virtual void Decide(IngestOutcome&) const {}
  virtual void FillPgnEngines(PgnSource& source) const = 0;
  double PairsOf(const Job& job) const {
    return job.index < jobs_.size() ? jobs_[job.index].work().pairs() : 0;
  }

  std::vector<store::v1::StoredMatchJob> jobs_;  // by job index; cleared when the run ends
  std::vector<uint32_t> pairing_of_job_;         // by job index; kept (PGN export)
  std::vector<std::pair<uint64_t, uint64_t>> counted_;
  uint64_t rejected_ = 0;
};

class MatchRun final : public GamesRun {
 public:
  explicit MatchRun(store::v1::StoredMatchRun spec)
      : spec_(std::move(spec)),
        sprt_(SprtOf(spec_.request())),
        book_(BookSummaryOf(spec_.request().openings(), spec_.request().openings_name())) {}
  v1::RunKind kind() const override { return v1::RUN_KIND_MATCH; }
  std::string SerializeSpec() const override { return spec_.SerializeAsString(); }
  v1::WorkerRequirements Requirements() const override {
    return WithEngineLevels(spec_.request().scheduling().requirements(), spec_.request().engines());
  }
  void FillStatus(const Run&, double elapsed, v1::Run& out) const override {
    v1::MatchRunStatus* ms = out.mutable_match();
    *ms->mutable_request() = spec_.request();
    *ms->mutable_result() = MatchResultOf(spec_.request(), summary_, sprt_, elapsed);
    ms->set_rejected_results(rejected_);
    *ms->mutable_history() = {history_.begin(), history_.end()};
    *ms->mutable_book() = book_;
    // An ETA only from the measured pace: none before the first game is counted.
    if (summary_.games == 0) {
      out.set_eta_seconds(0);
      return;
    }
    // An SPRT usually stops long before its planned games: progress is also how far the LLR
    // has gone towards the bound it is heading for.
    const v1::SprtReport& sprt = ms->result().stats().sprt();
    const double progress = out.progress();
    if (sprt_ && progress < 1 && sprt.upper_bound() > 0 && sprt.lower_bound() < 0) {
      const double llr =
          sprt.llr() >= 0 ? sprt.llr() / sprt.upper_bound() : sprt.llr() / sprt.lower_bound();
      const double p = std::min(0.99, llr);
      if (p > progress) {
        out.set_progress(p);
        out.set_eta_seconds(elapsed > 0 ? elapsed * (1 - p) / p : 0);
      }
    }
  }
  void SetGauges(uint64_t run_id, double progress, CoordinatorMetrics& metrics) const override {
    metrics.SetRunProgress(run_id, progress, 0);
    const double llr = sprt_ ? stats::EvaluateSprt(summary_.pentanomial, *sprt_).llr : 0;
    const double elo = summary_.pairs > 0 ? stats::EstimateElo(summary_.pentanomial).elo : 0;
    metrics.SetRunMatch(run_id, llr, elo);
  }

 private:
  void Count(const Job&, const v1::MatchJobResult& result) override {
    CountGames(result, summary_);
    NoteProgress();
  }
  // A point of the score's history; past kMaxHistory points every other one is dropped (the
  // newest kept), so the points stay evenly spread over the run however long it gets.
  void NoteProgress() {
    constexpr size_t kMaxHistory = 256;
    v1::MatchProgressPoint& p = history_.emplace_back();
    p.set_games(summary_.games);
    const stats::EloEstimate e = stats::EstimateElo(summary_.pentanomial);
    p.set_elo(std::isfinite(e.elo) ? e.elo : 0);
    p.set_elo_error95(std::isfinite(e.elo_error95) ? e.elo_error95 : 0);
    if (sprt_) p.set_llr(stats::EvaluateSprt(summary_.pentanomial, *sprt_).llr);
    if (history_.size() > kMaxHistory) {
      std::vector<v1::MatchProgressPoint> thinned;
      for (size_t i = 0; i < history_.size(); i += 2) thinned.push_back(history_[i]);
      if (thinned.back().games() != history_.back().games()) thinned.push_back(history_.back());
      history_ = std::move(thinned);
    }
  }
  void Decide(IngestOutcome& outcome) const override {
    if (!sprt_) return;
    const stats::SprtResult r = stats::EvaluateSprt(summary_.pentanomial, *sprt_);
    if (r.decision == stats::SprtDecision::kContinue) return;
    outcome.finish = v1::RUN_STATE_SUCCEEDED;
    outcome.message =
        Cat("SPRT accepted ", r.decision == stats::SprtDecision::kAcceptH1 ? "H1" : "H0", " after ",
            summary_.games, " games (LLR ", r.llr, ")");
  }
  void FillPgnEngines(PgnSource& source) const override {
    source.engines.emplace_back(spec_.request().engines(0).name(),
                                spec_.request().engines(1).name());
  }
  std::vector<RunPairing> Pairings() const override {
    return {
        {spec_.request().engines(0).name(), spec_.request().engines(1).name(), summary_.trinomial}};
  }

  store::v1::StoredMatchRun spec_;
  std::optional<stats::SprtParams> sprt_;
  match::MatchSummary summary_;
  std::vector<v1::MatchProgressPoint> history_;
  v1::BookSummary book_;
};

class TournamentRun final : public GamesRun {
 public:
  explicit TournamentRun(store::v1::StoredTournamentRun spec)
      : spec_(std::move(spec)),
        tallies_(TournamentPairings(spec_.request()).size()),
        book_(BookSummaryOf(spec_.request().openings(), spec_.request().openings_name())) {}
  v1::RunKind kind() const override { return v1::RUN_KIND_TOURNAMENT; }
  std::string SerializeSpec() const override { return spec_.SerializeAsString(); }
  v1::WorkerRequirements Requirements() const override {
    return WithEngineLevels(spec_.request().scheduling().requirements(), spec_.request().engines());
  }
  void FillStatus(const Run&, double elapsed, v1::Run& out) const override {
    v1::TournamentRunStatus* ts = out.mutable_tournament();
    *ts->mutable_request() = spec_.request();
    FillTournamentStatus(spec_.request(), tallies_, elapsed, *ts);
    *ts->mutable_book() = book_;
  }

 private:
  void Count(const Job& job, const v1::MatchJobResult& result) override {
    const uint32_t pairing = pairing_of_job_[job.index];
    if (pairing < tallies_.size()) CountGames(result, tallies_[pairing]);
  }
  void FillPgnEngines(PgnSource& source) const override {
    const v1::SubmitTournamentRequest& req = spec_.request();
    for (auto [i, j] : TournamentPairings(req))
      source.engines.emplace_back(req.engines(i).name(), req.engines(j).name());
    source.games_per_pairing = req.games_per_pairing();
  }
  std::vector<RunPairing> Pairings() const override {
    const v1::SubmitTournamentRequest& req = spec_.request();
    std::vector<RunPairing> out;
    const std::vector<std::pair<int, int>> pairings = TournamentPairings(req);
    for (size_t p = 0; p < pairings.size() && p < tallies_.size(); ++p)
      out.push_back({req.engines(pairings[p].first).name(), req.engines(pairings[p].second).name(),
                     tallies_[p].trinomial});
    return out;
  }

  store::v1::StoredTournamentRun spec_;
  std::vector<match::MatchSummary> tallies_;  // in TournamentPairings order
  v1::BookSummary book_;
};

RunPlan PlanOf(std::unique_ptr<GamesRun> handler, std::vector<v1::MatchJob> jobs) {
  RunPlan plan;
  for (v1::MatchJob& work : jobs) {
    for (const v1::EngineSpec& e : work.engines())
      if (e.source_case() == v1::EngineSpec::kPath &&
          std::find(plan.engine_paths.begin(), plan.engine_paths.end(), e.path()) ==
              plan.engine_paths.end())
        plan.engine_paths.push_back(e.path());
    store::v1::StoredMatchJob stored;
    *stored.mutable_work() = work;
    plan.job_specs.push_back(stored.SerializeAsString());
    handler->AddSpec(std::move(work));
  }
  plan.handler = std::move(handler);
  return plan;
}

}  // namespace

absl::StatusOr<RunPlan> PlanMatchRun(const v1::SubmitMatchRequest& submitted,
                                     const PlanContext& context) {
  const v1::SubmitMatchRequest request = WithPairsPerJob(submitted, context);
  RETURN_IF_ERROR(ValidateMatchRequest(request, context.engine_known));
  RETURN_IF_ERROR(
      CheckThreadsFit(request.engines(), request.concurrency(), context.max_worker_threads));
  store::v1::StoredMatchRun spec;
  *spec.mutable_request() = request;
  RunPlan plan = PlanOf(std::make_unique<MatchRun>(std::move(spec)), PlanMatchJobs(request));
  plan.summary =
      Cat("match ", request.engines(0).name(), " vs ", request.engines(1).name(), " at ",
          request.tc(), ", ", plan.job_specs.size(), " jobs", request.has_sprt() ? " (SPRT)" : "");
  return plan;
}

absl::StatusOr<RunPlan> PlanTournamentRun(const v1::SubmitTournamentRequest& submitted,
                                          const PlanContext& context) {
  const v1::SubmitTournamentRequest request = WithPairsPerJob(submitted, context);
  RETURN_IF_ERROR(ValidateTournamentRequest(request, context.engine_known));
  RETURN_IF_ERROR(
      CheckThreadsFit(request.engines(), request.concurrency(), context.max_worker_threads));
  store::v1::StoredTournamentRun spec;
  *spec.mutable_request() = request;
  const size_t pairings = TournamentPairings(request).size();
  RunPlan plan =
      PlanOf(std::make_unique<TournamentRun>(std::move(spec)), PlanTournamentJobs(request));
  plan.summary =
      Cat(request.gauntlet() ? "gauntlet" : "round robin", " of ", request.engines_size(),
          " engines at ", request.tc(), ", ", pairings, " pairings of ",
          request.games_per_pairing(), " games, ", plan.job_specs.size(), " jobs");
  return plan;
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadMatchRun(const std::string& spec) {
  store::v1::StoredMatchRun run;
  if (!run.ParseFromString(spec)) return absl::DataLossError("unreadable match run spec");
  return std::make_unique<MatchRun>(std::move(run));
}

absl::StatusOr<std::unique_ptr<RunHandler>> LoadTournamentRun(const std::string& spec) {
  store::v1::StoredTournamentRun run;
  if (!run.ParseFromString(spec)) return absl::DataLossError("unreadable tournament run spec");
  return std::make_unique<TournamentRun>(std::move(run));
}

std::optional<PgnSource> PgnSourceOf(const RunHandler& handler) {
  if (const auto* games = dynamic_cast<const GamesRun*>(&handler)) return games->Pgn();
  return std::nullopt;
}

}  // namespace arbiter::coordinator

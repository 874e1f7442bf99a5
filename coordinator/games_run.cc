#include "coordinator/games_run.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/status_macros.h"
#include "base/strings.h"
#include "base/time.h"
#include "coordinator/match_run.h"
#include "coordinator/metrics.h"
#include "coordinator/residuals.h"
#include "coordinator/worker_registry.h"
#include "match/wire.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "stats/elo.h"

namespace arbiter::coordinator {
namespace {

// A copy of a match or tournament request with the batch size filled in when it is left open.
template <typename Request>
Request WithPairsPerJob(Request request, const PlanContext& context) {
  v1::GamesSettings& settings = *request.mutable_settings();
  if (settings.pairs_per_job() == 0)
    settings.set_pairs_per_job(
        DefaultPairsPerJob(context.max_worker_threads, settings.concurrency()));
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

// What match and tournament runs share: jobs of game pairs, replayed before they count. A job is
// its slice (16 bytes); its MatchJob is made from the run's request when a worker needs it.
class GamesRun : public RunHandler {
 public:
  void AddSlice(const MatchSlice& slice) {
    slices_.push_back(slice);
    if (kind() == v1::RUN_KIND_TOURNAMENT) pairing_of_job_.push_back(slice.pairing);
  }
  absl::Status AddJob(const std::string& stored) override {
    store::v1::StoredMatchJob job;
    if (!job.ParseFromString(stored)) return absl::DataLossError("unreadable match job spec");
    // A job stored whole (engines, rules, openings) was planned from the same request and book
    // as its slice would be: the slice is all that is kept.
    const v1::MatchJob& w = job.work();
    if (w.pairs() == 0) return absl::DataLossError("match job spec without pairs");
    AddSlice({w.first_pair(), w.pairs(), w.pairing()});
    return absl::OkStatus();
  }
  double Estimate(const Job& job) const override {
    return job.index < slices_.size() ? slices_[job.index].pairs : 0;
  }
  // Heartbeats carry the moves played in the job's games.
  bool ReportsProgress() const override { return true; }
  bool ProgressDeclared() const override { return true; }
  bool RunsUploadedCode(const Job& job) const override {
    if (job.index >= slices_.size()) return false;
    for (const v1::EngineSpec* e : EnginesOf(slices_[job.index].pairing))
      if (e->source_case() == v1::EngineSpec::kSha256 ||
          e->source_case() == v1::EngineSpec::kSourceTree)
        return true;
    return false;
  }
  bool BuildsSource(const Job& job) const override {
    if (job.index >= slices_.size()) return false;
    for (const v1::EngineSpec* e : EnginesOf(slices_[job.index].pairing))
      if (e->source_case() == v1::EngineSpec::kSourceTree) return true;
    return false;
  }
  std::vector<std::string> EnginePaths(const Job& job) const override {
    std::vector<std::string> paths;
    if (job.index >= slices_.size()) return paths;
    for (const v1::EngineSpec* e : EnginesOf(slices_[job.index].pairing))
      if (e->source_case() == v1::EngineSpec::kPath) paths.push_back(e->path());
    return paths;
  }
  uint32_t ThreadsPerGame(const Job& job) const override {
    if (job.index >= slices_.size()) return 1;
    google::protobuf::RepeatedPtrField<v1::EngineSpec> engines;
    for (const v1::EngineSpec* e : EnginesOf(slices_[job.index].pairing)) *engines.Add() = *e;
    return coordinator::ThreadsPerGame(engines);
  }
  void FillWork(const Job& job, v1::Job& out) const override {
    if (job.index < slices_.size()) *out.mutable_match() = WorkOf(slices_[job.index]);
  }
  std::function<absl::Status()> SlowCheck(const Job& job,
                                          const v1::CompleteJobRequest& request) const override {
    if (!job.open() || job.index >= slices_.size() || !request.has_match()) return {};
    return [work = WorkOf(slices_[job.index]), result = request.match()] {
      return CheckMatchResult(work, result);
    };
  }
  absl::StatusOr<Result> CheckResult(const Job& job, const v1::CompleteJobRequest& request,
                                     const std::optional<absl::Status>& slow,
                                     bool& requeue) override {
    requeue = false;
    if (job.index >= slices_.size())
      return absl::FailedPreconditionError(Cat("job ", job.id, " takes no more results"));
    if (!request.has_match())
      return absl::InvalidArgumentError(
          Cat("job ", job.id, " is a match job; the result must carry its games"));
    const v1::MatchJob work = WorkOf(slices_[job.index]);
    absl::Status check = CheckWorkerEngineReport(work, request.match());
    if (check.ok()) check = slow ? *slow : CheckMatchResult(work, request.match());
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
    counted_by_.push_back(r.worker_id);
    if (metrics) {
      for (const v1::ReportedGame& g : r.match->games())
        metrics->Game(match::GameResultText(g.result()),
                      match::GameEndFromProto(g.end()).value_or(match::GameEnd::kAborted));
      metrics->duration.Observe(r.seconds);
    }
    IngestOutcome outcome;
    outcome.job = IngestOutcome::JobEffect::kDone;
    Judge(outcome);
    Decide(outcome);
    return outcome;
  }
  // A finished run keeps its counts, names and PGN bookkeeping, not its jobs or its book.
  void ReleaseJobs() override {
    slices_ = {};
    book_lines_ = {};
    openings_ = {};
  }

  PgnSource Pgn() const {
    PgnSource source;
    for (size_t i = 0; i < counted_.size(); ++i)
      if (i >= counted_by_.size() || Counts(counted_by_[i])) source.counted.push_back(counted_[i]);
    source.pairing_of_job = pairing_of_job_;
    FillPgnEngines(source);
    return source;
  }

 protected:
  // The book's text moves out of the request into openings_ (so that statuses copy the request
  // without it) and back into the stored spec.
  template <typename Request>
  void TakeBook(Request& request) {
    openings_ = std::move(*request.mutable_settings()->mutable_openings());
    request.mutable_settings()->clear_openings();
    book_lines_ = BookLines(openings_);
  }
  template <typename Spec>
  std::string SpecWithBook(const Spec& spec) const {
    Spec copy = spec;
    copy.mutable_request()->mutable_settings()->set_openings(openings_);
    return copy.SerializeAsString();
  }
  virtual void Count(const Job& job, const v1::MatchJobResult& result) = 0;
  virtual void Decide(IngestOutcome&) const {}
  // The residual check after a result is counted (match runs).
  virtual void Judge(IngestOutcome&) {}
  // Whether `worker_id`'s games are in the run's count (not set aside by the residual check).
  virtual bool Counts(const std::string& /*worker_id*/) const { return true; }
  virtual void FillPgnEngines(PgnSource& source) const = 0;
  // The engines of `pairing` (a match has one pairing).
  virtual std::vector<const v1::EngineSpec*> EnginesOf(uint32_t pairing) const = 0;
  virtual v1::MatchJob WorkOf(const MatchSlice& slice) const = 0;

  std::string openings_;                      // the book's text; cleared when the run ends
  std::vector<std::string_view> book_lines_;  // its openings, views into openings_
  std::vector<MatchSlice> slices_;            // by job index; cleared when the run ends
  std::vector<uint32_t> pairing_of_job_;      // by job index (tournaments); kept (PGN export)
  std::vector<std::pair<uint64_t, uint64_t>> counted_;
  std::vector<std::string> counted_by_;  // the worker of each counted_ entry
  uint64_t rejected_ = 0;
};

class MatchRun final : public GamesRun {
 public:
  explicit MatchRun(store::v1::StoredMatchRun spec)
      : spec_(std::move(spec)),
        sprt_(SprtOf(spec_.request())),
        book_(BookSummaryOf(spec_.request().settings().openings(),
                            spec_.request().settings().openings_name())) {
    TakeBook(*spec_.mutable_request());
  }
  v1::RunKind kind() const override { return v1::RUN_KIND_MATCH; }
  std::string SerializeSpec() const override { return SpecWithBook(spec_); }
  v1::WorkerRequirements Requirements() const override {
    const v1::GamesSettings& settings = spec_.request().settings();
    return WithEngineLevels(settings.scheduling().requirements(), settings.engines());
  }
  void FillStatus(const Run&, double elapsed, v1::Run& out) const override {
    v1::MatchRunStatus* ms = out.mutable_match();
    *ms->mutable_request() = spec_.request();
    *ms->mutable_result() = MatchResultOf(spec_.request().settings(), summary_, sprt_, elapsed);
    ms->set_rejected_results(rejected_);
    for (v1::WorkerResidual& v : tallies_.Verdicts()) *ms->add_residuals() = std::move(v);
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
  void Count(const Job& job, const v1::MatchJobResult& result) override {
    // Every worker's games are kept apart too: the residual check compares each with the rest.
    if (tallies_.Count(job.results.back())) CountGames(result, summary_);
    NoteProgress();
  }
  void Judge(IngestOutcome& outcome) override {
    outcome.set_aside = tallies_.Judge(UnixNow());
    if (!outcome.set_aside) return;
    summary_ = tallies_.Counted();
    NoteProgress();
  }
  bool Counts(const std::string& worker_id) const override { return tallies_.Counts(worker_id); }
  std::vector<v1::WorkerResidual> Residuals() const override { return tallies_.Verdicts(); }
  void RestoreResidual(const v1::WorkerResidual& verdict) override { tallies_.Restore(verdict); }
  absl::StatusOr<v1::WorkerResidual> DecideResidual(const std::string& worker_id,
                                                    v1::ResidualState decision,
                                                    IngestOutcome& outcome) override {
    absl::StatusOr<v1::WorkerResidual> verdict = tallies_.Decide(worker_id, decision);
    if (!verdict.ok()) return verdict;
    summary_ = tallies_.Counted();
    NoteProgress();
    Decide(outcome);
    return verdict;
  }
  bool AwaitsDecision() const override { return tallies_.Pending(); }
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
    source.engines.emplace_back(spec_.request().settings().engines(0).name(),
                                spec_.request().settings().engines(1).name());
  }
  std::vector<RunPairing> Pairings() const override {
    return {{spec_.request().settings().engines(0).name(),
             spec_.request().settings().engines(1).name(), summary_.trinomial}};
  }

  std::vector<const v1::EngineSpec*> EnginesOf(uint32_t) const override {
    return {&spec_.request().settings().engines(0), &spec_.request().settings().engines(1)};
  }
  v1::MatchJob WorkOf(const MatchSlice& slice) const override {
    return MatchJobOf(spec_.request().settings(), book_lines_, slice, 0);
  }

  store::v1::StoredMatchRun spec_;
  std::optional<stats::SprtParams> sprt_;
  match::MatchSummary summary_;  // the counted games (WorkerTallies::Counted)
  WorkerTallies tallies_;
  std::vector<v1::MatchProgressPoint> history_;
  v1::BookSummary book_;
};

class TournamentRun final : public GamesRun {
 public:
  explicit TournamentRun(store::v1::StoredTournamentRun spec)
      : spec_(std::move(spec)),
        pairings_(TournamentPairings(spec_.request())),
        tallies_(pairings_.size()),
        book_(BookSummaryOf(spec_.request().settings().openings(),
                            spec_.request().settings().openings_name())) {
    TakeBook(*spec_.mutable_request());
  }
  v1::RunKind kind() const override { return v1::RUN_KIND_TOURNAMENT; }
  std::string SerializeSpec() const override { return SpecWithBook(spec_); }
  v1::WorkerRequirements Requirements() const override {
    const v1::GamesSettings& settings = spec_.request().settings();
    return WithEngineLevels(settings.scheduling().requirements(), settings.engines());
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
      source.engines.emplace_back(req.settings().engines(i).name(),
                                  req.settings().engines(j).name());
    source.games_per_pairing = req.games_per_pairing();
  }
  std::vector<RunPairing> Pairings() const override {
    const v1::SubmitTournamentRequest& req = spec_.request();
    std::vector<RunPairing> out;
    const std::vector<std::pair<int, int>> pairings = TournamentPairings(req);
    for (size_t p = 0; p < pairings.size() && p < tallies_.size(); ++p)
      out.push_back({req.settings().engines(pairings[p].first).name(),
                     req.settings().engines(pairings[p].second).name(), tallies_[p].trinomial});
    return out;
  }

  std::vector<const v1::EngineSpec*> EnginesOf(uint32_t pairing) const override {
    if (pairing >= pairings_.size()) return {};
    return {&spec_.request().settings().engines(pairings_[pairing].first),
            &spec_.request().settings().engines(pairings_[pairing].second)};
  }
  v1::MatchJob WorkOf(const MatchSlice& slice) const override {
    const auto [first, second] = pairings_[std::min<size_t>(slice.pairing, pairings_.size() - 1)];
    return MatchJobOf(
        PairingRequest(spec_.request(), first, second, /*with_openings=*/false).settings(),
        book_lines_, slice, uint64_t(slice.pairing) * spec_.request().games_per_pairing());
  }

  store::v1::StoredTournamentRun spec_;
  std::vector<std::pair<int, int>> pairings_;
  std::vector<match::MatchSummary> tallies_;  // in TournamentPairings order
  v1::BookSummary book_;
};

RunPlan PlanOf(std::unique_ptr<GamesRun> handler, const std::vector<MatchSlice>& slices,
               const google::protobuf::RepeatedPtrField<v1::EngineSpec>& engines) {
  RunPlan plan;
  for (const v1::EngineSpec& e : engines)
    if (e.source_case() == v1::EngineSpec::kPath &&
        std::find(plan.engine_paths.begin(), plan.engine_paths.end(), e.path()) ==
            plan.engine_paths.end())
      plan.engine_paths.push_back(e.path());
  plan.job_specs.reserve(slices.size());
  store::v1::StoredMatchJob stored;
  v1::MatchJob& work = *stored.mutable_work();
  for (const MatchSlice& slice : slices) {
    work.set_first_pair(slice.first_pair);
    work.set_pairs(slice.pairs);
    work.set_pairing(slice.pairing);
    plan.job_specs.push_back(stored.SerializeAsString());
    handler->AddSlice(slice);
  }
  plan.handler = std::move(handler);
  return plan;
}

}  // namespace

absl::StatusOr<RunPlan> PlanMatchRun(const v1::SubmitMatchRequest& submitted,
                                     const PlanContext& context) {
  const v1::SubmitMatchRequest request = WithPairsPerJob(submitted, context);
  RETURN_IF_ERROR(ValidateMatchRequest(request, context.engine_known));
  const v1::GamesSettings& settings = request.settings();
  RETURN_IF_ERROR(
      CheckThreadsFit(settings.engines(), settings.concurrency(), context.max_worker_threads));
  store::v1::StoredMatchRun spec;
  *spec.mutable_request() = request;
  RunPlan plan = PlanOf(std::make_unique<MatchRun>(std::move(spec)), PlanMatchSlices(request),
                        settings.engines());
  plan.summary =
      Cat("match ", settings.engines(0).name(), " vs ", settings.engines(1).name(), " at ",
          settings.tc(), ", ", plan.job_specs.size(), " jobs", request.has_sprt() ? " (SPRT)" : "");
  return plan;
}

absl::StatusOr<RunPlan> PlanTournamentRun(const v1::SubmitTournamentRequest& submitted,
                                          const PlanContext& context) {
  const v1::SubmitTournamentRequest request = WithPairsPerJob(submitted, context);
  RETURN_IF_ERROR(ValidateTournamentRequest(request, context.engine_known));
  const v1::GamesSettings& settings = request.settings();
  RETURN_IF_ERROR(
      CheckThreadsFit(settings.engines(), settings.concurrency(), context.max_worker_threads));
  store::v1::StoredTournamentRun spec;
  *spec.mutable_request() = request;
  const size_t pairings = TournamentPairings(request).size();
  RunPlan plan = PlanOf(std::make_unique<TournamentRun>(std::move(spec)),
                        PlanTournamentSlices(request), settings.engines());
  plan.summary =
      Cat(request.gauntlet() ? "gauntlet" : "round robin", " of ", settings.engines_size(),
          " engines at ", settings.tc(), ", ", pairings, " pairings of ",
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

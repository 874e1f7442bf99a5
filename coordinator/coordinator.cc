#include "coordinator/coordinator.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <optional>

#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/perft_split.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/position.h"
#include "net/metrics.h"
#include "net/sha256.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

// Perft runs get lanes only with up to this many workers (hash tables): finding a worker's lane
// in the queue costs up to the queue's length, ~16 jobs a worker.
constexpr size_t kMaxLanes = 64;

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool Terminal(v1::RunState s) {
  return s == v1::RUN_STATE_SUCCEEDED || s == v1::RUN_STATE_FAILED || s == v1::RUN_STATE_CANCELLED;
}

std::string RunStateName(v1::RunState s) {
  std::string name = v1::RunState_Name(s);
  return name.size() > 10 ? name.substr(10) : name;  // drop "RUN_STATE_"
}

// Runs whose jobs are batches of game pairs.
bool PlaysGames(v1::RunKind kind) {
  return kind == v1::RUN_KIND_MATCH || kind == v1::RUN_KIND_TOURNAMENT;
}

// Most results a verified job may collect without a majority before the run fails.
constexpr int kMaxVerifyResults = 5;

absl::Status ShuttingDownError() { return absl::UnavailableError("coordinator is shutting down"); }
absl::Status NoRunError(uint64_t run_id) {
  return absl::NotFoundError(Cat("run ", run_id, " does not exist"));
}
absl::Status NoJobError(uint64_t job_id) {
  return absl::NotFoundError(Cat("job ", job_id, " does not exist"));
}
absl::Status UnknownWorkerError(const std::string& worker_id) {
  return absl::NotFoundError(Cat("unknown worker id '", worker_id, "': register first"));
}

// `seconds` as a steady-clock duration.
Coordinator::Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Coordinator::Clock::duration>(
      std::chrono::duration<double>(seconds));
}

v1::Engine EngineOf(const StoredEngine& e) {
  v1::Engine out;
  out.set_sha256(e.sha256);
  out.set_name(e.name);
  out.set_size_bytes(e.size_bytes);
  out.set_uploaded_unix(e.uploaded_unix);
  return out;
}

// A copy of a match or tournament request with the batch size filled in when it is left open.
template <typename Request>
Request WithPairsPerJob(Request request, Coordinator& coordinator) {
  if (request.pairs_per_job() == 0)
    request.set_pairs_per_job(
        DefaultPairsPerJob(coordinator.MaxWorkerThreads(), request.concurrency()));
  return request;
}

}  // namespace

std::string Uint128ToString(unsigned __int128 v) {
  if (v == 0) return "0";
  std::string s;
  while (v > 0) {
    s.push_back(char('0' + int(v % 10)));
    v /= 10;
  }
  return std::string(s.rbegin(), s.rend());
}

// Prometheus series of the coordinator. Base units, _total counters, a run label only while
// the run is active.
class CoordinatorMetrics {
 public:
  explicit CoordinatorMetrics(prometheus::Registry& r)
      : runs_(net::RegisterGauges(r, "arbiter_runs", "Runs known to the coordinator, by state.")),
        jobs_(net::RegisterGauges(r, "arbiter_jobs", "Jobs of unfinished runs, by state.")),
        completions_(net::RegisterCounters(
            r, "arbiter_job_completions_total",
            "CompleteJob calls by outcome (committed, duplicate, rejected).")),
        duration_(net::RegisterHistogram(r, "arbiter_job_duration_seconds",
                                         "Wall time workers report for the jobs they complete.",
                                         net::kJobSecondsBuckets)),
        commit_(net::RegisterHistogram(r, "arbiter_commit_duration_seconds",
                                       "Time to commit a group of results to the store.",
                                       {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5})),
        expiries_(net::RegisterCounters(
                      r, "arbiter_lease_expiries_total",
                      "Leases that expired without a result; their jobs were re-queued.")
                      .Add({})),
        workers_(
            net::RegisterGauges(r, "arbiter_workers_connected",
                                "Workers seen within the last lease period or waiting for a job.")
                .Add({})),
        perft_nodes_(
            net::RegisterCounters(r, "arbiter_perft_nodes_total",
                                  "Perft leaf nodes counted by accepted jobs (weighted by "
                                  "multiplicity, so a finished run adds exactly its total).")
                .Add({})),
        progress_family_(
            net::RegisterGauges(r, "arbiter_run_progress_ratio",
                                "Fraction of the estimated work done, per active run.")),
        run_nodes_family_(net::RegisterGauges(r, "arbiter_run_perft_nodes",
                                              "Perft leaf nodes counted so far, per active run.")),
        games_(net::RegisterCounters(r, "arbiter_games_total",
                                     "Counted match games by result (1-0, 0-1, 1/2-1/2).")),
        endings_(net::RegisterCounters(
            r, "arbiter_game_endings_total",
            "Counted match games by how they ended (normal, time forfeit, illegal "
            "move, disconnect = engine crash, stall, adjudication).")),
        llr_family_(net::RegisterGauges(r, "arbiter_run_sprt_llr",
                                        "SPRT log-likelihood ratio, per active match run.")),
        elo_family_(net::RegisterGauges(r, "arbiter_run_elo",
                                        "Elo estimate of the first engine, per active match run.")),
        disagreements_(
            net::RegisterCounters(r, "arbiter_verify_disagreements_total",
                                  "Verified job results that differed from the majority.")
                .Add({})) {}

  void Completion(const char* outcome) { completions_.Add({{"outcome", outcome}}).Increment(); }
  void SetRuns(const std::map<std::string, double>& by_state) {
    for (const char* s : {"QUEUED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED"}) {
      auto it = by_state.find(s);
      runs_.Add({{"state", s}}).Set(it == by_state.end() ? 0 : it->second);
    }
  }
  void SetJobs(double queued, double leased, double done, double cancelled) {
    jobs_.Add({{"state", "queued"}}).Set(queued);
    jobs_.Add({{"state", "leased"}}).Set(leased);
    jobs_.Add({{"state", "done"}}).Set(done);
    jobs_.Add({{"state", "cancelled"}}).Set(cancelled);
  }
  void SetRunProgress(uint64_t run, double progress, double nodes) {
    progress_family_.Add({{"run", std::to_string(run)}}).Set(progress);
    run_nodes_family_.Add({{"run", std::to_string(run)}}).Set(nodes);
  }
  void SetRunMatch(uint64_t run, double llr, double elo) {
    llr_family_.Add({{"run", std::to_string(run)}}).Set(llr);
    elo_family_.Add({{"run", std::to_string(run)}}).Set(elo);
  }
  void RemoveRun(uint64_t run) {
    for (auto* family : {&llr_family_, &elo_family_, &progress_family_, &run_nodes_family_}) {
      prometheus::Gauge& g = family->Add({{"run", std::to_string(run)}});
      family->Remove(&g);
    }
  }

  prometheus::Family<prometheus::Gauge>& runs_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Family<prometheus::Counter>& completions_;
  prometheus::Histogram& duration_;
  prometheus::Histogram& commit_;
  prometheus::Counter& expiries_;
  prometheus::Gauge& workers_;
  prometheus::Counter& perft_nodes_;
  prometheus::Family<prometheus::Gauge>& progress_family_;
  prometheus::Family<prometheus::Gauge>& run_nodes_family_;
  prometheus::Family<prometheus::Counter>& games_;
  prometheus::Family<prometheus::Counter>& endings_;
  prometheus::Family<prometheus::Gauge>& llr_family_;
  prometheus::Family<prometheus::Gauge>& elo_family_;
  prometheus::Counter& disagreements_;
};

Coordinator::Coordinator(const CoordinatorOptions& options, std::unique_ptr<Store> store,
                         prometheus::Registry* registry)
    : options_(options), store_(std::move(store)), rng_(std::random_device{}()) {
  if (registry) metrics_ = std::make_unique<CoordinatorMetrics>(*registry);
}

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Open(const CoordinatorOptions& options,
                                                               prometheus::Registry* registry) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("--data DIR is required");
  if (options.lease_seconds <= 0)
    return absl::InvalidArgumentError(
        Cat("lease seconds must be > 0, got ", options.lease_seconds));
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(options.data_dir));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(options.data_dir) / "engines" / "tmp",
                                      ec);
  if (ec) return absl::InternalError(Cat("cannot create engine store: ", ec.message()));
  std::unique_ptr<Coordinator> c(new Coordinator(options, std::move(store), registry));
  RETURN_IF_ERROR(c->Load());
  c->reaper_ = std::thread([p = c.get()] { p->ReaperLoop(); });
  c->committer_ = std::thread([p = c.get()] { p->CommitLoop(); });
  return c;
}

Coordinator::~Coordinator() {
  Shutdown();
  {
    absl::MutexLock lock(&mu_);
    stop_threads_ = true;
  }
  if (reaper_.joinable()) reaper_.join();
  if (committer_.joinable()) committer_.join();
}

absl::Status Coordinator::Load() {
  ASSIGN_OR_RETURN(std::vector<StoredEngine> engines, store_->LoadEngines());
  ASSIGN_OR_RETURN(std::vector<StoredRun> runs, store_->LoadRuns());
  std::vector<RunUpdate> updates;
  absl::MutexLock lock(&mu_);
  for (const StoredEngine& e : engines) engines_[e.sha256] = EngineOf(e);
  int resumed = 0;
  for (StoredRun& stored : runs) {
    auto run = std::make_unique<Run>();
    run->id = stored.id;
    run->kind = v1::RunKind(stored.kind);
    run->state = v1::RunState(stored.state);
    run->message = stored.message;
    run->created_unix = stored.created_unix;
    run->started_unix = stored.started_unix;
    run->started_persisted = stored.started_unix > 0;
    run->finished_unix = stored.finished_unix;
    const bool spec_ok = run->kind == v1::RUN_KIND_MATCH ? run->match.ParseFromString(stored.spec)
                         : run->kind == v1::RUN_KIND_TOURNAMENT
                             ? run->tournament.ParseFromString(stored.spec)
                             : run->perft.ParseFromString(stored.spec);
    if (!spec_ok) return absl::DataLossError(Cat("run ", stored.id, ": unreadable spec"));
    if (run->kind == v1::RUN_KIND_MATCH) run->sprt = SprtOf(run->match.request());
    if (run->kind == v1::RUN_KIND_TOURNAMENT)
      run->pairing_tallies.resize(TournamentPairings(run->tournament.request()).size());
    if (Terminal(run->state)) {
      run->final = std::make_unique<v1::Run>();
      if (stored.result.empty() || !run->final->ParseFromString(stored.result)) {
        run->final->set_id(run->id);
        run->final->set_kind(run->kind);
        run->final->set_state(run->state);
        run->final->set_message(run->message);
        run->final->set_created_unix(run->created_unix);
        run->final->set_finished_unix(run->finished_unix);
      }
      runs_[run->id] = std::move(run);
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<StoredJob> stored_jobs, store_->LoadJobs(stored.id));
    ASSIGN_OR_RETURN(std::vector<StoredResult> results, store_->LoadResults(stored.id));
    std::vector<std::unique_ptr<Job>> jobs;
    absl::flat_hash_map<uint64_t, Job*> by_id;
    for (StoredJob& sj : stored_jobs) {
      auto job = std::make_unique<Job>();
      job->id = sj.id;
      job->run_id = sj.run_id;
      const bool job_ok = PlaysGames(run->kind) ? job->match_spec.ParseFromString(sj.spec)
                                                : job->spec.ParseFromString(sj.spec);
      if (!job_ok) return absl::DataLossError(Cat("job ", sj.id, ": unreadable spec"));
      job->pairing = job->match_spec.work().pairing();
      job->want = run->kind == v1::RUN_KIND_PERFT && run->perft.request().verify() ? 2 : 1;
      by_id[job->id] = job.get();
      jobs.push_back(std::move(job));
    }
    const uint64_t run_id = run->id;
    AddRunLocked(std::move(run), std::move(jobs));
    for (StoredResult& sr : results) {
      auto it = by_id.find(sr.job_id);
      if (it == by_id.end()) continue;
      Result r{sr.worker_id, sr.worker_name, sr.lease_id, sr.seconds, {}, nullptr};
      if (PlaysGames(runs_[run_id]->kind)) {
        auto m = std::make_shared<v1::MatchJobResult>();
        if (!m->ParseFromString(sr.result))
          return absl::DataLossError(Cat("result of job ", sr.job_id, ": unreadable"));
        r.match = std::move(m);
      } else {
        v1::PerftJobResult pr;
        if (!pr.ParseFromString(sr.result))
          return absl::DataLossError(Cat("result of job ", sr.job_id, ": unreadable"));
        r.counts.assign(pr.counts().begin(), pr.counts().end());
      }
      // A result counts as a ready entry consumed: take its slot off the queue.
      auto slot = std::find(ready_.begin(), ready_.end(), sr.job_id);
      if (slot != ready_.end()) ready_.erase(slot);
      it->second->pending++;
      IngestResultLocked(*it->second, std::move(r), updates);
    }
    Run& loaded = *runs_[run_id];
    if (!results.empty() && loaded.state == v1::RUN_STATE_QUEUED)
      loaded.state = v1::RUN_STATE_RUNNING;
    ++resumed;
    spdlog::info("run {}: resumed with {}/{} jobs done", run_id, loaded.jobs_done,
                 loaded.jobs.size());
  }
  if (resumed) spdlog::info("resumed {} unfinished run(s)", resumed);
  if (!updates.empty()) RETURN_IF_ERROR(store_->Commit({}, updates));
  return absl::OkStatus();
}

void Coordinator::AddRunLocked(std::unique_ptr<Run> run, std::vector<std::unique_ptr<Job>> jobs) {
  run->divide.assign(run->perft.root_moves_size(), 0);
  for (auto& job : jobs) {
    run->jobs.push_back(job->id);
    run->estimate_total +=
        PlaysGames(run->kind) ? job->match_spec.work().pairs() : job->spec.estimate();
    for (int i = 0; i < job->want; ++i) ready_.push_back(job->id);
    jobs_[job->id] = std::move(job);
  }
  const uint64_t id = run->id;
  runs_[id] = std::move(run);
  Run& r = *runs_[id];
  // A run with no jobs (no legal moves at the root) is finished at once.
  if (r.jobs.empty()) {
    std::vector<RunUpdate> updates;
    FinishRunLocked(r, v1::RUN_STATE_SUCCEEDED, "", updates);
    (void)store_->Commit({}, updates);
  }
}

namespace {

// Positions a perft job counts: its FENs, then its packed positions.
size_t PositionsOf(const v1::PerftJob& work) {
  return size_t(work.fens_size()) + work.packed_positions().size() / kPackedPositionSize;
}

}  // namespace

absl::StatusOr<v1::Run> Coordinator::SubmitPerft(const v1::SubmitPerftRequest& request) {
  const v1::PerftRequest& p = request.perft();
  if (p.fen().empty()) return absl::InvalidArgumentError("perft.fen is required");
  absl::StatusOr<Position> root = Position::FromFen(p.fen());
  if (!root.ok())
    return absl::InvalidArgumentError(
        Cat("malformed FEN '", p.fen(), "': ", std::string(root.status().message())));
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
  RETURN_IF_ERROR(CheckAcceptingRuns());
  const size_t hash_tables = ConnectedHashTables();
  SplitOptions so{.depth = int(p.depth()),
                  .split_depth = int(request.split_depth()),
                  .workers = int(std::max<size_t>(1, ConnectedWorkers())),
                  .target_jobs = request.target_jobs(),
                  // Merge unless every worker hashes into one table; with no worker connected
                  // yet nobody knows (merge); a verified run's workers hash on their own.
                  .merge = hash_tables != 1 || request.verify()};
  const auto split_start = Clock::now();
  ASSIGN_OR_RETURN(PerftSplit split, SplitPerft(*root, so));
  std::vector<std::vector<uint32_t>> groups = PackJobs(split, TargetJobs(so));
  const auto split_end = Clock::now();

  std::unique_ptr<Run> run = NewRun(v1::RUN_KIND_PERFT);
  *run->perft.mutable_request() = request;
  run->perft.set_split_depth(split.split_depth);
  run->perft.set_split_positions(split.split_positions);
  run->perft.set_unique_positions(split.unique.size());
  run->perft.set_fen(root->Fen());
  for (const std::string& m : split.root_moves) run->perft.add_root_moves(m);

  // Job specs (packed positions and their multiplicities) on every core.
  const std::string root_fen = root->Fen();
  std::vector<StoredJob> stored_jobs(groups.size());
  std::vector<v1::StoredPerftJob> specs(groups.size());
  auto build = [&](size_t g) {
    v1::StoredPerftJob& spec = specs[g];
    v1::PerftJob* work = spec.mutable_work();
    work->set_chess960(root->IsChess960());
    work->set_depth(p.depth() - split.split_depth);
    work->set_hash_mb(p.hash_mb());
    work->set_root_fen(root_fen);
    work->set_independent(request.verify());
    std::string* packed = work->mutable_packed_positions();
    packed->reserve(groups[g].size() * kPackedPositionSize);
    double estimate = 0;
    for (uint32_t i : groups[g]) {
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
    stored_jobs[g] = {0, 0, spec.SerializeAsString()};
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
  // Workers with hashes of their own get lanes: contiguous ranges of the jobs, one per worker,
  // so that each worker's hash sees one region of the tree. Up to kMaxLanes workers: each has a
  // large share of the tree then, and the queue scans stay short.
  const size_t lanes = so.merge && !request.verify() && hash_tables <= kMaxLanes ? hash_tables : 0;
  if (lanes >= 2) run->lane_workers.assign(lanes, "");
  std::vector<std::unique_ptr<Job>> jobs;
  for (size_t i = 0; i < stored_jobs.size(); ++i) {
    auto job = std::make_unique<Job>();
    job->spec = std::move(specs[i]);
    job->want = request.verify() ? 2 : 1;
    if (lanes >= 2) job->lane = uint32_t(i * lanes / stored_jobs.size());
    jobs.push_back(std::move(job));
  }
  const std::string spec = run->perft.SerializeAsString();
  const std::string fen = run->perft.fen();
  const int split_depth = split.split_depth;
  const auto specs_end = Clock::now();
  absl::StatusOr<v1::Run> out =
      AddNewRun(std::move(run), std::move(stored_jobs), std::move(jobs), spec);
  if (!out.ok()) return out.status();
  auto secs = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  spdlog::info(
      "run {}: perft depth {} of '{}' split at depth {} into {} unique positions "
      "({} with transpositions), {} jobs{}; split {:.3f} s, job specs {:.3f} s, stored {:.3f} s",
      out->id(), p.depth(), fen, split_depth, split.unique.size(), split.split_positions,
      out->jobs().total(), request.verify() ? ", verified" : "", secs(split_start, split_end),
      secs(split_end, specs_end), secs(specs_end, Clock::now()));
  return out;
}

absl::StatusOr<v1::Run> Coordinator::AddNewRun(std::unique_ptr<Run> run,
                                               std::vector<StoredJob> stored_jobs,
                                               std::vector<std::unique_ptr<Job>> jobs,
                                               const std::string& spec) {
  StoredRun stored;
  stored.kind = run->kind;
  stored.state = run->state;
  stored.created_unix = run->created_unix;
  stored.spec = spec;
  RETURN_IF_ERROR(store_->CreateRun(stored, stored_jobs));
  run->id = stored.id;
  for (size_t i = 0; i < jobs.size(); ++i) {
    jobs[i]->id = stored_jobs[i].id;
    jobs[i]->run_id = run->id;
  }
  Deferred deferred;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    const uint64_t id = run->id;
    AddRunLocked(std::move(run), std::move(jobs));
    DispatchLocked(deferred);
    out = BuildRunLocked(*runs_[id]);
  }
  for (auto& f : deferred) f();
  return out;
}

absl::Status Coordinator::CheckAcceptingRuns() {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  return absl::OkStatus();
}

bool Coordinator::EngineKnown(const std::string& sha256) {
  absl::MutexLock lock(&mu_);
  return engines_.contains(sha256);
}

std::unique_ptr<Coordinator::Run> Coordinator::NewRun(v1::RunKind kind) {
  auto run = std::make_unique<Run>();
  run->kind = kind;
  run->state = v1::RUN_STATE_QUEUED;
  run->created_unix = UnixNow();
  return run;
}

absl::StatusOr<v1::Run> Coordinator::AddGamesRun(std::unique_ptr<Run> run,
                                                 std::vector<v1::MatchJob> plan,
                                                 const std::string& spec) {
  std::vector<StoredJob> stored_jobs;
  std::vector<std::unique_ptr<Job>> jobs;
  for (v1::MatchJob& work : plan) {
    auto job = std::make_unique<Job>();
    job->pairing = work.pairing();
    *job->match_spec.mutable_work() = std::move(work);
    stored_jobs.push_back({0, 0, job->match_spec.SerializeAsString()});
    jobs.push_back(std::move(job));
  }
  return AddNewRun(std::move(run), std::move(stored_jobs), std::move(jobs), spec);
}

absl::StatusOr<v1::Run> Coordinator::SubmitMatch(const v1::SubmitMatchRequest& submitted) {
  const v1::SubmitMatchRequest request = WithPairsPerJob(submitted, *this);
  RETURN_IF_ERROR(
      ValidateMatchRequest(request, [this](const std::string& sha) { return EngineKnown(sha); }));
  RETURN_IF_ERROR(CheckAcceptingRuns());
  std::unique_ptr<Run> run = NewRun(v1::RUN_KIND_MATCH);
  *run->match.mutable_request() = request;
  run->sprt = SprtOf(request);
  const std::string spec = run->match.SerializeAsString();
  absl::StatusOr<v1::Run> out = AddGamesRun(std::move(run), PlanMatchJobs(request), spec);
  if (out.ok())
    spdlog::info("run {}: match {} vs {} at {}, {} jobs{}", out->id(), request.engines(0).name(),
                 request.engines(1).name(), request.tc(), out->jobs().total(),
                 request.has_sprt() ? " (SPRT)" : "");
  return out;
}

absl::StatusOr<v1::Run> Coordinator::SubmitTournament(
    const v1::SubmitTournamentRequest& submitted) {
  const v1::SubmitTournamentRequest request = WithPairsPerJob(submitted, *this);
  RETURN_IF_ERROR(ValidateTournamentRequest(
      request, [this](const std::string& sha) { return EngineKnown(sha); }));
  RETURN_IF_ERROR(CheckAcceptingRuns());
  std::unique_ptr<Run> run = NewRun(v1::RUN_KIND_TOURNAMENT);
  *run->tournament.mutable_request() = request;
  const size_t pairings = TournamentPairings(request).size();
  run->pairing_tallies.resize(pairings);
  const std::string spec = run->tournament.SerializeAsString();
  absl::StatusOr<v1::Run> out = AddGamesRun(std::move(run), PlanTournamentJobs(request), spec);
  if (out.ok())
    spdlog::info("run {}: {} of {} engines at {}, {} pairings of {} games, {} jobs", out->id(),
                 request.gauntlet() ? "gauntlet" : "round robin", request.engines_size(),
                 request.tc(), pairings, request.games_per_pairing(), out->jobs().total());
  return out;
}

absl::StatusOr<v1::GetPgnResponse> Coordinator::GetPgn(uint64_t run_id) {
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> counted;
  absl::flat_hash_map<uint64_t, uint32_t> pairing_of;        // job id -> tournament pairing
  std::vector<std::pair<std::string, std::string>> engines;  // per pairing: first, second
  uint64_t games_per_pairing = 0;
  // A run that had finished before this process started: its counted results are the first
  // result of each job, in commit order, up to the games its final status counted (results
  // committed after the run finished were stored but not counted).
  bool from_store = false;
  uint64_t final_games = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NoRunError(run_id);
    const Run& run = *it->second;
    if (!PlaysGames(run.kind))
      return absl::FailedPreconditionError(
          Cat("run ", run_id, " is not a match or tournament run"));
    counted.insert(run.counted.begin(), run.counted.end());
    if (run.final && run.counted.empty()) {
      from_store = true;
      final_games =
          run.final->has_match() ? run.final->match().games() : run.final->tournament().games();
    }
    if (run.kind == v1::RUN_KIND_MATCH) {
      engines.emplace_back(run.match.request().engines(0).name(),
                           run.match.request().engines(1).name());
    } else {
      const v1::SubmitTournamentRequest& req = run.tournament.request();
      for (auto [i, j] : TournamentPairings(req))
        engines.emplace_back(req.engines(i).name(), req.engines(j).name());
      games_per_pairing = req.games_per_pairing();
      for (const auto& [job_id, lease] : run.counted) {
        auto j = jobs_.find(job_id);
        if (j != jobs_.end()) pairing_of[job_id] = j->second->pairing;
      }
    }
  }
  if (from_store && games_per_pairing > 0) {
    ASSIGN_OR_RETURN(std::vector<StoredJob> jobs, store_->LoadJobs(run_id));
    for (const StoredJob& j : jobs) {
      v1::StoredMatchJob spec;
      if (spec.ParseFromString(j.spec)) pairing_of[j.id] = spec.work().pairing();
    }
  }
  ASSIGN_OR_RETURN(std::vector<StoredResult> results, store_->LoadResults(run_id));
  v1::GetPgnResponse out;
  std::string pgn;
  absl::flat_hash_set<uint64_t> seen_jobs;
  for (const StoredResult& r : results) {
    if (from_store) {
      if (out.games() >= final_games || !seen_jobs.insert(r.job_id).second) continue;
    } else if (!counted.contains(std::make_pair(r.job_id, r.lease_id))) {
      continue;
    }
    v1::MatchJobResult m;
    if (!m.ParseFromString(r.result)) continue;
    const uint32_t pairing = pairing_of.contains(r.job_id) ? pairing_of[r.job_id] : 0;
    const auto& [first, second] = engines[std::min<size_t>(pairing, engines.size() - 1)];
    for (const v1::ReportedGame& g : m.games()) {
      pgn += g.pgn();
      if (!g.pgn().empty() && g.pgn().back() != '\n') pgn += "\n";
      pgn += "\n";
      out.set_games(out.games() + 1);
      v1::GameSummary* s = out.add_game_list();
      s->set_round(uint64_t(pairing) * games_per_pairing + 2 * g.pair() + g.game() + 1);
      s->set_white(g.game() == 0 ? first : second);
      s->set_black(g.game() == 0 ? second : first);
      s->set_result(g.result());
      s->set_termination(g.end());
      s->set_reason(g.reason());
      s->set_plies(uint32_t(g.moves_size()));
      s->set_start_fen(g.start_fen());
    }
  }
  out.set_pgn(std::move(pgn));
  return out;
}

absl::StatusOr<v1::Run> Coordinator::GetRun(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it == runs_.end()) return NoRunError(run_id);
  return BuildRunLocked(*it->second);
}

v1::ListRunsResponse Coordinator::ListRuns(const v1::ListRunsRequest& request) {
  size_t limit = request.limit() == 0 ? 100 : std::min<size_t>(request.limit(), 1000);
  v1::ListRunsResponse out;
  absl::MutexLock lock(&mu_);
  for (auto it = runs_.rbegin(); it != runs_.rend() && size_t(out.runs_size()) < limit; ++it) {
    if (request.states_size() > 0 && std::find(request.states().begin(), request.states().end(),
                                               it->second->state) == request.states().end())
      continue;
    v1::Run run = BuildRunLocked(*it->second);
    // Lists stay small: no divide.
    if (run.has_perft()) run.mutable_perft()->mutable_result()->clear_divide();
    *out.add_runs() = std::move(run);
  }
  return out;
}

absl::StatusOr<v1::Run> Coordinator::CancelRun(uint64_t run_id, const std::string& reason) {
  std::vector<RunUpdate> updates;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NoRunError(run_id);
    Run& run = *it->second;
    if (Terminal(run.state))
      return absl::FailedPreconditionError(
          Cat("run ", run_id, " already finished (", RunStateName(run.state), ")"));
    FinishRunLocked(run, v1::RUN_STATE_CANCELLED,
                    reason.empty() ? std::string("cancelled by request") : reason, updates);
    out = BuildRunLocked(run);
  }
  RETURN_IF_ERROR(store_->Commit({}, updates));
  spdlog::info("run {}: cancelled ({})", run_id, out.message());
  return out;
}

uint64_t Coordinator::WatchRun(uint64_t run_id, uint64_t seen, RunCallback cb) {
  absl::StatusOr<v1::Run> now;
  uint64_t version = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) {
      now = NoRunError(run_id);
    } else if (shutting_down_) {
      now = ShuttingDownError();
    } else if (it->second->version > seen) {
      now = BuildRunLocked(*it->second);
      version = it->second->version;
    } else {
      uint64_t id = next_id_++;
      watches_.push_back({id, run_id, seen, std::move(cb)});
      return id;
    }
  }
  cb(std::move(now), version);
  return 0;
}

bool Coordinator::CancelWatch(uint64_t watch_id) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < watches_.size(); ++i) {
    if (watches_[i].id == watch_id) {
      watches_.erase(watches_.begin() + i);
      return true;
    }
  }
  return false;
}

absl::StatusOr<v1::RegisterResponse> Coordinator::Register(const v1::RegisterRequest& request) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return ShuttingDownError();
  char id[24];
  std::snprintf(id, sizeof id, "w-%016llx", static_cast<unsigned long long>(rng_()));
  Worker& w = workers_[id];
  w.name = request.name().empty() ? std::string(id) : request.name();
  w.threads = request.threads();
  w.hash_group = request.hash_group().substr(0, 256);
  w.last_seen = Clock::now();
  spdlog::info("worker {} registered: name '{}', {} threads, {} cores, version '{}'", id, w.name,
               request.threads(), request.cores(), request.version());
  v1::RegisterResponse out;
  out.set_worker_id(id);
  out.set_heartbeat_seconds(options_.heartbeat_seconds);
  return out;
}

size_t Coordinator::LeaseIndex(const Job& job, uint64_t lease_id) {
  for (size_t i = 0; i < job.leases.size(); ++i)
    if (job.leases[i].id == lease_id) return i;
  return job.leases.size();
}

bool Coordinator::WasIssued(const Job& job, uint64_t lease_id) {
  return std::find(job.past_leases.begin(), job.past_leases.end(), lease_id) !=
         job.past_leases.end();
}

bool Coordinator::JobHeldBy(const Job& job, const std::string& worker_id) const {
  for (const Lease& l : job.leases)
    if (l.worker_id == worker_id) return true;
  for (const Result& r : job.results)
    if (r.worker_id == worker_id) return true;
  return false;
}

Coordinator::Job* Coordinator::TakeJobLocked(const std::string& worker_id) {
  // Jobs in queue order, except that a job with a lane goes to its lane's worker; a worker whose
  // lane is empty (or that has none) takes the last queued job of the run's other lanes, from
  // the far end of another worker's range.
  uint64_t steal_job = 0, steal_run = 0;  // that job (0: none yet)
  uint64_t lane_run = 0;                  // the run whose lane `mine` is
  uint32_t mine = kNoLane;
  for (auto it = ready_.begin(); it != ready_.end();) {
    auto j = jobs_.find(*it);
    if (j == jobs_.end() || j->second->done || j->second->cancelled || j->second->failed) {
      it = ready_.erase(it);
      continue;
    }
    Job& job = *j->second;
    // A verified job goes to different workers.
    if (job.want > 1 && JobHeldBy(job, worker_id)) {
      ++it;
      continue;
    }
    if (job.lane != kNoLane) {
      if (steal_job && steal_run != job.run_id) break;  // past the end of the lanes' run
      if (lane_run != job.run_id) {
        lane_run = job.run_id;
        auto r = runs_.find(job.run_id);
        mine = r == runs_.end() ? kNoLane : LaneOfLocked(*r->second, worker_id);
      }
      if (mine != job.lane) {
        steal_job = job.id;
        steal_run = job.run_id;
        ++it;
        continue;
      }
    } else if (steal_job) {
      break;  // the lanes' run comes first
    }
    ready_.erase(it);
    return &job;
  }
  if (!steal_job) return nullptr;
  auto last = std::find(ready_.rbegin(), ready_.rend(), steal_job);
  ready_.erase(std::next(last).base());
  return jobs_[steal_job].get();
}

uint32_t Coordinator::LaneOfLocked(Run& run, const std::string& worker_id) {
  std::vector<std::string>& lanes = run.lane_workers;
  for (size_t l = 0; l < lanes.size(); ++l)
    if (lanes[l] == worker_id) return uint32_t(l);
  const auto now = Clock::now();
  for (size_t l = 0; l < lanes.size(); ++l) {
    auto w = workers_.find(lanes[l]);
    if (lanes[l].empty() || w == workers_.end() || !SeenRecently(w->second, now)) {
      lanes[l] = worker_id;
      return uint32_t(l);
    }
  }
  return kNoLane;
}

v1::AcquireJobResponse Coordinator::LeaseLocked(Job& job, const std::string& worker_id) {
  Lease lease{rng_() | 1, worker_id, Clock::now() + Seconds(options_.lease_seconds)};
  Run& run = *runs_[job.run_id];
  if (job.leases.empty() && job.pending == 0) ++run.jobs_leased;
  job.leases.push_back(lease);
  job.past_leases.push_back(lease.id);
  leased_jobs_.insert(job.id);
  if (run.state == v1::RUN_STATE_QUEUED) {
    run.state = v1::RUN_STATE_RUNNING;
    if (run.started_unix == 0) run.started_unix = UnixNow();
  }
  ++run.version;
  v1::AcquireJobResponse out;
  v1::Job* j = out.mutable_job();
  j->set_job_id(job.id);
  j->set_run_id(job.run_id);
  j->set_lease_id(lease.id);
  j->set_lease_seconds(options_.lease_seconds);
  if (PlaysGames(run.kind))
    *j->mutable_match() = job.match_spec.work();
  else
    *j->mutable_perft() = job.spec.work();
  return out;
}

void Coordinator::RemoveLeaseLocked(Job& job, size_t index) {
  job.leases.erase(job.leases.begin() + index);
  if (job.leases.empty()) {
    leased_jobs_.erase(job.id);
    if (job.pending == 0) {
      auto r = runs_.find(job.run_id);
      if (r != runs_.end() && r->second->jobs_leased > 0) --r->second->jobs_leased;
    }
  }
}

uint64_t Coordinator::AcquireJob(const v1::AcquireJobRequest& request, JobCallback cb) {
  absl::StatusOr<v1::AcquireJobResponse> now;
  {
    absl::MutexLock lock(&mu_);
    auto w = workers_.find(request.worker_id());
    if (shutting_down_) {
      now = ShuttingDownError();
    } else if (w == workers_.end()) {
      now = UnknownWorkerError(request.worker_id());
    } else if (request.wait_seconds() < 0 || request.wait_seconds() > 60) {
      now = absl::InvalidArgumentError(
          Cat("wait_seconds must be in 0..60, got ", request.wait_seconds()));
    } else {
      w->second.last_seen = Clock::now();
      if (Job* job = TakeJobLocked(request.worker_id())) {
        now = LeaseLocked(*job, request.worker_id());
      } else {
        double wait =
            request.wait_seconds() > 0 ? request.wait_seconds() : options_.default_wait_seconds;
        uint64_t id = next_id_++;
        waiters_.push_back({id, request.worker_id(), Clock::now() + Seconds(wait), std::move(cb)});
        return id;
      }
    }
  }
  cb(std::move(now));
  return 0;
}

bool Coordinator::CancelAcquire(uint64_t waiter_id) {
  absl::MutexLock lock(&mu_);
  for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
    if (it->id == waiter_id) {
      waiters_.erase(it);
      return true;
    }
  }
  return false;
}

void Coordinator::DispatchLocked(Deferred& deferred) {
  while (!waiters_.empty() && !ready_.empty()) {
    bool served = false;
    for (auto it = waiters_.begin(); it != waiters_.end(); ++it) {
      Job* job = TakeJobLocked(it->worker_id);
      if (!job) continue;
      auto response = std::make_shared<v1::AcquireJobResponse>(LeaseLocked(*job, it->worker_id));
      deferred.push_back([cb = std::move(it->cb), response] { cb(std::move(*response)); });
      waiters_.erase(it);
      served = true;
      break;
    }
    if (!served) break;
  }
}

absl::StatusOr<v1::HeartbeatResponse> Coordinator::Heartbeat(const v1::HeartbeatRequest& request) {
  absl::MutexLock lock(&mu_);
  auto w = workers_.find(request.worker_id());
  if (w == workers_.end()) return UnknownWorkerError(request.worker_id());
  w->second.last_seen = Clock::now();
  auto j = jobs_.find(request.job_id());
  if (j == jobs_.end()) return NoJobError(request.job_id());
  Job& job = *j->second;
  v1::HeartbeatResponse out;
  if (job.cancelled) {
    out.set_stop(true);
    out.set_reason(Cat("run ", job.run_id, " was cancelled"));
    return out;
  }
  for (Lease& l : job.leases) {
    if (l.id == request.lease_id()) {
      if (l.worker_id != request.worker_id())
        return absl::FailedPreconditionError(
            Cat("lease ", request.lease_id(), " of job ", job.id, " belongs to another worker"));
      l.expiry = Clock::now() + Seconds(options_.lease_seconds);
      out.set_lease_seconds(options_.lease_seconds);
      return out;
    }
  }
  if (WasIssued(job, request.lease_id())) {
    out.set_stop(true);
    out.set_reason(job.done ? Cat("job ", job.id, " is already done")
                            : Cat("lease ", request.lease_id(), " of job ", job.id,
                                  " expired; the job was re-queued"));
    return out;
  }
  return absl::FailedPreconditionError(
      Cat("job ", job.id, " was never leased with lease ", request.lease_id()));
}

void Coordinator::CompleteJob(const v1::CompleteJobRequest& request, CompleteCallback cb) {
  // Games are replayed outside the lock (the job's spec does not change while the job can still
  // take a result); the checks of the lease below decide whether the replay's verdict is used.
  std::optional<absl::Status> replay;
  if (request.has_match()) {
    v1::MatchJob work;
    {
      absl::MutexLock lock(&mu_);
      auto j = jobs_.find(request.job_id());
      if (j != jobs_.end() && !j->second->done && !j->second->cancelled)
        work = j->second->match_spec.work();
    }
    if (work.engines_size() > 0) replay = CheckMatchResult(work, request.match());
  }
  absl::Status error;
  bool duplicate = false;
  {
    absl::MutexLock lock(&mu_);
    auto j = jobs_.find(request.job_id());
    if (shutting_down_) {
      error = ShuttingDownError();
    } else if (j == jobs_.end()) {
      error = NoJobError(request.job_id());
    } else {
      Job& job = *j->second;
      // Queues an accepted result (its counts or games already set) for the committer, which
      // answers `cb`.
      auto enqueue = [&](size_t index, Result result) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto w = workers_.find(request.worker_id());
        Pending p{job.id, job.run_id, std::move(result), {}};
        p.result.worker_id = request.worker_id();
        p.result.worker_name = w == workers_.end() ? request.worker_id() : w->second.name;
        p.result.lease_id = request.lease_id();
        p.result.seconds = request.seconds();
        p.callbacks.push_back(std::move(cb));
        ++job.pending;
        RemoveLeaseLocked(job, index);
        pending_.push_back(std::move(p));
        return w;
      };
      for (const Result& r : job.results)
        if (r.lease_id == request.lease_id()) duplicate = true;
      if (!duplicate) {
        for (Pending& p : pending_) {
          if (p.job_id == job.id && p.result.lease_id == request.lease_id()) {
            p.callbacks.push_back(std::move(cb));
            if (metrics_) metrics_->Completion("duplicate");
            return;
          }
        }
        const size_t index = LeaseIndex(job, request.lease_id());
        const bool issued = WasIssued(job, request.lease_id());
        if (index == job.leases.size()) {
          if (job.cancelled)
            error = absl::FailedPreconditionError(
                Cat("run ", job.run_id, " of job ", job.id, " was cancelled"));
          else if (issued)
            error = absl::FailedPreconditionError(
                Cat("lease ", request.lease_id(), " of job ", job.id,
                    " is stale (expired or released; the job was leased again)"));
          else if (job.past_leases.empty())
            error =
                absl::FailedPreconditionError(Cat("job ", job.id, " was never leased; lease ",
                                                  request.lease_id(), " is not one of its leases"));
          else
            error = absl::FailedPreconditionError(
                Cat("lease ", request.lease_id(), " was never issued for job ", job.id));
        } else if (job.leases[index].worker_id != request.worker_id()) {
          error = absl::FailedPreconditionError(
              Cat("lease ", request.lease_id(), " of job ", job.id, " belongs to another worker"));
        } else if (PlaysGames(runs_[job.run_id]->kind)) {
          absl::Status check =
              !request.has_match()
                  ? absl::InvalidArgumentError(
                        Cat("job ", job.id, " is a match job; the result must carry its games"))
              : replay ? *replay
                       : CheckMatchResult(job.match_spec.work(), request.match());
          if (!check.ok()) {
            // Refused and not counted: the job goes back to the queue for another worker.
            Run& run = *runs_[job.run_id];
            ++run.tally.rejected;
            ++run.version;
            RemoveLeaseLocked(job, index);
            ready_.push_front(job.id);
            error =
                absl::InvalidArgumentError(Cat("job ", job.id, ": ", std::string(check.message())));
            spdlog::warn("job {}: result of worker {} refused: {}", job.id, request.worker_id(),
                         std::string(check.message()));
          } else {
            Result result;
            result.match = std::make_shared<v1::MatchJobResult>(request.match());
            enqueue(index, std::move(result));
            return;  // the committer answers
          }
        } else if (!request.has_perft() ||
                   size_t(request.perft().counts_size()) != PositionsOf(job.spec.work())) {
          error = absl::InvalidArgumentError(
              Cat("job ", job.id, " has ", PositionsOf(job.spec.work()),
                  " positions; the result must carry as many perft counts, got ",
                  request.has_perft() ? request.perft().counts_size() : 0));
        } else {
          Result result;
          result.counts.assign(request.perft().counts().begin(), request.perft().counts().end());
          auto w = enqueue(index, std::move(result));
          if (w != workers_.end()) w->second.last_seen = Clock::now();
          return;  // the committer answers
        }
      }
    }
    if (metrics_) metrics_->Completion(duplicate ? "duplicate" : "rejected");
  }
  if (duplicate) {
    v1::CompleteJobResponse r;
    r.set_duplicate(true);
    cb(r);
  } else {
    cb(error);
  }
}

absl::Status Coordinator::ReleaseJob(const v1::ReleaseJobRequest& request) {
  Deferred deferred;
  {
    absl::MutexLock lock(&mu_);
    auto j = jobs_.find(request.job_id());
    if (j == jobs_.end()) return NoJobError(request.job_id());
    Job& job = *j->second;
    const size_t index = LeaseIndex(job, request.lease_id());
    if (index == job.leases.size() || job.leases[index].worker_id != request.worker_id())
      return absl::FailedPreconditionError(Cat("lease ", request.lease_id(), " of job ", job.id,
                                               " is not held by worker ", request.worker_id()));
    RemoveLeaseLocked(job, index);
    if (!job.done && !job.cancelled) ready_.push_front(job.id);
    ++runs_[job.run_id]->version;
    spdlog::info("job {}: released by worker {} ({})", job.id, request.worker_id(),
                 request.reason());
    DispatchLocked(deferred);
  }
  for (auto& f : deferred) f();
  return absl::OkStatus();
}

void Coordinator::IngestResultLocked(Job& job, Result result, std::vector<RunUpdate>& updates) {
  --job.pending;
  Run& run = *runs_[job.run_id];
  if (job.leases.empty() && job.pending == 0 && run.jobs_leased > 0) --run.jobs_leased;
  job.results.push_back(std::move(result));
  ++run.version;
  if (job.done || job.cancelled || job.failed || Terminal(run.state)) return;
  if (PlaysGames(run.kind)) {
    const Result& r = job.results.back();
    if (run.kind == v1::RUN_KIND_TOURNAMENT) {
      if (job.pairing < run.pairing_tallies.size()) run.pairing_tallies[job.pairing].Add(*r.match);
    } else {
      run.tally.Add(*r.match);
    }
    run.counted.emplace_back(job.id, r.lease_id);
    job.done = true;
    ++run.jobs_done;
    run.estimate_done += job.match_spec.work().pairs();
    if (metrics_) {
      for (const v1::ReportedGame& g : r.match->games()) {
        metrics_->games_.Add({{"result", g.result()}}).Increment();
        metrics_->endings_.Add({{"end", g.end()}}).Increment();
      }
      metrics_->duration_.Observe(r.seconds);
    }
    v1::MatchRunStatus status;
    const stats::SprtDecision decision = run.tally.Fill(run.sprt, status);
    if (decision != stats::SprtDecision::kContinue)
      FinishRunLocked(
          run, v1::RUN_STATE_SUCCEEDED,
          Cat("SPRT accepted ", decision == stats::SprtDecision::kAcceptH1 ? "H1" : "H0", " after ",
              status.games(), " games (LLR ", status.llr(), ")"),
          updates);
    else if (run.jobs_done == run.jobs.size())
      FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, "", updates);
    return;
  }
  // Find the counts most results agree on.
  size_t best = 0, best_votes = 0;
  for (size_t i = 0; i < job.results.size(); ++i) {
    size_t votes = 0;
    for (const Result& r : job.results) votes += r.counts == job.results[i].counts;
    if (votes > best_votes) best = i, best_votes = votes;
  }
  const size_t needed = job.want > 1 ? 2 : 1;
  if (best_votes < needed) {
    // Verified job without a majority yet: ask one more worker once all copies are in.
    if (job.results.size() >= size_t(job.want)) {
      if (job.results.size() >= size_t(kMaxVerifyResults)) {
        job.failed = true;
        FinishRunLocked(
            run, v1::RUN_STATE_FAILED,
            Cat("job ", job.id, ": ", job.results.size(), " results without two that agree"),
            updates);
        return;
      }
      ++job.want;
      ready_.push_front(job.id);
      spdlog::warn("job {}: workers disagree; asking a third worker", job.id);
    }
    return;
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
    run.disagreements.push_back(d);
    if (metrics_) metrics_->disagreements_.Increment();
    spdlog::warn("job {}: worker {} ('{}') disagrees with the majority ({} vs {} nodes)", job.id,
                 r.worker_id, r.worker_name, mine, theirs);
  }
  job.done = true;
  ++run.jobs_done;
  run.estimate_done += job.spec.estimate();
  unsigned __int128 added = 0;
  auto add = [&](size_t i, uint32_t root, uint64_t multiplicity) {
    unsigned __int128 n = (unsigned __int128)counts[i] * multiplicity;
    added += n;
    if (root < run.divide.size()) run.divide[root] += n;
  };
  for (int i = 0; i < job.spec.weights_size() && i < int(counts.size()); ++i) {
    const v1::PositionWeights& w = job.spec.weights(i);
    for (int k = 0; k < w.root_size() && k < w.multiplicity_size(); ++k)
      add(i, w.root(k), w.multiplicity(k));
  }
  for (int i = 0, next = 0; i < job.spec.weight_counts_size() && i < int(counts.size()); ++i) {
    for (uint32_t k = 0; k < job.spec.weight_counts(i) && next < job.spec.weight_roots_size() &&
                         next < job.spec.weight_multiplicities_size();
         ++k, ++next)
      add(i, job.spec.weight_roots(next), job.spec.weight_multiplicities(next));
  }
  run.total += added;
  if (metrics_) {
    metrics_->perft_nodes_.Increment(double(added));
    metrics_->duration_.Observe(job.results[best].seconds);
  }
  if (run.jobs_done == run.jobs.size()) FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, "", updates);
}

void Coordinator::FinishRunLocked(Run& run, v1::RunState state, const std::string& message,
                                  std::vector<RunUpdate>& updates) {
  run.state = state;
  run.message = message;
  run.finished_unix = UnixNow();
  if (run.started_unix == 0) run.started_unix = run.finished_unix;
  ++run.version;
  for (uint64_t id : run.jobs) {
    auto j = jobs_.find(id);
    if (j == jobs_.end()) continue;
    Job& job = *j->second;
    if (!job.done) {
      job.cancelled = true;
      ++run.jobs_cancelled;
    }
    if (!job.leases.empty()) leased_jobs_.erase(job.id);
    job.leases.clear();
  }
  run.jobs_leased = 0;
  run.final = std::make_unique<v1::Run>(BuildRunLocked(run));
  updates.push_back({run.id, int(state), run.started_unix, run.finished_unix, message,
                     run.final->SerializeAsString()});
  if (metrics_) metrics_->RemoveRun(run.id);
  last_gauges_ = {};  // refresh the gauges at the next tick
  // Positions and counts of a finished run's jobs are no longer needed in memory (the store
  // has them); the jobs stay so that late or repeated calls about them get precise answers.
  for (uint64_t id : run.jobs) {
    auto j = jobs_.find(id);
    if (j == jobs_.end()) continue;
    j->second->spec.Clear();
    j->second->match_spec.Clear();
    for (Result& r : j->second->results) {
      r.counts = {};
      r.match.reset();
    }
  }
  if (state == v1::RUN_STATE_SUCCEEDED && run.kind == v1::RUN_KIND_PERFT)
    spdlog::info("run {}: succeeded, {} nodes in {:.3f} s", run.id,
                 run.final->perft().result().nodes_decimal(),
                 run.final->perft().result().seconds());
  else
    spdlog::info("run {}: {} {}", run.id, RunStateName(state), message);
}

v1::Run Coordinator::BuildRunLocked(const Run& run) {
  if (run.final) return *run.final;
  v1::Run out;
  out.set_id(run.id);
  out.set_kind(run.kind);
  out.set_state(run.state);
  out.set_message(run.message);
  out.set_created_unix(run.created_unix);
  out.set_started_unix(run.started_unix);
  out.set_finished_unix(run.finished_unix);
  v1::JobCounts* jc = out.mutable_jobs();
  jc->set_total(run.jobs.size());
  jc->set_done(run.jobs_done);
  jc->set_cancelled(run.jobs_cancelled);
  jc->set_leased(run.jobs_leased);
  jc->set_queued(QueuedJobs(run));
  const double progress =
      run.state == v1::RUN_STATE_SUCCEEDED
          ? 1.0
          : (run.estimate_total > 0 ? run.estimate_done / run.estimate_total : 0.0);
  out.set_progress(progress);
  const double end = run.finished_unix > 0 ? run.finished_unix : UnixNow();
  const double elapsed = run.started_unix > 0 ? std::max(0.0, end - run.started_unix) : 0.0;
  if (progress > 0 && progress < 1 && elapsed > 0)
    out.set_eta_seconds(elapsed * (1 - progress) / progress);
  if (run.kind == v1::RUN_KIND_MATCH) {
    v1::MatchRunStatus* ms = out.mutable_match();
    *ms->mutable_request() = run.match.request();
    run.tally.Fill(run.sprt, *ms);
    // An SPRT usually stops long before its planned games: progress is also how far the LLR
    // has gone towards the bound it is heading for.
    if (run.sprt && progress < 1 && ms->llr_upper() > 0 && ms->llr_lower() < 0) {
      const double llr = ms->llr() >= 0 ? ms->llr() / ms->llr_upper() : ms->llr() / ms->llr_lower();
      const double p = std::min(0.99, llr);
      if (p > progress) {
        out.set_progress(p);
        out.set_eta_seconds(elapsed > 0 ? elapsed * (1 - p) / p : 0);
      }
    }
    return out;
  }
  if (run.kind == v1::RUN_KIND_TOURNAMENT) {
    v1::TournamentRunStatus* ts = out.mutable_tournament();
    *ts->mutable_request() = run.tournament.request();
    FillTournamentStatus(run.tournament.request(), run.pairing_tallies, *ts);
    return out;
  }
  v1::PerftRunStatus* ps = out.mutable_perft();
  *ps->mutable_request() = run.perft.request();
  ps->set_split_depth(run.perft.split_depth());
  ps->set_split_positions(run.perft.split_positions());
  ps->set_unique_positions(run.perft.unique_positions());
  v1::PerftResult* r = ps->mutable_result();
  r->set_fen(run.perft.fen());
  r->set_depth(run.perft.request().perft().depth());
  r->set_nodes(uint64_t(run.total));
  r->set_nodes_high(uint64_t(run.total >> 64));
  r->set_nodes_decimal(Uint128ToString(run.total));
  for (int i = 0; i < run.perft.root_moves_size(); ++i) {
    v1::PerftDivideEntry* e = r->add_divide();
    e->set_move(run.perft.root_moves(i));
    e->set_nodes(uint64_t(run.divide[i]));
    e->set_nodes_high(uint64_t(run.divide[i] >> 64));
  }
  r->set_seconds(elapsed);
  r->set_nodes_per_second(elapsed > 0 ? double(run.total) / elapsed : 0);
  r->set_hash_mb(run.perft.request().perft().hash_mb());
  for (const v1::Disagreement& d : run.disagreements) *ps->add_disagreements() = d;
  return out;
}

void Coordinator::TickLocked(Deferred& deferred) {
  const auto now = Clock::now();
  // Lost leases: back to the front of the queue.
  std::vector<uint64_t> expired_jobs;
  for (uint64_t id : leased_jobs_) {
    auto j = jobs_.find(id);
    if (j == jobs_.end()) continue;
    for (const Lease& l : j->second->leases)
      if (l.expiry < now) expired_jobs.push_back(id);
  }
  for (uint64_t id : expired_jobs) {
    Job& job = *jobs_[id];
    for (size_t i = job.leases.size(); i-- > 0;) {
      if (job.leases[i].expiry >= now) continue;
      spdlog::warn("job {}: lease {} of worker {} expired; re-queued", job.id, job.leases[i].id,
                   job.leases[i].worker_id);
      RemoveLeaseLocked(job, i);
      ready_.push_front(job.id);
      ++runs_[job.run_id]->version;
      if (metrics_) metrics_->expiries_.Increment();
    }
  }
  DispatchLocked(deferred);
  // Long polls whose time is up get an empty answer.
  while (!waiters_.empty()) {
    auto it =
        std::min_element(waiters_.begin(), waiters_.end(),
                         [](const Waiter& a, const Waiter& b) { return a.deadline < b.deadline; });
    if (it->deadline > now) break;
    deferred.push_back([cb = std::move(it->cb)] { cb(v1::AcquireJobResponse()); });
    waiters_.erase(it);
  }
  // Watches of runs that changed.
  for (size_t i = 0; i < watches_.size();) {
    auto r = runs_.find(watches_[i].run_id);
    if (r != runs_.end() && r->second->version > watches_[i].seen) {
      auto run = std::make_shared<v1::Run>(BuildRunLocked(*r->second));
      deferred.push_back([cb = std::move(watches_[i].cb), run, v = r->second->version] {
        cb(std::move(*run), v);
      });
      watches_.erase(watches_.begin() + i);
    } else {
      ++i;
    }
  }
  if (metrics_ && now - last_gauges_ > std::chrono::milliseconds(500)) {
    last_gauges_ = now;
    UpdateGaugesLocked();
  }
}

void Coordinator::UpdateGaugesLocked() {
  std::map<std::string, double> by_state;
  double queued = 0, leased = 0, done = 0, cancelled = 0;
  for (const auto& [id, run] : runs_) {
    by_state[RunStateName(run->state)] += 1;
    if (Terminal(run->state)) continue;
    leased += run->jobs_leased;
    done += run->jobs_done;
    cancelled += run->jobs_cancelled;
    queued += QueuedJobs(*run);
    metrics_->SetRunProgress(id,
                             run->estimate_total > 0 ? run->estimate_done / run->estimate_total : 0,
                             double(run->total));
    if (run->kind == v1::RUN_KIND_MATCH) {
      v1::MatchRunStatus status;
      run->tally.Fill(run->sprt, status);
      metrics_->SetRunMatch(id, status.llr(), status.elo());
    }
  }
  metrics_->SetRuns(by_state);
  metrics_->SetJobs(queued, leased, done, cancelled);
  const auto now = Clock::now();
  absl::flat_hash_set<std::string> waiting;
  for (const Waiter& w : waiters_) waiting.insert(w.worker_id);
  double connected = 0;
  for (const auto& [id, w] : workers_)
    if (waiting.contains(id) || SeenRecently(w, now)) connected += 1;
  metrics_->workers_.Set(connected);
}

uint64_t Coordinator::QueuedJobs(const Run& run) {
  return run.jobs.size() -
         std::min<uint64_t>(run.jobs.size(), run.jobs_done + run.jobs_cancelled + run.jobs_leased);
}

bool Coordinator::SeenRecently(const Worker& worker, Clock::time_point now) const {
  return now - worker.last_seen < Seconds(options_.lease_seconds + options_.default_wait_seconds);
}

size_t Coordinator::ConnectedWorkers() {
  absl::MutexLock lock(&mu_);
  const auto now = Clock::now();
  size_t n = 0;
  for (const auto& [id, w] : workers_) n += SeenRecently(w, now);
  return n;
}

size_t Coordinator::ConnectedHashTables() {
  absl::MutexLock lock(&mu_);
  const auto now = Clock::now();
  size_t own = 0;
  absl::flat_hash_set<std::string> groups;
  for (const auto& [id, w] : workers_) {
    if (!SeenRecently(w, now)) continue;
    if (w.hash_group.empty())
      ++own;
    else
      groups.insert(w.hash_group);
  }
  return own + groups.size();
}

uint32_t Coordinator::MaxWorkerThreads() {
  absl::MutexLock lock(&mu_);
  const auto now = Clock::now();
  uint32_t most = 0;
  for (const auto& [id, w] : workers_)
    if (SeenRecently(w, now)) most = std::max(most, w.threads);
  return most;
}

void Coordinator::ReaperLoop() {
  for (;;) {
    Deferred deferred;
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_threads_), absl::Milliseconds(50));
      if (stop_threads_) return;
      TickLocked(deferred);
    }
    for (auto& f : deferred) f();
  }
}

void Coordinator::CommitLoop() {
  auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_threads_ || !pending_.empty();
  };
  for (;;) {
    std::vector<Pending> batch;
    std::vector<RunUpdate> started;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&has_work));
      if (pending_.empty() && stop_threads_) return;
      batch.swap(pending_);
      for (const Pending& p : batch) {
        Run& run = *runs_[p.run_id];
        if (!run.started_persisted && !Terminal(run.state)) {
          run.started_persisted = true;
          started.push_back({run.id, int(run.state), run.started_unix, 0, "", ""});
        }
      }
    }
    std::vector<StoredResult> rows;
    for (const Pending& p : batch) {
      std::string blob;
      if (p.result.match) {
        blob = p.result.match->SerializeAsString();
      } else {
        v1::PerftJobResult pr;
        for (uint64_t c : p.result.counts) pr.add_counts(c);
        blob = pr.SerializeAsString();
      }
      rows.push_back({p.job_id, p.run_id, p.result.worker_id, p.result.worker_name,
                      p.result.lease_id, p.result.seconds, std::move(blob)});
    }
    const auto t0 = Clock::now();
    absl::Status st = store_->Commit(rows, started);
    const double commit_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::vector<RunUpdate> finished;
    Deferred deferred;
    {
      absl::MutexLock lock(&mu_);
      if (metrics_) metrics_->commit_.Observe(commit_seconds);
      for (Pending& p : batch) {
        auto j = jobs_.find(p.job_id);
        if (!st.ok()) {
          if (j != jobs_.end()) {
            --j->second->pending;
            if (!j->second->done && !j->second->cancelled) ready_.push_front(p.job_id);
          }
        } else if (j != jobs_.end()) {
          IngestResultLocked(*j->second, std::move(p.result), finished);
        }
        if (metrics_) metrics_->Completion(st.ok() ? "committed" : "rejected");
      }
      for (Pending& p : batch) {
        for (auto& cb : p.callbacks) {
          if (st.ok())
            deferred.push_back([cb = std::move(cb)] { cb(v1::CompleteJobResponse()); });
          else
            deferred.push_back([cb = std::move(cb), st] {
              cb(absl::UnavailableError(Cat("result not committed: ", std::string(st.message()))));
            });
        }
      }
      if (!st.ok()) DispatchLocked(deferred);
    }
    if (!st.ok()) spdlog::error("commit of {} results failed: {}", batch.size(), st.ToString());
    if (!finished.empty()) {
      absl::Status fs = store_->Commit({}, finished);
      if (!fs.ok()) spdlog::error("recording finished runs failed: {}", fs.ToString());
    }
    for (auto& f : deferred) f();
  }
}

void Coordinator::Shutdown() {
  Deferred deferred;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) return;
    shutting_down_ = true;
    for (Waiter& w : waiters_)
      deferred.push_back([cb = std::move(w.cb)] { cb(ShuttingDownError()); });
    waiters_.clear();
    for (Watch& w : watches_)
      deferred.push_back([cb = std::move(w.cb)] { cb(ShuttingDownError(), 0); });
    watches_.clear();
  }
  for (auto& f : deferred) f();
}

std::string Coordinator::UploadDir() const {
  return (std::filesystem::path(options_.data_dir) / "engines" / "tmp").string();
}

absl::StatusOr<v1::Engine> Coordinator::AddEngine(const std::string& name,
                                                  const std::string& temp_path) {
  ASSIGN_OR_RETURN(std::string sha, net::Sha256OfFile(temp_path));
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(temp_path, ec);
  const auto final_path = std::filesystem::path(options_.data_dir) / "engines" / sha;
  std::filesystem::rename(temp_path, final_path, ec);
  if (ec) return absl::InternalError(Cat("cannot store engine ", sha, ": ", ec.message()));
  std::filesystem::permissions(final_path, std::filesystem::perms::owner_exec,
                               std::filesystem::perm_options::add, ec);
  {
    absl::MutexLock lock(&mu_);
    auto it = engines_.find(sha);
    if (it != engines_.end()) return it->second;
  }
  StoredEngine e{sha, name, size, UnixNow()};
  RETURN_IF_ERROR(store_->PutEngine(e));
  absl::MutexLock lock(&mu_);
  const v1::Engine& out = engines_[sha] = EngineOf(e);
  spdlog::info("engine '{}' stored as {} ({} bytes)", name, sha, size);
  return out;
}

v1::ListEnginesResponse Coordinator::ListEngines() {
  v1::ListEnginesResponse out;
  absl::MutexLock lock(&mu_);
  for (const auto& [sha, e] : engines_) *out.add_engines() = e;
  std::sort(out.mutable_engines()->begin(), out.mutable_engines()->end(),
            [](const v1::Engine& a, const v1::Engine& b) {
              return a.uploaded_unix() < b.uploaded_unix();
            });
  return out;
}

absl::StatusOr<std::string> Coordinator::EnginePath(const std::string& sha256) {
  if (!net::IsSha256Hex(sha256))
    return absl::InvalidArgumentError(
        Cat("engine sha256 must be 64 lowercase hex digits, got '", sha256, "'"));
  absl::MutexLock lock(&mu_);
  if (!engines_.contains(sha256)) return absl::NotFoundError(Cat("no engine with sha256 ", sha256));
  return (std::filesystem::path(options_.data_dir) / "engines" / sha256).string();
}

}  // namespace arbiter::coordinator

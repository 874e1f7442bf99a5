#include "worker/worker.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "base/cpu.h"
#include "base/host.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "base/version.h"
#include "engine/packed_position.h"
#include "engine/perft.h"
#include "engine/perft_hash.h"
#include "engine/perft_lane.h"
#include "engine/perft_path.h"
#include "engine/position.h"
#include "grpcpp/grpcpp.h"
#include "net/client.h"
#include "net/metrics.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/run.pb.h"
#include "proto/arbiter/v1/work_service.grpc.pb.h"
#include "proto/wire_enums.h"
#include "spdlog/spdlog.h"
#include "worker/engine_cache.h"
#include "worker/match_job.h"
#include "worker/source_build.h"

namespace arbiter::worker {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::system_clock::time_point Deadline(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(seconds));
}

bool Retryable(grpc::StatusCode c) {
  return c == grpc::StatusCode::UNAVAILABLE || c == grpc::StatusCode::DEADLINE_EXCEEDED ||
         c == grpc::StatusCode::CANCELLED || c == grpc::StatusCode::RESOURCE_EXHAUSTED ||
         c == grpc::StatusCode::UNKNOWN || c == grpc::StatusCode::INTERNAL;
}

// The root of a perft job, whose castling rooks and variant its packed positions take, or what is
// wrong with it (the packed positions are checked as they are counted: PerftPackedBatch).
absl::StatusOr<Position> PerftJobRoot(const v1::PerftJob& work) {
  absl::StatusOr<Position> root = Position::FromFen(work.root_fen());
  if (!root.ok())
    return absl::InvalidArgumentError(
        Cat("bad root position '", work.root_fen(), "': ", std::string(root.status().message())));
  root->SetChess960(work.chess960());
  return root;
}

}  // namespace

class WorkerMetrics {
 public:
  explicit WorkerMetrics(prometheus::Registry& r)
      : jobs_(net::RegisterCounters(r, "arbiter_worker_jobs_total",
                                    "Jobs this worker finished, by outcome (completed, released, "
                                    "stopped, rejected).")),
        rpcs_(net::RegisterCounters(r, "arbiter_worker_rpcs_total",
                                    "Calls to the coordinator by method and status code.")),
        duration_(net::RegisterHistogram(r, "arbiter_worker_job_duration_seconds",
                                         "Wall time of the jobs this worker ran.",
                                         net::kJobSecondsBuckets)),
        nodes_(net::RegisterCounters(r, "arbiter_worker_perft_nodes_total",
                                     "Perft leaf nodes this worker counted (completed jobs).")
                   .Add({})),
        busy_(net::RegisterGauges(r, "arbiter_worker_busy", "1 while a job runs.").Add({})),
        registered_(net::RegisterGauges(r, "arbiter_worker_registered",
                                        "1 while registered with a reachable coordinator.")
                        .Add({})) {
    net::RegisterGauges(r, "arbiter_worker_perft_path_info",
                        "The copy of the perft counting core this worker's jobs run (label "
                        "path: v2 magic sliders, v3 PEXT, v4 PEXT and the AVX-512 counter).")
        .Add({{"path", ActivePerftPath().name}})
        .Set(1);
  }
  void Job(const char* outcome) { jobs_.Add({{"outcome", outcome}}).Increment(); }
  void Rpc(const char* method, const grpc::Status& s) {
    rpcs_.Add({{"method", method}, {"code", net::StatusCodeName(s.error_code())}}).Increment();
  }
  prometheus::Family<prometheus::Counter>& jobs_;
  prometheus::Family<prometheus::Counter>& rpcs_;
  prometheus::Histogram& duration_;
  prometheus::Counter& nodes_;
  prometheus::Gauge& busy_;
  prometheus::Gauge& registered_;
};

struct Worker::Impl {
  WorkerOptions options;
  std::unique_ptr<WorkerMetrics> metrics;
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::WorkService::Stub> stub;
  std::string worker_id;
  double heartbeat_seconds = 3;
  // The perft hash: the process's shared one (options.shared_hash) or this worker's own; with a
  // shared one, also an own one for the jobs of --verify runs (made at the first of them).
  std::shared_ptr<PerftHash> hash, own_hash;

  PerftHash& HashFor(const v1::PerftJob& work) {
    if (!work.independent() || !options.shared_hash) return *hash;
    if (!own_hash) own_hash = std::make_shared<PerftHash>(options.hash_mb, options.threads);
    return *own_hash;
  }
  std::unique_ptr<EngineCache> cache;
  std::unique_ptr<EngineChecker> checker;
  std::unique_ptr<SourceBuilder> builder;  // null: no compiler, or --no-build
  KeptEngine kept_engine;                  // movegen-check: the run's engine between its jobs
  std::thread reporting;                   // reports the last completed job's result (Execute)
  ~Impl() { AwaitReport(); }
  int cores = 1;  // physical cores: game slots never exceed them

  absl::Mutex mu;
  bool draining ABSL_GUARDED_BY(mu) = false;
  Clock::time_point drain_deadline ABSL_GUARDED_BY(mu);
  grpc::ClientContext* polling ABSL_GUARDED_BY(mu) = nullptr;

  bool Draining() {
    absl::MutexLock lock(&mu);
    return draining;
  }
  void Record(const char* method, const grpc::Status& s) {
    if (metrics) metrics->Rpc(method, s);
  }
  // Sleeps up to `seconds`, waking early when draining starts.
  void Sleep(double seconds) {
    absl::MutexLock lock(&mu);
    mu.AwaitWithTimeout(absl::Condition(&draining), absl::Seconds(seconds));
  }

  int CpuLevel() const { return options.cpu_level > 0 ? options.cpu_level : DetectedCpuLevel(); }

  bool Register() {
    double backoff = 0.1;
    while (!Draining()) {
      v1::RegisterRequest req;
      v1::WorkerInfo& info = *req.mutable_worker();
      info.set_name(options.name.empty() ? HostName() : options.name);
      info.set_cores(std::max(1u, std::thread::hardware_concurrency()));
      info.set_memory_bytes(uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE)));
      if (__builtin_cpu_supports("bmi2")) info.add_cpu_flags("bmi2");
      if (__builtin_cpu_supports("avx2")) info.add_cpu_flags("avx2");
      if (__builtin_cpu_supports("avx512f")) info.add_cpu_flags("avx512f");
      info.set_cpu_level(uint32_t(CpuLevel()));
      info.mutable_labels()->insert(options.labels.begin(), options.labels.end());
      info.set_hostname(HostName());
      info.set_perft_core_path(PerftPathFromString(ActivePerftPath().name));
      info.set_version(Cat("arbiter ", kVersion, " (", kRevision, ")"));
      info.set_threads(options.threads);
      req.set_results_in_flight(1);  // Execute reports while the next job counts
      req.set_perft_lanes(true);     // RunPerftJob counts a job's lane of keys alone
      req.set_job_progress(true);    // heartbeats carry moves played and positions checked
      if (builder) info.set_build_toolchain(builder->toolchain());
      if (options.shared_hash) info.set_hash_group(options.hash_group);
      const std::string_view isolation = match::IsolationName(options.sandbox.isolation);
      info.set_engine_isolation(IsolationFromString(isolation));
      for (const std::string& dir : options.engine_dirs) {
        std::error_code ec;
        const std::filesystem::path real = std::filesystem::weakly_canonical(dir, ec);
        info.add_engine_dirs(ec ? dir : real.string());
      }
      if (options.sandbox.isolation != match::Isolation::kNone) {
        const match::ResourceLimits& l = options.sandbox.limits;
        v1::EngineLimits& out = *info.mutable_engine_limits();
        out.set_memory_mb(l.memory_mb);
        out.set_processes(l.processes);
        out.set_open_files(l.open_files);
        out.set_file_size_mb(l.file_size_mb);
        out.set_cpu_seconds(l.cpu_seconds);
      }
      // The same in the deprecated fields of the same numbers, for coordinators older than
      // `worker`; the enums, which have none there, as their strings.
      req.MergeFromString(info.SerializeAsString());
      req.GetReflection()->MutableUnknownFields(&req)->Clear();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
      req.set_isolation(std::string(isolation));
      req.set_perft_path(ActivePerftPath().name);
#pragma GCC diagnostic pop
      v1::RegisterResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(5));
      grpc::Status s = stub->Register(&ctx, req, &resp);
      Record("Register", s);
      if (s.ok()) {
        worker_id = resp.worker_id();
        if (cache) cache->SetWorkerId(worker_id);
        heartbeat_seconds = resp.heartbeat_seconds() > 0 ? resp.heartbeat_seconds() : 3;
        if (metrics) metrics->registered_.Set(1);
        spdlog::info("worker {}: registered with {} ({} threads, engine isolation: {})", worker_id,
                     options.coordinator, options.threads,
                     match::IsolationName(options.sandbox.isolation));
        return true;
      }
      if (metrics) metrics->registered_.Set(0);
      spdlog::warn("register with {} failed: {}; retrying", options.coordinator, s.error_message());
      Sleep(backoff);
      backoff = std::min(2.0, backoff * 2);
    }
    return false;
  }

  // A perft job's counts into `out`, or why there are none (Cancelled: stopped).
  // `nodes`: the leaves counted so far, as subtrees finish (the heartbeats' progress).
  absl::Status RunPerftJob(const v1::PerftJob& work, const Position& root, std::atomic<bool>& stop,
                           std::atomic<uint64_t>& nodes, v1::CompleteJobRequest& out) {
    std::shared_ptr<PerftTable> job_table;  // held until the job ends
    if (work.hash_mb() > 0 && work.depth() >= 3) job_table = HashFor(work).For(int(work.hash_mb()));
    PerftBatchOptions opts{.depth = int(work.depth()),
                           .threads = options.threads,
                           .hash_mb = 0,  // job_table or none
                           .table = job_table.get(),
                           .distinct = !work.packed_positions().empty(),
                           .stop = &stop,
                           .nodes_done = &nodes,
                           .lane_begin = work.lane_begin(),
                           .lane_end = work.lane_end()};
    absl::StatusOr<std::vector<uint64_t>> counts =
        PerftPackedBatch(work.packed_positions(), root, opts);
    if (!counts.ok()) return counts.status();
    for (uint64_t c : *counts) out.mutable_perft()->add_counts(c);
    return absl::OkStatus();
  }

  // A match job's games into `out`, or why there are none (Cancelled: stopped; with `refusal`
  // set: an engine's bench differs from its declared signature, or fails, or the engine could
  // not play, a fault).
  absl::Status RunGamesJob(const v1::MatchJob& work, std::atomic<bool>& stop,
                           std::atomic<uint64_t>& progress, v1::CompleteJobRequest& out,
                           v1::EngineRefusal& refusal) {
    absl::StatusOr<v1::MatchJobResult> games = RunMatchJob(work, *cache, options.threads, &stop,
                                                           {.sandbox = options.sandbox,
                                                            .engine_dirs = options.engine_dirs,
                                                            .checker = checker.get(),
                                                            .measured_nps = options.measured_nps,
                                                            .cores = cores,
                                                            .builder = builder.get(),
                                                            .cpu_level = CpuLevel(),
                                                            .progress = &progress},
                                                           &refusal);
    if (!games.ok()) return games.status();
    *out.mutable_match() = std::move(*games);
    return absl::OkStatus();
  }

  // Runs one leased job to the end: completed, released (draining) or dropped.
  void Execute(const v1::Job& job, Worker& owner) {
    std::optional<Position> root;
    if (job.has_perft()) {
      absl::StatusOr<Position> checked = PerftJobRoot(job.perft());
      const absl::Status lane = CheckPerftLane({job.perft().lane_begin(), job.perft().lane_end()},
                                               int(job.perft().depth()));
      if (!checked.ok() || !lane.ok()) {
        const absl::Status& why = checked.ok() ? lane : checked.status();
        spdlog::error("job {}: {}; releasing", job.job_id(), why.ToString());
        Release(job, Cat(checked.ok() ? "bad lane in job: " : "bad position in job: ",
                         std::string(why.message())));
        return;
      }
      root = *checked;
    } else if (!job.has_match() && !job.has_movegen_check()) {
      spdlog::error("job {}: neither perft nor match work; releasing", job.job_id());
      Release(job, "job without work");
      return;
    }
    if (!job.has_movegen_check()) kept_engine.Release();
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> progress{0};
    bool release = false, lost = false;
    std::string why;
    absl::Mutex hb_mu;
    bool finished = false;
    if (metrics) metrics->busy_.Set(1);
    const auto start = Clock::now();
    std::thread heartbeat([&] {
      for (;;) {
        {
          absl::MutexLock lock(&hb_mu);
          hb_mu.AwaitWithTimeout(absl::Condition(&finished), absl::Seconds(heartbeat_seconds));
          if (finished) return;
        }
        {
          absl::MutexLock lock(&mu);
          if (draining && Clock::now() > drain_deadline) {
            release = true;
            stop = true;
            return;
          }
        }
        v1::HeartbeatRequest req;
        req.set_worker_id(worker_id);
        req.set_job_id(job.job_id());
        req.set_lease_id(job.lease_id());
        req.set_progress(progress.load(std::memory_order_relaxed));
        v1::HeartbeatResponse resp;
        grpc::ClientContext ctx;
        ctx.set_deadline(Deadline(5));
        grpc::Status s = stub->Heartbeat(&ctx, req, &resp);
        Record("Heartbeat", s);
        if ((s.ok() && resp.stop()) || (!s.ok() && !Retryable(s.error_code()))) {
          why = s.ok() ? resp.reason() : s.error_message();
          lost = true;
          stop = true;
          return;
        }
      }
    });
    v1::CompleteJobRequest req;
    v1::EngineRefusal refusal;
    absl::Status worked;
    if (job.has_match()) {
      worked = RunGamesJob(job.match(), stop, progress, req, refusal);
    } else if (job.has_movegen_check()) {
      absl::StatusOr<v1::MovegenJobResult> r = RunMovegenJob(job.movegen_check(), *cache, &stop,
                                                             {.sandbox = options.sandbox,
                                                              .engine_dirs = options.engine_dirs,
                                                              .builder = builder.get(),
                                                              .cpu_level = CpuLevel(),
                                                              .progress = &progress},
                                                             &kept_engine, job.run_id());
      worked = r.status();
      if (r.ok()) *req.mutable_movegen_check() = std::move(*r);
    } else {
      worked = RunPerftJob(job.perft(), *root, stop, progress, req);
    }
    {
      absl::MutexLock lock(&hb_mu);
      finished = true;
    }
    heartbeat.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (metrics) {
      metrics->busy_.Set(0);
      metrics->duration_.Observe(seconds);
    }
    if (!worked.ok() && !refusal.engine().empty()) {
      // Not this worker's to play (an engine's bench differs or fails), or the engine cannot
      // play (a fault: it could not start, handshake or take its options): the coordinator
      // flags the worker and sends the run's jobs elsewhere, or fails the run.
      spdlog::warn("job {}: refused: {}", job.job_id(), worked.ToString());
      Release(job, Cat("refused: ", std::string(worked.message())), &refusal);
      if (metrics) metrics->Job("refused");
      return;
    }
    if (!worked.ok() && !absl::IsCancelled(worked)) {
      spdlog::warn("job {}: cannot run: {}; releasing", job.job_id(), worked.ToString());
      // A perft job's bad position shows only as it is counted.
      const bool bad = job.has_perft() && absl::IsInvalidArgument(worked);
      Release(job,
              Cat(bad ? "bad position in job: " : "worker error: ", std::string(worked.message())));
      if (metrics) metrics->Job("released");
      return;
    }
    if (!worked.ok()) {
      // A job the coordinator already took back (done elsewhere, run finished or cancelled,
      // lease expired) is not ours to release, even while shutting down.
      if (!lost && (release || Draining())) {
        Release(job, "worker shutting down");
        if (metrics) metrics->Job("released");
      } else {
        spdlog::info("job {}: stopped ({})", job.job_id(), lost ? why : worked.ToString());
        if (metrics) metrics->Job("stopped");
      }
      return;
    }
    req.set_worker_id(worker_id);
    req.set_job_id(job.job_id());
    req.set_lease_id(job.lease_id());
    req.set_seconds(seconds);
    // Reported on a thread of its own: the coordinator answers once the result is durable (its
    // group commit's fsync), and this worker leases and counts its next job meanwhile. One
    // report at a time, so that it holds at most a lease a thread and one more
    // (RegisterRequest.results_in_flight).
    AwaitReport();
    const size_t positions = job.perft().packed_positions().size() / kPackedPositionSize;
    reporting = std::thread(
        [this, &owner, req = std::move(req), positions] { Report(req, positions, owner); });
  }

  // Waits for the result on its way, if any, to be answered (or given up).
  void AwaitReport() {
    if (reporting.joinable()) reporting.join();
  }

  // Sends a completed job's result until the coordinator answers (at most 5 minutes).
  void Report(const v1::CompleteJobRequest& req, size_t positions, Worker& owner) {
    uint64_t total = 0;
    for (uint64_t c : req.perft().counts()) total += c;
    // Retry until the coordinator answers: the same job and lease are counted once.
    double backoff = 0.1;
    const auto give_up = Clock::now() + std::chrono::minutes(5);
    for (;;) {
      v1::CompleteJobResponse resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(Deadline(30));
      grpc::Status s = stub->CompleteJob(&ctx, req, &resp);
      Record("CompleteJob", s);
      if (s.ok()) {
        owner.jobs_completed_++;
        if (metrics) {
          metrics->Job("completed");
          metrics->nodes_.Increment(double(total));
        }
        spdlog::debug("job {}: {} positions, {} nodes, {} games in {:.3f} s", req.job_id(),
                      positions, total, req.match().games_size(), req.seconds());
        return;
      }
      if (!Retryable(s.error_code()) || Clock::now() > give_up) {
        spdlog::warn("job {}: result not accepted: {} ({})", req.job_id(), s.error_message(),
                     net::StatusCodeName(s.error_code()));
        if (metrics) metrics->Job("rejected");
        return;
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(backoff));
      backoff = std::min(2.0, backoff * 2);
    }
  }

  void Release(const v1::Job& job, const std::string& reason,
               const v1::EngineRefusal* refusal = nullptr) {
    v1::ReleaseJobRequest req;
    if (refusal) *req.mutable_refusal() = *refusal;
    req.set_worker_id(worker_id);
    req.set_job_id(job.job_id());
    req.set_lease_id(job.lease_id());
    req.set_reason(reason.substr(0, 4096));
    v1::ReleaseJobResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(5));
    grpc::Status s = stub->ReleaseJob(&ctx, req, &resp);
    Record("ReleaseJob", s);
    if (s.ok()) {
      spdlog::info("job {}: released ({})", job.job_id(), reason);
    } else if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
               s.error_code() == grpc::StatusCode::NOT_FOUND) {
      // The coordinator took the job back already (its run finished, or the lease ended):
      // nothing is lost, there is nothing to give back.
      spdlog::info("job {}: stopped ({}); the coordinator had already taken it back", job.job_id(),
                   reason);
    } else {
      spdlog::warn("job {}: not released ({}): {}", job.job_id(), reason, s.error_message());
    }
  }
};

Worker::Worker(const WorkerOptions& options, prometheus::Registry* registry)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  if (registry) impl_->metrics = std::make_unique<WorkerMetrics>(*registry);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  // A link that drops packets silently (a partition, a node gone) leaves TCP waiting for minutes:
  // a ping every 5 s, unanswered for 5 s, closes the connection and the next call dials again.
  // The coordinator permits it (coordinator/server.cc). At 1,000 workers: 200 pings/s, nothing.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  impl_->channel =
      options.token.empty()
          ? net::Dial(options.coordinator, args)
          : net::Dial(options.coordinator, net::ClientCredentials{options.token, "", "", ""}, args);
  impl_->stub = v1::WorkService::NewStub(impl_->channel);
  std::string cache_dir = options.cache_dir;
  if (cache_dir.empty())
    cache_dir =
        (std::filesystem::temp_directory_path() / Cat("arbiter-engines-", getuid())).string();
  // A worker running as root runs engines as an unprivileged user, who must be able to run them.
  const match::SandboxOptions& box = options.sandbox;
  const int engine_gid =
      geteuid() == 0 && box.isolation != match::Isolation::kNone ? box.root_drops_to : -1;
  impl_->cache = std::make_unique<EngineCache>(cache_dir, impl_->channel, engine_gid,
                                               options.engine_cache_mb << 20);
  impl_->checker = std::make_unique<EngineChecker>(
      box, match::Millis(int64_t(options.bench_timeout_seconds * 1000)));
  impl_->cores = PhysicalCores();
  if (options.build_sources) {
    auto builder = std::make_unique<SourceBuilder>(
        SourceBuilderOptions{.dir = (std::filesystem::path(cache_dir) / "builds").string(),
                             .box = box,
                             .limits = {.wall_seconds = options.build_timeout_seconds,
                                        .disk_bytes = options.build_disk_mb << 20},
                             .cache_bytes = options.build_cache_mb << 20,
                             .engine_gid = engine_gid});
    if (builder->toolchain().empty())
      spdlog::warn("no compiler (cc and make) found: this worker takes no source engines");
    else
      impl_->builder = std::move(builder);
  }
}

Worker::~Worker() = default;

absl::Status Worker::Run() {
  Impl& w = *impl_;
  if (w.options.threads < 1 || w.options.threads > 1024)
    return absl::InvalidArgumentError(Cat("threads must be in 1..1024, got ", w.options.threads));
  if (w.options.hash_mb < 0 || w.options.hash_mb > (1 << 20))
    return absl::InvalidArgumentError(
        Cat("hash must be in 0..1048576 MB, got ", w.options.hash_mb));
  // With --hash the table is allocated now, so that the first job does not wait for it.
  w.hash = w.options.shared_hash
               ? w.options.shared_hash
               : std::make_shared<PerftHash>(w.options.hash_mb, w.options.threads);
  if (!w.hash->ok())
    return absl::ResourceExhaustedError(
        Cat("cannot allocate the perft hash of ", w.options.hash_mb, " MB (--hash)"));
  if (w.options.sandbox.isolation != match::Isolation::kNone)
    if (int stale = match::RemoveStalePrivateDirs(w.options.sandbox); stale > 0)
      spdlog::info("removed {} engine directories left by processes that are gone", stale);
  if (!w.Register()) return absl::OkStatus();
  double backoff = 0.1;
  while (!w.Draining()) {
    v1::AcquireJobRequest req;
    req.set_worker_id(w.worker_id);
    req.set_wait_seconds(w.options.wait_seconds);
    v1::AcquireJobResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline(w.options.wait_seconds + 10));
    {
      absl::MutexLock lock(&w.mu);
      if (w.draining) break;
      w.polling = &ctx;
    }
    grpc::Status s = w.stub->AcquireJob(&ctx, req, &resp);
    {
      absl::MutexLock lock(&w.mu);
      w.polling = nullptr;
    }
    w.Record("AcquireJob", s);
    if (s.ok()) {
      backoff = 0.1;
      if (resp.has_job())
        w.Execute(resp.job(), *this);
      else
        w.kept_engine.Release();  // idle for a whole long poll: no engine held
      continue;
    }
    if (w.Draining()) break;
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      // The coordinator restarted and forgot us.
      if (!w.Register()) break;
      continue;
    }
    if (w.metrics) w.metrics->registered_.Set(0);
    spdlog::warn("acquire from {} failed: {}; retrying", w.options.coordinator, s.error_message());
    w.Sleep(backoff);
    backoff = std::min(2.0, backoff * 2);
    if (w.metrics) w.metrics->registered_.Set(1);
  }
  w.AwaitReport();
  w.kept_engine.Release();
  spdlog::info("worker {}: drained after {} jobs", w.worker_id, jobs_completed());
  return absl::OkStatus();
}

void Worker::Drain() {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->draining) return;
  impl_->draining = true;
  impl_->drain_deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(impl_->options.grace_seconds));
  if (impl_->polling) impl_->polling->TryCancel();
}

}  // namespace arbiter::worker

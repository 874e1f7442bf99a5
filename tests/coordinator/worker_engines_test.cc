// Which worker may run which engine: uploads only on isolating workers, path engines where an
// engine dir allows them, engine threads within a worker's; drained workers; a worker's bench
// refusals and engine faults.
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace arbiter::coordinator {
namespace {

// sam's upload: a shell script as an engine.
absl::StatusOr<v1::Engine> UploadScript(Coordinator& c, const std::filesystem::path& dir) {
  const auto file = dir / "engine.bin";
  std::ofstream(file) << "#!/bin/sh\necho uploaded\n";
  return c.AddEngine("up", file.string(), Caller{"sam", v1::ROLE_SUBMITTER});
}

// Two games of an uploaded engine against the built-in one, at 10+0.1.
v1::SubmitMatchRequest UploadedVsBuiltin(const v1::Engine& engine) {
  v1::SubmitMatchRequest req;
  v1::EngineSpec* a = req.mutable_settings()->add_engines();
  a->set_name("up");
  a->set_sha256(engine.sha256());
  v1::EngineSpec* b = req.mutable_settings()->add_engines();
  b->set_name("builtin");
  b->set_builtin(true);
  req.mutable_settings()->set_tc("10+0.1");
  req.set_games(2);
  return req;
}

// Someone else's uploaded engine goes only to workers that confine engines (namespaces or
// Landlock); an admin's
// run may use any worker.
TEST_F(CoordinatorTest, UploadedEnginesOnlyOnIsolatedWorkers) {
  absl::StatusOr<v1::Engine> engine = UploadScript(*c_, dir_);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const v1::SubmitMatchRequest req = UploadedVsBuiltin(*engine);
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  auto worker = [&](const std::string& name, v1::Isolation isolation) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(4);
    r.mutable_worker()->set_engine_isolation(isolation);
    return c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  };
  const std::string plain = worker("plain", v1::ISOLATION_LIMITS);
  EXPECT_FALSE(Acquire(plain, "w")) << "an unisolated worker must not get an uploaded engine";
  const std::string boxed = worker("boxed", v1::ISOLATION_NAMESPACES);
  std::optional<v1::Job> job = Acquire(boxed, "w");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->match().engines(0).sha256(), engine->sha256());
  // Landlock confines an engine as well (an unprivileged pod's box).
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  const std::string landlocked = worker("landlocked", v1::ISOLATION_LANDLOCK);
  job = Acquire(landlocked, "w");
  ASSERT_TRUE(job) << "a landlock worker gets an uploaded engine";
  EXPECT_EQ(job->match().engines(0).sha256(), engine->sha256());
  // An admin vouches for its own runs.
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"root", v1::ROLE_ADMIN}).ok());
  EXPECT_TRUE(Acquire(plain, "w"));
}

// A worker token does not open every upload: a worker fetches an engine only while it holds a
// lease of a job that runs it, and only under its own token.
TEST_F(CoordinatorTest, AWorkerFetchesAnEngineOnlyForAJobItHolds) {
  absl::StatusOr<v1::Engine> engine = UploadScript(*c_, dir_);
  ASSERT_TRUE(engine.ok()) << engine.status();
  v1::RegisterRequest r;
  r.mutable_worker()->set_threads(1);
  r.mutable_worker()->set_engine_isolation(v1::ISOLATION_LANDLOCK);
  const std::string w = c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  const Caller as_w{"w", v1::ROLE_WORKER};
  EXPECT_EQ(c_->CheckEngineFetch(w, engine->sha256(), as_w).code(),
            absl::StatusCode::kPermissionDenied)
      << "no lease yet";
  const v1::SubmitMatchRequest req = UploadedVsBuiltin(*engine);
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  ASSERT_TRUE(Acquire(w, "w"));
  EXPECT_TRUE(c_->CheckEngineFetch(w, engine->sha256(), as_w).ok());
  EXPECT_FALSE(c_->CheckEngineFetch(w, std::string(64, 'a'), as_w).ok()) << "not its job's engine";
  EXPECT_FALSE(c_->CheckEngineFetch(w, engine->sha256(), Caller{"other", v1::ROLE_WORKER}).ok())
      << "another token's worker id";
}

// A `path` engine goes only to a worker whose --engine-dir holds it; a run no connected worker
// allows is refused at submit (with none connected, the workers decide).
TEST_F(CoordinatorTest, PathEnginesOnlyWhereAWorkersEngineDirAllows) {
  v1::SubmitMatchRequest req;
  v1::EngineSpec* a = req.mutable_settings()->add_engines();
  a->set_name("sf");
  a->set_path("/opt/engines/stockfish");
  v1::EngineSpec* b = req.mutable_settings()->add_engines();
  b->set_name("builtin");
  b->set_builtin(true);
  req.mutable_settings()->set_tc("10+0.1");
  req.set_games(2);
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  ASSERT_TRUE(c_->SubmitMatch(req, sam).ok()) << "no worker connected: accepted";
  auto worker = [&](const std::string& name, std::vector<std::string> dirs) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(4);
    for (const std::string& d : dirs) r.mutable_worker()->add_engine_dirs(d);
    return c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  };
  const std::string games_only = worker("games-only", {"/usr/games"});
  EXPECT_FALSE(Acquire(games_only, "w")) << "/opt/engines is not in its --engine-dir";
  absl::Status refused = c_->SubmitMatch(req, sam).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("/opt/engines/stockfish"), std::string::npos) << refused;
  EXPECT_NE(refused.message().find("/usr/games"), std::string::npos) << refused;
  // A prefix of a directory name is not the directory.
  a->set_path("/usr/gamesX/stockfish");
  EXPECT_EQ(c_->SubmitMatch(req, sam).status().code(), absl::StatusCode::kFailedPrecondition);
  a->set_path("/usr/games/../bin/sh");
  EXPECT_EQ(c_->SubmitMatch(req, sam).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string opt = worker("opt", {"/opt/engines/"});
  std::optional<v1::Job> job = Acquire(opt, "w");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->match().engines(0).path(), "/opt/engines/stockfish");
  a->set_path("/opt/engines/stockfish");
  EXPECT_TRUE(c_->SubmitMatch(req, sam).ok()) << "one connected worker allows it";
}

// Registration: engine directories and limits are bounded; ListWorkers shows what each worker
// said about itself.
TEST_F(CoordinatorTest, WorkersListTheirIsolationDirectoriesAndLimits) {
  v1::RegisterRequest r;
  r.mutable_worker()->set_name("box");
  r.mutable_worker()->set_threads(2);
  r.mutable_worker()->set_engine_isolation(v1::ISOLATION_NAMESPACES);
  r.mutable_worker()->add_engine_dirs("/usr/games");
  r.mutable_worker()->mutable_engine_limits()->set_memory_mb(2048);
  r.mutable_worker()->set_perft_core_path(v1::PERFT_PATH_V3);
  ASSERT_TRUE(c_->Register(r, Caller{"w", v1::ROLE_WORKER}).ok());
  v1::ListWorkersResponse list = c_->ListWorkers({});
  ASSERT_EQ(list.workers_size(), 1);
  const v1::WorkerStatus& w = list.workers(0);
  EXPECT_EQ(w.worker().name(), "box");
  EXPECT_EQ(w.worker().perft_core_path(), v1::PERFT_PATH_V3);
  EXPECT_EQ(w.token(), "w");
  EXPECT_EQ(w.worker().engine_isolation(), v1::ISOLATION_NAMESPACES);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(w.isolation(), "namespaces");
  EXPECT_EQ(w.perft_path(), "v3");
#pragma GCC diagnostic pop
  ASSERT_EQ(w.worker().engine_dirs_size(), 1);
  EXPECT_EQ(w.worker().engine_dirs(0), "/usr/games");
  EXPECT_EQ(w.worker().engine_limits().memory_mb(), 2048u);
  EXPECT_TRUE(w.connected());

  v1::RegisterRequest bad = r;
  bad.mutable_worker()->add_engine_dirs("relative/dir");
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  for (int i = 0; i < 65; ++i) bad.mutable_worker()->add_engine_dirs("/d" + std::to_string(i));
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.mutable_worker()->mutable_engine_limits()->set_memory_mb(uint64_t(1) << 40);
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad = r;
  bad.mutable_worker()->set_hostname(
      std::string(257, 'h'));  // compared with the coordinator's host when planning
  EXPECT_EQ(c_->Register(bad, Caller{"w", v1::ROLE_WORKER}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(c_->ListWorkers({}).workers_size(), 1) << "nothing refused was registered";
}

// A worker older than RegisterRequest.worker sends its declaration in the deprecated top-level
// fields of the same numbers: it registers as before, and ListWorkers shows it in `worker` and,
// for readers older than that, in WorkerStatus's deprecated fields.
TEST_F(CoordinatorTest, AWorkerOlderThanWorkerInfoRegistersWithItsTopLevelFields) {
  v1::RegisterRequest old;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  old.set_name("old");
  old.set_threads(3);
  old.set_isolation("landlock");
  old.set_perft_path("v4");
  old.add_engine_dirs("/opt/engines");
  (*old.mutable_labels())["zone"] = "a";
  old.set_build_toolchain("gcc 12");
#pragma GCC diagnostic pop
  old.set_perft_lanes(true);
  ASSERT_TRUE(c_->Register(old, Caller{"w", v1::ROLE_WORKER}).ok());
  const v1::ListWorkersResponse list = c_->ListWorkers({});
  ASSERT_EQ(list.workers_size(), 1);
  const v1::WorkerStatus& w = list.workers(0);
  EXPECT_EQ(w.worker().name(), "old");
  EXPECT_EQ(w.worker().threads(), 3u);
  EXPECT_EQ(w.worker().engine_isolation(), v1::ISOLATION_LANDLOCK);
  EXPECT_EQ(w.worker().perft_core_path(), v1::PERFT_PATH_V4);
  ASSERT_EQ(w.worker().engine_dirs_size(), 1);
  EXPECT_EQ(w.worker().labels().at("zone"), "a");
  EXPECT_EQ(w.worker().build_toolchain(), "gcc 12");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(w.name(), "old");
  EXPECT_EQ(w.threads(), 3u);
  EXPECT_EQ(w.isolation(), "landlock");
  EXPECT_EQ(w.perft_path(), "v4");
  EXPECT_EQ(w.labels().at("zone"), "a");
  EXPECT_EQ(w.build_toolchain(), "gcc 12");
#pragma GCC diagnostic pop
}

// An older worker's isolation string gates uploaded engines as the enum does: "landlock" gets
// them; a spelling the coordinator does not know, like an enum value it does not know, reads as
// unspecified and confines nothing.
TEST_F(CoordinatorTest, AnOldWorkersIsolationStringGatesUploadedEngines) {
  absl::StatusOr<v1::Engine> engine = UploadScript(*c_, dir_);
  ASSERT_TRUE(engine.ok()) << engine.status();
  const v1::SubmitMatchRequest req = UploadedVsBuiltin(*engine);
  ASSERT_TRUE(c_->SubmitMatch(req, Caller{"sam", v1::ROLE_SUBMITTER}).ok());
  auto old_worker = [&](const std::string& name, const std::string& isolation) {
    v1::RegisterRequest r;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    r.set_name(name);
    r.set_threads(4);
    r.set_isolation(isolation);
#pragma GCC diagnostic pop
    return c_->Register(r, Caller{"w", v1::ROLE_WORKER})->worker_id();
  };
  const std::string odd = old_worker("a-odd", "Namespaces");
  EXPECT_FALSE(Acquire(odd, "w")) << "an unknown isolation must not get an uploaded engine";
  v1::RegisterRequest future;
  future.mutable_worker()->set_name("b-future");
  future.mutable_worker()->set_threads(4);
  future.mutable_worker()->set_engine_isolation(v1::Isolation(9));
  const std::string later = c_->Register(future, Caller{"w", v1::ROLE_WORKER})->worker_id();
  EXPECT_FALSE(Acquire(later, "w")) << "an unknown isolation must not get an uploaded engine";
  const std::string boxed = old_worker("c-boxed", "landlock");
  std::optional<v1::Job> job = Acquire(boxed, "w");
  ASSERT_TRUE(job) << "an older landlock worker gets an uploaded engine";
  EXPECT_EQ(job->match().engines(0).sha256(), engine->sha256());

  const v1::ListWorkersResponse list = c_->ListWorkers({});
  ASSERT_EQ(list.workers_size(), 3);
  EXPECT_EQ(list.workers(0).worker().engine_isolation(), v1::ISOLATION_UNSPECIFIED);
  EXPECT_EQ(list.workers(1).worker().engine_isolation(), v1::ISOLATION_UNSPECIFIED);
  EXPECT_EQ(list.workers(2).worker().engine_isolation(), v1::ISOLATION_LANDLOCK);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  EXPECT_EQ(list.workers(0).isolation(), "");
  EXPECT_EQ(list.workers(2).isolation(), "landlock");
#pragma GCC diagnostic pop
}

// A drained worker gets no new job (the one it holds stays leased); undone, it gets work again.
// ListWorkers shows the runs of its leases.
TEST_F(CoordinatorTest, DrainedWorkersGetNoNewJobs) {
  const std::string w = Register("host-a");
  const v1::Run run = Submit(4, 4);
  ASSERT_TRUE(Acquire(w));
  v1::DrainWorkersRequest drain;
  drain.set_name("host-a");
  absl::StatusOr<v1::ListWorkersResponse> drained = c_->DrainWorkers(drain);
  ASSERT_TRUE(drained.ok()) << drained.status();
  ASSERT_EQ(drained->workers_size(), 1);
  EXPECT_TRUE(drained->workers(0).draining());
  ASSERT_EQ(drained->workers(0).leased_runs_size(), 1);
  EXPECT_EQ(drained->workers(0).leased_runs(0), run.id());
  EXPECT_FALSE(Acquire(w)) << "draining: no new lease";
  EXPECT_EQ(c_->GetRun(run.id())->jobs().leased(), 1u) << "its job stays leased";
  drain.set_undo(true);
  ASSERT_TRUE(c_->DrainWorkers(drain).ok());
  EXPECT_TRUE(Acquire(w));
  drain.set_name("nobody");
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kNotFound);
  drain.set_worker_id(w);
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kInvalidArgument)
      << "a name or an id, not both";
  drain.clear_worker_id();
  drain.set_name(std::string(257, 'x'));
  EXPECT_EQ(c_->DrainWorkers(drain).status().code(), absl::StatusCode::kInvalidArgument);
}

// A match of two builtin engines with `options` on the first.
v1::SubmitMatchRequest BuiltinMatch(std::map<std::string, std::string> options = {}) {
  v1::SubmitMatchRequest req;
  for (const char* name : {"a", "b"}) {
    v1::EngineSpec* e = req.mutable_settings()->add_engines();
    e->set_name(name);
    e->set_builtin(true);
  }
  for (const auto& [k, v] : options)
    (*req.mutable_settings()->mutable_engines(0)->mutable_options())[k] = v;
  req.mutable_settings()->set_tc("10+0.1");
  req.set_games(4);
  req.mutable_settings()->set_pairs_per_job(1);
  return req;
}

// A worker that refuses a job for its engine's bench is flagged (ListWorkers), gets no more of
// the run's jobs while another worker does, and the run shows the refusal; when every connected
// worker refused, the run fails with the reason. A refusal out of bounds is INVALID_ARGUMENT.
TEST_F(CoordinatorTest, BenchRefusalFlagsTheWorkerAndExcludesItFromTheRun) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  v1::SubmitMatchRequest req = BuiltinMatch();
  req.mutable_settings()->mutable_engines(0)->set_bench(999);
  ASSERT_TRUE(c_->SubmitMatch(req, sam).ok());
  auto worker = [&](const std::string& name) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(2);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string bad = worker("bad"), good = worker("good");
  std::optional<v1::Job> job = Acquire(bad, "w-bad");
  ASSERT_TRUE(job);
  v1::ReleaseJobRequest rel;
  rel.set_worker_id(bad);
  rel.set_job_id(job->job_id());
  rel.set_lease_id(job->lease_id());
  v1::EngineRefusal& refusal = *rel.mutable_refusal();
  refusal.set_engine(std::string(65, 'x'));
  EXPECT_EQ(c_->ReleaseJob(rel, Caller{"w-bad", v1::ROLE_WORKER}).code(),
            absl::StatusCode::kInvalidArgument);
  refusal.set_engine("a");
  refusal.set_declared_bench(999);
  refusal.set_measured_bench(555);
  refusal.set_reason("bench signature 555 differs from the declared 999");
  ASSERT_TRUE(c_->ReleaseJob(rel, Caller{"w-bad", v1::ROLE_WORKER}).ok());
  EXPECT_FALSE(Acquire(bad, "w-bad")) << "a worker that refused the run gets none of its jobs";
  ASSERT_TRUE(Acquire(good, "w-good"));
  const v1::ListWorkersResponse listed = c_->ListWorkers({});
  for (const v1::WorkerStatus& w : listed.workers())
    EXPECT_EQ(w.flags_size(), w.worker().name() == "bad" ? 1 : 0) << w.DebugString();
  v1::ListRunsResponse runs = *c_->ListRuns({});
  ASSERT_EQ(runs.runs_size(), 1);
  EXPECT_EQ(runs.runs(0).engines_size(), 0) << "a list carries summaries, not engine reports";
  const v1::Run run = *c_->GetRun(runs.runs(0).id());
  EXPECT_EQ(run.state(), v1::RUN_STATE_RUNNING);
  ASSERT_EQ(run.refusals_size(), 1);
  EXPECT_EQ(run.refusals(0).worker_name(), "bad");
  EXPECT_EQ(run.engines(0).declared_bench(), 999u);
  // The good worker refuses too: nobody is left, the run fails naming the cause.
  std::optional<v1::Job> held = Acquire(good, "w-good");
  ASSERT_TRUE(held);
  rel.set_worker_id(good);
  rel.set_job_id(held->job_id());
  rel.set_lease_id(held->lease_id());
  ASSERT_TRUE(c_->ReleaseJob(rel, Caller{"w-good", v1::ROLE_WORKER}).ok());
  const v1::Run failed = c_->ListRuns({})->runs(0);
  EXPECT_EQ(failed.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(failed.message().find("bench signature 555 differs from the declared 999"),
            std::string::npos)
      << failed.message();
}

// An engine that cannot start or take its options on a worker is a fault, not games: in the
// run's first job it fails the run at once, naming the engine, the worker and its message; after
// a job is done, the first worker's fault only excludes that worker, and the same engine's fault
// on a second worker fails the run.
TEST_F(CoordinatorTest, EngineFaultFailsTheRunAtTheFirstJobOrOnASecondWorker) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  auto worker = [&](const std::string& name) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(1);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string a = worker("a"), b = worker("b"), c = worker("c");
  auto fault = [&](const std::string& id, const std::string& name, const v1::Job& job) {
    v1::ReleaseJobRequest rel;
    rel.set_worker_id(id);
    rel.set_job_id(job.job_id());
    rel.set_lease_id(job.lease_id());
    v1::EngineRefusal& refusal = *rel.mutable_refusal();
    refusal.set_engine("a");
    refusal.set_fault(true);
    refusal.set_reason("a: cannot start engine: exec '/usr/games/stokfish': No such file");
    return c_->ReleaseJob(rel, Caller{"w-" + name, v1::ROLE_WORKER});
  };

  const uint64_t first = c_->SubmitMatch(BuiltinMatch(), sam)->id();
  std::optional<v1::Job> job = Acquire(a, "w-a");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(a, "a", *job).ok());
  v1::Run run = *c_->GetRun(first);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'a' failed on worker a in the run's first job: a: cannot "
                               "start engine: exec '/usr/games/stokfish'"),
            std::string::npos)
      << run.message();
  EXPECT_EQ(run.match().result().games(), 0u);

  const uint64_t second = c_->SubmitMatch(BuiltinMatch(), sam)->id();
  job = Acquire(a, "w-a");
  ASSERT_TRUE(job);
  ASSERT_EQ(job->run_id(), second);
  v1::CompleteJobRequest done;
  done.set_worker_id(a);
  done.set_job_id(job->job_id());
  done.set_lease_id(job->lease_id());
  *done.mutable_match() = LosingPairs(*job);
  std::promise<absl::StatusOr<v1::CompleteJobResponse>> p;
  c_->CompleteJob(
      done, [&](absl::StatusOr<v1::CompleteJobResponse> r) { p.set_value(r); },
      Caller{"w-a", v1::ROLE_WORKER});
  ASSERT_TRUE(p.get_future().get().ok());
  job = Acquire(b, "w-b");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(b, "b", *job).ok());
  EXPECT_EQ(c_->GetRun(second)->state(), v1::RUN_STATE_RUNNING) << "one worker's fault";
  EXPECT_FALSE(Acquire(b, "w-b")) << "the faulty worker gets none of the run's jobs";
  job = Acquire(c, "w-c");
  ASSERT_TRUE(job);
  ASSERT_TRUE(fault(c, "c", *job).ok());
  run = *c_->GetRun(second);
  EXPECT_EQ(run.state(), v1::RUN_STATE_FAILED);
  EXPECT_NE(run.message().find("engine 'a' failed on worker c as on worker b"), std::string::npos)
      << run.message();
  EXPECT_EQ(run.match().result().games(), 2u) << "only the played job's games";
}

// Engines' Threads x concurrency never exceed a worker's threads: refused at submit with the
// numbers when no connected worker has enough, and a job whose game needs more threads than a
// worker declared never goes to it.
TEST_F(CoordinatorTest, EngineThreadsNeverOversubscribeAWorker) {
  const Caller sam{"sam", v1::ROLE_SUBMITTER};
  auto worker = [&](const std::string& name, uint32_t threads) {
    v1::RegisterRequest r;
    r.mutable_worker()->set_name(name);
    r.mutable_worker()->set_threads(threads);
    return c_->Register(r, Caller{"w-" + name, v1::ROLE_WORKER})->worker_id();
  };
  const std::string small = worker("small", 2);
  absl::StatusOr<v1::Run> refused = c_->SubmitMatch(BuiltinMatch({{"Threads", "4"}}), sam);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("Threads=4 but no connected worker has more than 2"),
            std::string::npos)
      << refused.status();
  v1::SubmitMatchRequest two = BuiltinMatch({{"Threads", "2"}});
  two.mutable_settings()->set_concurrency(2);
  refused = c_->SubmitMatch(two, sam);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("concurrency 2 x Threads 2 = 4 threads"),
            std::string::npos)
      << refused.status();
  EXPECT_EQ(c_->SubmitMatch(BuiltinMatch({{"Threads", "0"}}), sam).status().code(),
            absl::StatusCode::kInvalidArgument);
  const std::string big = worker("big", 8);
  ASSERT_TRUE(c_->SubmitMatch(BuiltinMatch({{"Threads", "4"}}), sam).ok());
  EXPECT_FALSE(Acquire(small, "w-small")) << "a 4-thread game on a 2-thread worker";
  EXPECT_TRUE(Acquire(big, "w-big"));
}

}  // namespace
}  // namespace arbiter::coordinator

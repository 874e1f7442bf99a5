// The worker's engine policy: `path` engines only from its --engine-dir directories.
#include "worker/match_job.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace arbiter::worker {
namespace {

TEST(EngineDir, OnlyPathsInsideTheAllowedDirectories) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arbiter-engine-dir-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "engines");
  std::filesystem::create_directories(dir / "enginesX");
  std::ofstream(dir / "engines" / "good") << "#!/bin/sh\n";
  std::ofstream(dir / "enginesX" / "evil") << "#!/bin/sh\n";
  std::filesystem::create_symlink(dir / "enginesX" / "evil", dir / "engines" / "link");
  const std::vector<std::string> allowed = {(dir / "engines").string()};

  EXPECT_TRUE(CheckEngineDir("a", (dir / "engines" / "good").string(), allowed).ok());
  EXPECT_TRUE(CheckEngineDir("a", "/tmp/anything", {}).ok());  // no list: any path
  for (const std::string& bad :
       {(dir / "enginesX" / "evil").string(),
        (dir / "engines" / ".." / "enginesX" / "evil").string(),
        (dir / "engines" / "link").string(), (dir / "engines" / "missing").string()}) {
    absl::Status st = CheckEngineDir("a", bad, allowed);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << bad;
    EXPECT_NE(st.message().find("is not in an engine directory of this worker"), std::string::npos)
        << st;
  }
  std::filesystem::remove_all(dir);
}

// A refused path is never started: the job is a fault of that engine, named, and no game of it
// is reported.
TEST(EngineDir, ARefusedEngineMakesTheJobAFault) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no /usr/games/stockfish"
                 << " (scripts/install-deps.sh installs it)";
  v1::MatchJob job;
  job.set_tc("1+0.01");
  job.set_pairs(1);
  job.mutable_rules()->set_max_moves(5);
  v1::EngineSpec* a = job.add_engines();
  a->set_name("a");
  a->set_path("/usr/games/stockfish");
  v1::EngineSpec* b = job.add_engines();
  b->set_name("b");
  b->set_path("/bin/sh");
  EngineCache cache(std::filesystem::temp_directory_path().string(), nullptr);
  v1::EngineRefusal refusal;
  absl::StatusOr<v1::MatchJobResult> r =
      RunMatchJob(job, cache, 1, nullptr, {.engine_dirs = {"/usr/games"}}, &refusal);
  ASSERT_FALSE(r.ok()) << r->DebugString();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(refusal.fault());
  EXPECT_EQ(refusal.engine(), "b");
  EXPECT_NE(refusal.reason().find("is not in an engine directory of this worker (/usr/games)"),
            std::string::npos)
      << refusal.reason();
}

// An engine that cannot start (a misspelled path) or take its options makes the job a fault
// naming the engine and why, before any game is reported; the other engine's games are not
// counted either.
TEST(EngineFault, AnEngineThatCannotStartOrTakeItsOptionsIsAFaultNotAGame) {
  if (access("/usr/games/stockfish", X_OK) != 0)
    GTEST_FAIL() << "no /usr/games/stockfish"
                 << " (scripts/install-deps.sh installs it)";
  EngineCache cache(std::filesystem::temp_directory_path().string(), nullptr);
  auto run = [&](const std::string& path, const std::string& option, const std::string& value,
                 v1::EngineRefusal& refusal) {
    v1::MatchJob job;
    job.set_tc("depth=1");
    job.set_pairs(2);
    v1::EngineSpec* a = job.add_engines();
    a->set_name("sf");
    a->set_path(path);
    if (!option.empty()) (*a->mutable_options())[option] = value;
    v1::EngineSpec* b = job.add_engines();
    b->set_name("other");
    b->set_path("/usr/games/stockfish");
    return RunMatchJob(job, cache, 1, nullptr, {}, &refusal);
  };
  v1::EngineRefusal missing;
  absl::StatusOr<v1::MatchJobResult> r = run("/usr/games/stokfish", "", "", missing);
  ASSERT_FALSE(r.ok()) << r->DebugString();
  EXPECT_TRUE(missing.fault());
  EXPECT_EQ(missing.engine(), "sf");
  EXPECT_NE(missing.reason().find("/usr/games/stokfish"), std::string::npos) << missing.reason();

  // With a declared bench the checker meets the missing binary first: a fault too.
  v1::MatchJob benched;
  benched.set_tc("depth=1");
  benched.set_pairs(1);
  v1::EngineSpec* a = benched.add_engines();
  a->set_name("sf");
  a->set_path("/usr/games/stokfish");
  a->set_bench(123456);
  v1::EngineSpec* b = benched.add_engines();
  b->set_name("other");
  b->set_path("/usr/games/stockfish");
  EngineChecker checker(match::SandboxOptions{}, match::Millis(10000));
  v1::EngineRefusal unreadable;
  r = RunMatchJob(benched, cache, 1, nullptr, {.checker = &checker}, &unreadable);
  ASSERT_FALSE(r.ok()) << r->DebugString();
  EXPECT_TRUE(unreadable.fault());
  EXPECT_EQ(unreadable.engine(), "sf");
  EXPECT_NE(unreadable.reason().find("cannot read '/usr/games/stokfish'"), std::string::npos)
      << unreadable.reason();

  v1::EngineRefusal option;
  r = run("/usr/games/stockfish", "Hsh", "16", option);
  ASSERT_FALSE(r.ok()) << r->DebugString();
  EXPECT_TRUE(option.fault());
  EXPECT_EQ(option.engine(), "sf");
  EXPECT_NE(option.reason().find("no option 'Hsh'"), std::string::npos) << option.reason();
  EXPECT_NE(option.reason().find("Hash (spin 1.."), std::string::npos) << option.reason();

  v1::EngineRefusal fine;
  r = run("/usr/games/stockfish", "hash", "16", fine);  // names are case-insensitive
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->games_size(), 4);
  EXPECT_FALSE(fine.fault());
}

// A run's limits tighten the worker's, never loosen them; unset ones keep the worker's.
TEST(EngineLimits, ARunCanOnlyTightenTheWorkersLimits) {
  match::SandboxOptions worker;
  worker.limits = {.memory_mb = 1024, .processes = 64, .open_files = 0, .file_size_mb = 16};
  v1::EngineLimits run;
  run.set_memory_mb(4096);  // looser: ignored
  run.set_processes(8);     // tighter: taken
  run.set_open_files(100);  // the worker has none: taken
  run.set_file_size_mb(0);  // unset: the worker's
  const match::ResourceLimits got = WithRunLimits(worker, run).limits;
  EXPECT_EQ(got.memory_mb, 1024u);
  EXPECT_EQ(got.processes, 8u);
  EXPECT_EQ(got.open_files, 100u);
  EXPECT_EQ(got.file_size_mb, 16u);
  EXPECT_EQ(got.cpu_seconds, worker.limits.cpu_seconds);
}

}  // namespace
}  // namespace arbiter::worker

// Runs a match job on a worker: game pairs between two UCI engines, arbitrated by the match
// library's game loop (clocks, illegal moves, crashes), on `concurrency` engine pairs at once.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/engine.pb.h"
#include "proto/arbiter/v1/work_service.pb.h"
#include "worker/engine_cache.h"
#include "worker/engine_check.h"
#include "worker/source_build.h"

namespace arbiter::worker {

// The games in pair order (both games of each pair). CANCELLED when `stop` became true.
// How this worker starts engines.
struct EngineHost {
  match::SandboxOptions sandbox;  // every engine process runs in it
  // `path` engines must lie in one of these directories (symlinks resolved); empty: any path.
  std::vector<std::string> engine_dirs;
  // Checks each engine (sha256; bench when the job declares a signature) before the first game;
  // null: no checks (then declared signatures and scaled clocks cannot be honoured: refused).
  EngineChecker* checker = nullptr;
  // This worker's speed for scaled clocks, nodes/s, instead of measuring it (0: measure).
  uint64_t measured_nps = 0;
  // Game slots never exceed this many cores (0: no cap beyond the worker's threads).
  int cores = 0;
  // Builds source engines (EngineSpec.source_tree) for `cpu_level`; null: this worker cannot,
  // and such an engine is refused (a fault naming why).
  SourceBuilder* builder = nullptr;
  int cpu_level = 1;
  // The job's work done so far, for heartbeats (RegisterRequest.job_progress): moves played in
  // a match job's games, positions checked in a movegen-check job. Null: not counted.
  std::atomic<uint64_t>* progress = nullptr;
};

// Physical cores this process may run on (its CPU affinity, hyperthread siblings counted once);
// at least 1.
int PhysicalCores();

// FAILED_PRECONDITION naming the engine when `path` (after resolving symlinks) is not inside one
// of `dirs`; OK when `dirs` is empty.
absl::Status CheckEngineDir(const std::string& name, const std::string& path,
                            const std::vector<std::string>& dirs);

// `box` with each of the run's limits that is set and tighter than the worker's in its place: a
// run can tighten the worker's limits, never loosen them. (Limits apply only where the worker
// isolates engines at all.)
match::SandboxOptions WithRunLimits(match::SandboxOptions box, const v1::EngineLimits& run);

// A job the worker will not play because of an engine (its bench differs from the declared
// signature or fails, its Threads need more cores than the worker has, its speed gives a clock
// scale out of range) is FAILED_PRECONDITION with `refusal` filled in (when not null). So is a
// job in which an engine could not play a game (match::Unplayed: it could not start, handshake
// or take its options, or exited before its first move), with `refusal.fault` set: no slot
// starts another game and none of the job's games is reported.
absl::StatusOr<v1::MatchJobResult> RunMatchJob(const v1::MatchJob& job, EngineCache& cache,
                                               int concurrency, const std::atomic<bool>* stop,
                                               const EngineHost& host = {},
                                               v1::EngineRefusal* refusal = nullptr);

// One engine process kept from one movegen-check job to the next of the same run and engine, so
// that a worker starts the engine once per run, not once per job (Stockfish takes 0.1-0.3 s to
// start). Never shared across runs; quit when a job of another kind or run comes, when a long
// poll ends without work, on a fault and when the worker stops.
class KeptEngine {
 public:
  ~KeptEngine() { Release(); }
  // The kept engine when `key` matches, else a new one (the old one quit).
  match::UciEngine& For(const std::string& key, const match::EngineSpec& spec,
                        const match::SandboxOptions& box);
  void Release();

 private:
  std::string key_;
  std::unique_ptr<match::UciEngine> engine_;
};

// A movegen-check job: the engine's perft against arbiter's on each position (descending on a
// difference). An engine that does not speak the dialect (or may not run here) gives a result
// with `error` set; CANCELLED when `stop` was set. With `kept`, the engine comes from it and stays
// running for the run's next job.
absl::StatusOr<v1::MovegenJobResult> RunMovegenJob(const v1::MovegenJob& job, EngineCache& cache,
                                                   const std::atomic<bool>* stop,
                                                   const EngineHost& host = {},
                                                   KeptEngine* kept = nullptr, uint64_t run_id = 0);

}  // namespace arbiter::worker

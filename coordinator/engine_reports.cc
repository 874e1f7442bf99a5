// What workers report about a run's engines: the binaries they ran and their bench signatures,
// the clock scales they used, and the jobs they refused or could not play because the engine
// failed (those workers get none of the run's jobs again; a fault in the first job, or on a
// second worker, fails the run).
#include "coordinator/engine_reports.h"

#include "base/strings.h"
#include "coordinator/coordinator.h"
#include "net/sha256.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {

// The run's engines as submitted and as the workers found them, its clock scales and refusals.
void FillEngineReports(const Run& run, v1::Run& out) {
  const google::protobuf::RepeatedPtrField<v1::EngineSpec>* engines = nullptr;
  int64_t scale_nps = 0;
  if (out.has_match()) {
    engines = &out.match().request().settings().engines();
    scale_nps = out.match().request().settings().scale_nps();
  } else if (out.has_tournament()) {
    engines = &out.tournament().request().settings().engines();
    scale_nps = out.tournament().request().settings().scale_nps();
  }
  if (!engines) return;
  for (const v1::EngineSpec& e : *engines) {
    v1::RunEngine& r = *out.add_engines();
    r.set_name(e.name());
    r.set_declared_bench(e.bench());
    switch (e.source_case()) {
      case v1::EngineSpec::kBuiltin:
        r.set_source("builtin");
        break;
      case v1::EngineSpec::kPath:
        r.set_source("path");
        r.set_path(e.path());
        break;
      case v1::EngineSpec::kSha256:
        r.set_source("upload");
        r.set_sha256(e.sha256());
        break;
      case v1::EngineSpec::kSourceTree:
        r.set_source("source");
        *r.mutable_source_tree() = e.source_tree();
        break;
      default:
        break;
    }
    for (const auto& [name, seen] : run.engines_seen) {
      if (name != e.name()) continue;
      for (const std::string& h : seen.sha256s) r.add_sha256s(h);
      if (r.sha256().empty() && !seen.sha256s.empty()) r.set_sha256(seen.sha256s[0]);
      r.set_measured_bench(seen.bench);
    }
  }
  if (scale_nps > 0) {
    v1::ClockScaleSpread& c = *out.mutable_clock_scale();
    c.set_reference_nps(scale_nps);
    c.set_workers(uint32_t(run.scaled_workers.size()));
    c.set_min_factor(run.scale_min);
    c.set_max_factor(run.scale_max);
    c.set_min_nps(run.nps_min);
    c.set_max_nps(run.nps_max);
  }
  for (const v1::EngineRefusal& r : run.refusals) *out.add_refusals() = r;
}
absl::Status CheckSourceTree(const v1::EngineSpec& e,
                             const std::function<bool(const std::string&)>& engine_known,
                             bool unknown_is_invalid) {
  const v1::SourceTree& t = e.source_tree();
  const std::string who = Cat("engine '", e.name(), "': ");
  if (!net::IsSha256Hex(t.sha256()))
    return absl::InvalidArgumentError(
        Cat(who, "source_tree.sha256 must be 64 lowercase hex digits"));
  if (engine_known && !engine_known(t.sha256())) {
    const std::string m = Cat(who, "no source archive with sha256 ", t.sha256(), " was uploaded");
    return unknown_is_invalid ? absl::InvalidArgumentError(m) : absl::NotFoundError(m);
  }
  if (t.build().size() > 1024)
    return absl::InvalidArgumentError(Cat(who, "build must have at most 1024 bytes"));
  for (unsigned char c : t.build())
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return absl::InvalidArgumentError(Cat(who, "build holds a control character"));
  const std::string& b = t.binary();
  bool climbs = b.empty() ? false : b[0] == '/';
  for (std::string_view part : Split(b, '/')) climbs |= part == "..";
  if (b.size() > 256 || climbs)
    return absl::InvalidArgumentError(
        Cat(who, "binary must be a path inside the tree of at most 256 bytes, got '",
            b.substr(0, 64), "'"));
  if (t.origin().size() > 256 || t.revision().size() > 256)
    return absl::InvalidArgumentError(
        Cat(who, "source origin and revision must have at most 256 bytes"));
  return absl::OkStatus();
}

void Coordinator::NoteEngineReportLocked(Run& run, const std::string& worker_id,
                                         const v1::MatchJobResult& result) {
  for (const v1::EngineCheck& c : result.engine_checks()) {
    auto it = std::find_if(run.engines_seen.begin(), run.engines_seen.end(),
                           [&](const auto& e) { return e.first == c.name(); });
    if (it == run.engines_seen.end()) {
      if (run.engines_seen.size() >= 128) continue;
      it = run.engines_seen.insert(run.engines_seen.end(), {c.name(), {}});
    }
    Run::EngineSeen& seen = it->second;
    if (!c.sha256().empty() && seen.sha256s.size() < 8 &&
        std::find(seen.sha256s.begin(), seen.sha256s.end(), c.sha256()) == seen.sha256s.end())
      seen.sha256s.push_back(c.sha256());
    if (c.bench() > 0) seen.bench = c.bench();
  }
  if (result.has_clock_scale()) {
    const v1::ClockScale& s = result.clock_scale();
    const bool first = run.scaled_workers.empty();
    run.scaled_workers.insert(worker_id);
    run.scale_min = first ? s.factor() : std::min(run.scale_min, s.factor());
    run.scale_max = first ? s.factor() : std::max(run.scale_max, s.factor());
    run.nps_min = first ? s.measured_nps() : std::min(run.nps_min, s.measured_nps());
    run.nps_max = first ? s.measured_nps() : std::max(run.nps_max, s.measured_nps());
  }
}

absl::Status Coordinator::SourceBenchLocked(Run& run, const Job& job, WorkerInfo& worker,
                                            const v1::CompleteJobRequest& request,
                                            std::vector<RunUpdate>& updates) {
  const v1::MatchJobResult& result = request.match();
  v1::Job work;
  run.handler->FillWork(job, work);
  for (const v1::EngineCheck& c : result.engine_checks()) {
    if (c.bench() == 0) continue;
    const v1::EngineSpec* spec = nullptr;
    for (const v1::EngineSpec& e : work.match().engines())
      if (e.name() == c.name() && e.source_case() == v1::EngineSpec::kSourceTree) spec = &e;
    if (!spec) continue;
    auto it = std::find_if(run.engines_seen.begin(), run.engines_seen.end(),
                           [&](const auto& e) { return e.first == c.name(); });
    if (it == run.engines_seen.end()) {
      if (run.engines_seen.size() >= 128) continue;
      it = run.engines_seen.insert(run.engines_seen.end(), {c.name(), {}});
    }
    uint64_t& reference = it->second.bench;
    if (reference == 0 || reference == c.bench()) {
      reference = c.bench();
      continue;
    }
    v1::EngineRefusal refusal;
    refusal.set_engine(c.name());
    refusal.set_declared_bench(spec->bench());
    refusal.set_measured_bench(c.bench());
    refusal.set_sha256(c.sha256());
    refusal.set_reason(Cat("this worker's build has the bench signature ", c.bench(),
                           ", other workers' builds ", reference, " (sha256 of its build ",
                           c.sha256().substr(0, 12), ")"));
    RefusedLocked(run, worker, request.worker_id(), refusal, updates);
    return absl::FailedPreconditionError(Cat("engine '", c.name(), "': ", refusal.reason()));
  }
  return absl::OkStatus();
}

void Coordinator::RefusedLocked(Run& run, WorkerInfo& worker, const std::string& worker_id,
                                const v1::EngineRefusal& refusal, std::vector<RunUpdate>& updates) {
  const std::string what = Cat("run ", run.id, ", engine '", refusal.engine(),
                               "': ", refusal.reason().empty() ? "refused" : refusal.reason());
  spdlog::warn("worker {} ({}) refused a job: {}", worker_id, worker.name, what);
  if (worker.flags.size() == kMaxWorkerFlags) worker.flags.erase(worker.flags.begin());
  worker.flags.push_back(what);
  if (!run.refused_workers.insert(worker_id).second) return;
  // A fault of the engine (it could not start, handshake or take its options) fails the run
  // when it comes from the run's first job (no job done yet: every worker would meet it) or is
  // the second worker's fault of the same engine.
  std::string other;
  for (const v1::EngineRefusal& r : run.refusals)
    if (r.fault() && r.engine() == refusal.engine() && r.worker_id() != worker_id)
      other = r.worker_name();
  if (run.refusals.size() < 64) {
    v1::EngineRefusal& r = run.refusals.emplace_back(refusal);
    r.set_worker_id(worker_id);
    r.set_worker_name(worker.name);
  }
  if (IsTerminal(run.state)) return;
  if (refusal.fault() && (run.jobs_done == 0 || !other.empty())) {
    FinishRunLocked(run, v1::RUN_STATE_FAILED,
                    Cat("engine '", refusal.engine(), "' failed on worker ", worker.name,
                        other.empty() ? " in the run's first job" : Cat(" as on worker ", other),
                        ": ", refusal.reason()),
                    updates);
    return;
  }
  // Nobody left to play it: the run fails with the reason rather than waiting for ever.
  const v1::ListWorkersResponse connected = workers_.List(/*all=*/false);
  for (const v1::WorkerStatus& s : connected.workers())
    if (!s.draining() && !run.refused_workers.contains(s.worker_id())) return;
  FinishRunLocked(run, v1::RUN_STATE_FAILED,
                  Cat("every connected worker refused the run's engines; worker ", worker.name,
                      ": engine '", refusal.engine(), "': ", refusal.reason()),
                  updates);
}

}  // namespace arbiter::coordinator

// The coordinator's side of a match run's residual check (coordinator/residuals.h counts and
// judges; docs/residuals.md): a set-aside worker and its token take no more of the run's jobs,
// the verdict is stored so that a restart keeps it, and an admin accepts or voids the games.
#include <algorithm>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "coordinator/coordinator.h"
#include "coordinator/metrics.h"
#include "proto/run_states.h"
#include "spdlog/spdlog.h"

namespace arbiter::coordinator {
namespace {

std::string Pentanomial(const v1::WorkerResidual& v) {
  std::string out;
  for (uint64_t c : v.pentanomial()) out += Cat(out.empty() ? "" : " ", c);
  return Cat("[", out, "]");
}

}  // namespace

void Coordinator::BarResidualsLocked(Run& run) {
  run.barred_workers.clear();
  run.barred_tokens.clear();
  for (const v1::WorkerResidual& v : run.handler->Residuals()) {
    if (v.state() == v1::RESIDUAL_STATE_ACCEPTED) continue;
    run.barred_workers.insert(v.worker_id());
    if (!v.token().empty()) run.barred_tokens.insert(v.token());
  }
}

void Coordinator::SetAsideLocked(Run& run, const v1::WorkerResidual& verdict) {
  BarResidualsLocked(run);
  ++run.version;
  if (metrics_) metrics_->residual_flags.Increment();
  const std::string why = Cat("run ", run.id, ": games set aside by the residual check (residual ",
                              absl::StrFormat("%.1f", verdict.residual()), " beyond ",
                              absl::StrFormat("%.1f", verdict.threshold()), ")");
  if (WorkerInfo* w = workers_.Find(verdict.worker_id()); w && w->flags.size() < kMaxWorkerFlags)
    w->flags.push_back(why);
  // Rare (once per flagged worker): written under the lock, as a quarantine is.
  if (absl::Status st =
          store_->PutResidual({run.id, verdict.worker_id(), verdict.SerializeAsString()});
      !st.ok())
    spdlog::error("run {}: storing the residual verdict on worker {}: {}", run.id,
                  verdict.worker_id(), st.ToString());
  spdlog::warn(
      "run {}: worker {} ('{}', token '{}') set aside: residual {:.2f} beyond {:.2f}, "
      "pentanomial {}",
      run.id, verdict.worker_id(), verdict.worker_name(), verdict.token(), verdict.residual(),
      verdict.threshold(), Pentanomial(verdict));
}

void Coordinator::RestoreResidualLocked(Run& run, const v1::WorkerResidual& verdict) {
  run.handler->RestoreResidual(verdict);
  BarResidualsLocked(run);
}

std::string Coordinator::NoteOfLocked(const Run& run) {
  std::string note = run.quarantine_note;
  for (const v1::WorkerResidual& v : run.handler->Residuals()) {
    const std::string who =
        Cat("worker '", v.worker_name(), "' (", v.worker_id(), ", token '", v.token(), "')");
    std::string line;
    switch (v.state()) {
      case v1::RESIDUAL_STATE_SET_ASIDE:
        line = Cat("games of ", who, " set aside by the residual check (residual ",
                   absl::StrFormat("%.1f", v.residual()), " beyond ",
                   absl::StrFormat("%.1f", v.threshold()), ", pentanomial ", Pentanomial(v),
                   "): an admin decides with `arbiter runs ", "residuals ", run.id, " --accept ",
                   v.worker_id(), "` or `--void ", v.worker_id(), "`");
        break;
      case v1::RESIDUAL_STATE_ACCEPTED:
        line = Cat("games of ", who, " accepted by an admin after the residual check");
        break;
      default:
        line = Cat("games of ", who, " voided by an admin after the residual check");
        break;
    }
    note = Cat(note, note.empty() ? "" : "; ", line);
  }
  return note;
}

absl::StatusOr<v1::Run> Coordinator::DecideResidual(uint64_t run_id, const std::string& worker_id,
                                                    v1::ResidualState decision) {
  std::vector<RunUpdate> updates;
  v1::Run out;
  {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NoRunError(run_id);
    Run& run = *it->second;
    if (IsTerminal(run.state))
      return absl::FailedPreconditionError(Cat("run ", run_id, " has ended (",
                                               RunStateName(run.state),
                                               "): the games it set aside stay out of its result"));
    IngestOutcome outcome;
    ASSIGN_OR_RETURN(v1::WorkerResidual verdict,
                     run.handler->DecideResidual(worker_id, decision, outcome));
    RETURN_IF_ERROR(store_->PutResidual({run.id, worker_id, verdict.SerializeAsString()}));
    BarResidualsLocked(run);
    ++run.version;
    spdlog::info("run {}: the games of worker {} ('{}') {} by an admin", run.id, worker_id,
                 verdict.worker_name(),
                 decision == v1::RESIDUAL_STATE_ACCEPTED ? "accepted" : "voided");
    // The count changed: an SPRT may decide now, or the run's jobs were all done already.
    if (outcome.finish)
      FinishRunLocked(run, *outcome.finish, outcome.message, updates);
    else if (run.jobs_done == run.jobs.size() && !run.handler->Expanding() &&
             !run.handler->AwaitsDecision())
      FinishRunLocked(run, v1::RUN_STATE_SUCCEEDED, NoteOfLocked(run), updates);
    out = BuildRunLocked(run);
  }
  CommitTickUpdates(updates);
  return out;
}

}  // namespace arbiter::coordinator

#include "coordinator/run_outcome.h"

#include "absl/strings/str_format.h"
#include "proto/run_states.h"

namespace arbiter::coordinator {
namespace {

// What a run that ended without its own decision is: cancelled or stopped runs are
// inconclusive, a run that failed to run has no verdict.
v1::RunVerdict Unfinished(const v1::Run& run) {
  if (!IsTerminal(run.state())) return v1::RUN_VERDICT_PENDING;
  if (run.state() == v1::RUN_STATE_FAILED) return v1::RUN_VERDICT_NONE;
  return v1::RUN_VERDICT_INCONCLUSIVE;
}

void Match(const v1::Run& run, v1::RunOutcome& out) {
  const v1::StatsReport& st = run.match().result().stats();
  const uint64_t games = run.match().result().games();
  if (st.has_sprt() && st.sprt().upper_bound() > 0) {
    const v1::SprtReport& s = st.sprt();
    if (s.decision() == v1::SPRT_DECISION_ACCEPT_H1) {
      out.set_verdict(v1::RUN_VERDICT_PASSED);
      out.set_hypothesis("H1");
      out.set_summary(absl::StrFormat("accepted: H1 (LLR %.2f >= %.2f)", s.llr(), s.upper_bound()));
      return;
    }
    if (s.decision() == v1::SPRT_DECISION_ACCEPT_H0) {
      out.set_verdict(v1::RUN_VERDICT_FAILED);
      out.set_hypothesis("H0");
      out.set_summary(absl::StrFormat("rejected: H0 (LLR %.2f <= %.2f)", s.llr(), s.lower_bound()));
      return;
    }
    out.set_verdict(run.state() == v1::RUN_STATE_SUCCEEDED ? v1::RUN_VERDICT_INCONCLUSIVE
                                                           : Unfinished(run));
    out.set_summary(absl::StrFormat("%s: LLR %.2f in (%.2f, %.2f) after %d games",
                                    out.verdict() == v1::RUN_VERDICT_PENDING ? "pending"
                                    : out.verdict() == v1::RUN_VERDICT_NONE  ? "no verdict"
                                                                             : "inconclusive",
                                    s.llr(), s.lower_bound(), s.upper_bound(), games));
    return;
  }
  out.set_verdict(run.state() == v1::RUN_STATE_SUCCEEDED ? v1::RUN_VERDICT_MEASURED
                                                         : Unfinished(run));
  if (games > 0 || out.verdict() == v1::RUN_VERDICT_MEASURED)
    out.set_summary(
        absl::StrFormat("%s: Elo %+.1f +- %.1f over %d games",
                        out.verdict() == v1::RUN_VERDICT_MEASURED ? "measured" : "so far", st.elo(),
                        st.elo_error95(), games));
}

void Movegen(const v1::Run& run, v1::RunOutcome& out) {
  const v1::MovegenCheckResult& r = run.movegen_check().result();
  const uint64_t mismatched =
      r.positions_checked() > r.positions_clean() ? r.positions_checked() - r.positions_clean() : 0;
  const uint64_t failing = std::max<uint64_t>(mismatched, uint64_t(r.failures_size()));
  out.set_failing(failing);
  if (failing > 0 || r.positions_faulted() > 0) {
    // Failing positions fail the check even while it runs: more can only be found.
    out.set_verdict(v1::RUN_VERDICT_FAILED);
    out.set_summary(absl::StrFormat(
        "failed: %d of %d positions failing%s", failing, r.positions(),
        r.positions_faulted() > 0 ? absl::StrFormat(", %d faulted", r.positions_faulted()) : ""));
    return;
  }
  if (run.state() == v1::RUN_STATE_SUCCEEDED) {
    out.set_verdict(v1::RUN_VERDICT_PASSED);
    out.set_summary(
        absl::StrFormat("passed: %d of %d positions clean", r.positions_clean(), r.positions()));
    return;
  }
  out.set_verdict(Unfinished(run));
}

void Perft(const v1::Run& run, v1::RunOutcome& out) {
  const v1::PerftRunStatus& p = run.perft();
  out.set_failing(p.disagreements_size());
  if (p.request().verify() && p.disagreements_size() > 0) {
    out.set_verdict(v1::RUN_VERDICT_FAILED);
    out.set_summary(
        absl::StrFormat("mismatch: workers disagreed on %d jobs", p.disagreements_size()));
    return;
  }
  if (run.state() != v1::RUN_STATE_SUCCEEDED) {
    out.set_verdict(Unfinished(run));
    return;
  }
  if (p.request().verify()) {
    out.set_verdict(v1::RUN_VERDICT_PASSED);
    out.set_summary(
        absl::StrFormat("exact: verified by two workers, %s nodes", p.result().nodes_decimal()));
  } else {
    out.set_verdict(v1::RUN_VERDICT_MEASURED);
    out.set_summary(absl::StrFormat("measured: %s nodes", p.result().nodes_decimal()));
  }
}

}  // namespace

v1::RunOutcome OutcomeOf(const v1::Run& run) {
  v1::RunOutcome out;
  if (run.has_match()) {
    Match(run, out);
  } else if (run.has_movegen_check()) {
    Movegen(run, out);
  } else if (run.has_perft()) {
    Perft(run, out);
  } else if (run.state() == v1::RUN_STATE_SUCCEEDED) {
    out.set_verdict(v1::RUN_VERDICT_MEASURED);  // a tournament: standings, nothing to pass
  } else {
    out.set_verdict(Unfinished(run));
  }
  if (out.summary().empty()) {
    switch (out.verdict()) {
      case v1::RUN_VERDICT_PENDING:
        out.set_summary("pending");
        break;
      case v1::RUN_VERDICT_NONE:
        out.set_summary(run.message().empty() ? "no verdict: the run failed"
                                              : "no verdict: " + run.message());
        break;
      case v1::RUN_VERDICT_INCONCLUSIVE:
        out.set_summary("inconclusive: cancelled before a decision");
        break;
      default:
        out.set_summary("measured");
    }
  }
  return out;
}

}  // namespace arbiter::coordinator

// `arbiter movegen-check --coordinator ADDR`: submits a movegen-check run and follows it; the
// engine is builtin, a path on every worker, or an upload (cmd=sha256:HEX, cmd=upload:FILE).
#include <algorithm>
#include <iostream>

#include "base/strings.h"
#include "cli/cluster_client.h"
#include "cli/json.h"
#include "cli/movegen_check_flags.h"
#include "match/movegen_check.h"
#include "proto/run_states.h"

namespace arbiter::cli {

int RunMovegenCheckOnCluster(const MovegenCheckFlags& f) {
  absl::StatusOr<MovegenInput> input = ReadMovegenInput(f);
  if (!input.ok()) {
    std::cerr << "error: " << input.status().message() << "\n";
    return 2;
  }
  match::PerftDialect* dialect = &input->dialect;
  std::vector<v1::MovegenPosition>* positions = &input->positions;
  match::EngineSpec* spec = &input->engine;
  if (spec->name.empty()) spec->name = "engine";
  absl::StatusOr<v1::EngineSpec> engine = RemoteEngineSpec(*spec, f.coordinator);
  if (!engine.ok()) {
    std::cerr << "error: " << engine.status().message() << "\n";
    return 2;
  }
  v1::SubmitMovegenCheckRequest request;
  *request.mutable_engine() = *engine;
  *request.mutable_dialect() = match::DialectToProto(*dialect);
  for (v1::MovegenPosition& p : *positions) *request.add_positions() = std::move(p);
  request.set_timeout_ms(uint32_t(std::clamp(f.timeout_s, 0.001, 3600.0) * 1000));
  absl::StatusOr<v1::Run> run = RunRemoteMovegenCheck(f.coordinator, request, f.json || f.quiet);
  if (!run.ok()) {
    std::cerr << "error: " << run.status().message() << "\n";
    return 2;
  }
  if (run->state() != v1::RUN_STATE_SUCCEEDED) {
    std::cerr << "error: run " << run->id() << " " << RunStateName(run->state()) << ": "
              << run->message() << "\n";
    return 2;
  }
  const v1::MovegenCheckResult& result = run->movegen_check().result();
  if (f.json)
    std::cout << ToJson(result) << "\n";
  else
    std::cout << match::MovegenReportText(result);
  return result.failures_size() || result.positions_faulted() ? 1 : 0;
}

}  // namespace arbiter::cli

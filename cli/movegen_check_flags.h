// The flags of `arbiter movegen-check`, shared by its local and cluster paths.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "match/movegen_check.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/movegen.pb.h"

namespace arbiter::cli {

struct MovegenCheckFlags {
  std::string engine;
  std::string dialect = "go-perft", perft_command, total_regex, divide_regex;
  std::vector<std::string> suites, fens;
  int random = 0;
  uint64_t seed = 1;
  int depth = 0;
  uint64_t max_nodes = 0;
  double timeout_s = 60;
  std::string coordinator;
  bool json = false, quiet = false;
};

// The positions the flags name, each with its depth.
absl::StatusOr<std::vector<v1::MovegenPosition>> MovegenPositions(const MovegenCheckFlags& f);

// What both paths read from the flags first: the dialect, the positions and the engine.
struct MovegenInput {
  match::PerftDialect dialect;
  std::vector<v1::MovegenPosition> positions;
  match::EngineSpec engine;
};
absl::StatusOr<MovegenInput> ReadMovegenInput(const MovegenCheckFlags& f);
// `--coordinator`: submits a movegen-check run and follows it (cluster_client.cc).
int RunMovegenCheckOnCluster(const MovegenCheckFlags& f);

}  // namespace arbiter::cli

// `arbiter movegen-check --coordinator ADDR`: submits a movegen-check run and follows it.
#include <iostream>

#include "cli/movegen_check_flags.h"

namespace arbiter::cli {

int RunMovegenCheckOnCluster(const MovegenCheckFlags&) {
  std::cerr << "error: movegen-check --coordinator is not available yet\n";
  return 2;
}

}  // namespace arbiter::cli

// A perft hash kept across counts: a worker's (or all the workers' of one `arbiter local`) across
// jobs and runs, a suite's across its positions. Its entries are exact positions; it is made
// again only when its size must change, and cleared when a count's positions give a castling
// right to another rook than the kept entries did (a Chess960 key does not name the rook; see
// engine/perft.h). Shared by the workers of one process, it is what the threads of one
// `arbiter perft` share: a position one worker counted is found by the others.
//
//   auto hash = std::make_shared<PerftHash>(256, 2);   // 256 MB now, zeroed on 2 threads
//   std::shared_ptr<PerftTable> t = hash->For(positions, 0);  // held for the job's duration
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "engine/perft.h"
#include "engine/position.h"

namespace arbiter {

class PerftHash {
 public:
  // fixed_mb > 0: a table of that size now and for every job (ok() says whether the memory was
  // had); 0: each job's own size times `job_scale` (the workers sharing it), made at the first
  // job. `threads` zero the table.
  PerftHash(int fixed_mb, int threads, int job_scale = 1);
  bool ok() const;

  // The table for a job counting `positions` that asks for `job_mb` MB (ignored with a fixed
  // size). Null when the job's own positions give a right to different rooks (FENs of
  // different games: count without a hash) or the memory cannot be had. The caller keeps the
  // pointer while it counts: a table replaced meanwhile lives on until its last job ends.
  std::shared_ptr<PerftTable> For(const std::vector<Position>& positions, int job_mb);

 private:
  const int fixed_mb_, threads_, job_scale_;
  mutable absl::Mutex mu_;
  std::shared_ptr<PerftTable> table_ ABSL_GUARDED_BY(mu_);
  int table_mb_ ABSL_GUARDED_BY(mu_) = 0;
  // The rook of each castling right among the positions counted into table_ (kNoSquare: none).
  std::array<Square, 4> rooks_ ABSL_GUARDED_BY(mu_) = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
};

}  // namespace arbiter

// A perft hash kept across counts: a worker's (or all the workers' of one `arbiter local`) across
// jobs and runs, a suite's across its positions. Its entries are exact positions (the 128-bit key
// names the pieces, the side, the rights and the rook each right belongs to), valid for any root;
// it is made again only when its size must change. Shared by the workers of one process, it is
// what the threads of one `arbiter perft` share: a position one worker counted is found by the
// others.
//
//   auto hash = std::make_shared<PerftHash>(256, 2);   // 256 MB now, zeroed on 2 threads
//   std::shared_ptr<PerftTable> t = hash->For(0);      // held for the job's duration
#pragma once

#include <memory>

#include "absl/synchronization/mutex.h"
#include "engine/perft.h"

namespace arbiter {

class PerftHash {
 public:
  // fixed_mb > 0: a table of that size now and for every job (ok() says whether the memory was
  // had); 0: each job's own size times `job_scale` (the workers sharing it), made at the first
  // job. `threads` zero the table.
  PerftHash(int fixed_mb, int threads, int job_scale = 1);
  bool ok() const;

  // The table for a count that asks for `job_mb` MB (ignored with a fixed size); null when the
  // memory cannot be had. The caller keeps the pointer while it counts: a table replaced
  // meanwhile (another size) lives on until its last count ends.
  std::shared_ptr<PerftTable> For(int job_mb);

 private:
  const int fixed_mb_, threads_, job_scale_;
  mutable absl::Mutex mu_;
  std::shared_ptr<PerftTable> table_ ABSL_GUARDED_BY(mu_);
  int table_mb_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace arbiter

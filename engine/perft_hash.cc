#include "engine/perft_hash.h"

#include <algorithm>

namespace arbiter {

PerftHash::PerftHash(int fixed_mb, int threads, int job_scale)
    : fixed_mb_(std::max(0, fixed_mb)),
      threads_(std::max(1, threads)),
      job_scale_(std::max(1, job_scale)) {
  if (fixed_mb_ > 0) {
    absl::MutexLock lock(&mu_);
    table_ = MakePerftTable(fixed_mb_, threads_);
    table_mb_ = fixed_mb_;
  }
}

bool PerftHash::ok() const {
  absl::MutexLock lock(&mu_);
  return fixed_mb_ == 0 || table_ != nullptr;
}

std::shared_ptr<PerftTable> PerftHash::For(int job_mb) {
  const int mb = fixed_mb_ > 0 ? fixed_mb_ : std::min(job_mb * job_scale_, 1 << 20);
  absl::MutexLock lock(&mu_);
  if (!table_ || table_mb_ != mb) {
    table_.reset();  // a count still using the old table keeps it alive
    table_ = MakePerftTable(mb, threads_);
    if (!table_) return nullptr;
    table_mb_ = mb;
  }
  return table_;
}

}  // namespace arbiter

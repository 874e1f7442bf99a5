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

std::shared_ptr<PerftTable> PerftHash::For(const std::vector<Position>& positions, int job_mb) {
  std::array<Square, 4> rooks = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
  for (const Position& p : positions) {
    for (int idx = 0; idx < 4; ++idx) {
      if (!p.CanCastle(idx)) continue;
      if (rooks[idx] == kNoSquare) rooks[idx] = p.CastlingRook(idx);
      if (rooks[idx] != p.CastlingRook(idx)) return nullptr;
    }
  }
  const int mb = fixed_mb_ > 0 ? fixed_mb_ : std::min(job_mb * job_scale_, 1 << 20);
  absl::MutexLock lock(&mu_);
  bool conflict = false;
  for (int idx = 0; idx < 4; ++idx)
    if (rooks[idx] != kNoSquare && rooks_[idx] != kNoSquare && rooks_[idx] != rooks[idx])
      conflict = true;
  if (table_ && table_mb_ == mb && conflict && table_.use_count() == 1) {
    ClearPerftTable(*table_, threads_);  // nobody else counts with it: reuse its memory
    rooks_ = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
  } else if (!table_ || table_mb_ != mb || conflict) {
    table_.reset();  // a job still counting with the old table keeps it alive
    table_ = MakePerftTable(mb, threads_);
    if (!table_) return nullptr;
    table_mb_ = mb;
    rooks_ = {kNoSquare, kNoSquare, kNoSquare, kNoSquare};
  }
  for (int idx = 0; idx < 4; ++idx)
    if (rooks[idx] != kNoSquare) rooks_[idx] = rooks[idx];
  return table_;
}

}  // namespace arbiter

// Uploaded engine artifacts: files named by their sha256 under DATA/engines, their records in
// the store, and the upload directory for transfers in progress. Thread-safe (its own lock,
// independent of the Coordinator's).
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/store.h"
#include "proto/arbiter/v1/run_service.pb.h"

namespace arbiter::coordinator {

class EngineStore {
 public:
  // Creates DATA/engines/tmp if needed and loads the stored records. `store` outlives this.
  static absl::StatusOr<std::unique_ptr<EngineStore>> Open(const std::string& data_dir,
                                                           Store* store);

  // A finished upload (the bytes are in `temp_path`, which is moved into the store) by `owner`,
  // whose uploads may keep at most `quota_bytes` (RESOURCE_EXHAUSTED beyond).
  absl::StatusOr<v1::Engine> Add(const std::string& name, const std::string& temp_path,
                                 const std::string& owner, uint64_t quota_bytes);
  // Room for `bytes` more of an upload in progress by `owner`: its kept engines and its uploads in
  // progress stay within `quota_bytes`, and all uploads in progress within `max_in_flight`
  // (RESOURCE_EXHAUSTED otherwise, nothing reserved). Release gives the reservation back when the
  // upload ends, kept or not.
  absl::Status Reserve(const std::string& owner, uint64_t bytes, uint64_t quota_bytes,
                       uint64_t max_in_flight);
  void Release(const std::string& owner, uint64_t bytes);
  absl::StatusOr<v1::Engine> Get(const std::string& sha256);
  // Removes the record and the file; NOT_FOUND when there is none.
  absl::Status Delete(const std::string& sha256);
  v1::ListEnginesResponse List();
  // Path of a stored artifact, INVALID_ARGUMENT for a malformed sha256, or NOT_FOUND.
  absl::StatusOr<std::string> Path(const std::string& sha256);
  bool Known(const std::string& sha256);
  std::string UploadDir() const;

 private:
  EngineStore(std::string data_dir, Store* store) : dir_(std::move(data_dir)), store_(store) {}
  const std::string dir_;
  Store* const store_;
  absl::Mutex mu_;
  uint64_t KeptByLocked(const std::string& owner) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::flat_hash_map<std::string, v1::Engine> engines_ ABSL_GUARDED_BY(mu_);
  // Bytes of uploads in progress, per owner and in all: the temporary files count too.
  absl::flat_hash_map<std::string, uint64_t> in_flight_ ABSL_GUARDED_BY(mu_);
  uint64_t in_flight_total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace arbiter::coordinator

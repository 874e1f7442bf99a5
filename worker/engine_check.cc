#include "worker/engine_check.h"

#include <sys/stat.h>

#include <algorithm>

#include "base/strings.h"
#include "match/process.h"
#include "net/sha256.h"

namespace arbiter::worker {
namespace {

constexpr size_t kMaxCached = 256;  // entries of each cache (then it starts over)

}  // namespace

absl::StatusOr<EngineIdentity> EngineChecker::Identify(const match::EngineSpec& spec) {
  const std::string path = spec.cmd == match::kBuiltinEngine ? match::SelfExecutable() : spec.cmd;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0)
    return absl::FailedPreconditionError(
        Cat("engine '", spec.name, "': cannot read '", path, "': ", strerror(errno)));
  const std::string key = Cat(path, "|", st.st_dev, ":", st.st_ino, "|", st.st_size, "|",
                              st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
  absl::MutexLock lock(&mu_);
  if (auto it = sha256_.find(key); it != sha256_.end()) return EngineIdentity{it->second};
  absl::StatusOr<std::string> hash = net::Sha256OfFile(path);
  if (!hash.ok())
    return absl::FailedPreconditionError(Cat("engine '", spec.name, "': cannot hash '", path,
                                             "': ", std::string(hash.status().message())));
  if (sha256_.size() >= kMaxCached) sha256_.clear();
  sha256_[key] = *hash;
  return EngineIdentity{*hash};
}

absl::StatusOr<match::BenchResult> EngineChecker::Bench(const match::EngineSpec& spec,
                                                        const EngineIdentity& id) {
  std::string key = id.sha256;
  for (const std::string& a : spec.args) key += Cat("\n", a);
  for (const std::string& e : spec.env) key += Cat("\n", e);
  absl::MutexLock lock(&mu_);
  if (auto it = bench_.find(key); it != bench_.end()) return it->second;
  absl::StatusOr<match::BenchResult> result = match::RunEngineBench(spec, sandbox_, timeout_);
  // A timeout may be the machine's load of the moment: tried again at the next job.
  if (absl::IsDeadlineExceeded(result.status())) return result;
  if (bench_.size() >= kMaxCached) bench_.clear();
  bench_.emplace(key, result);
  return result;
}

absl::StatusOr<match::BenchResult> EngineChecker::ProbeBench(const match::EngineSpec& spec,
                                                             const EngineIdentity& id,
                                                             match::Millis timeout) {
  std::string key = Cat("probe\n", id.sha256);
  for (const std::string& a : spec.args) key += Cat("\n", a);
  absl::MutexLock lock(&mu_);
  if (auto it = bench_.find(key); it != bench_.end()) return it->second;
  absl::StatusOr<match::BenchResult> result =
      match::RunEngineBench(spec, sandbox_, std::min(timeout, timeout_));
  if (bench_.size() >= kMaxCached) bench_.clear();
  bench_.emplace(key, result);
  return result;
}

}  // namespace arbiter::worker

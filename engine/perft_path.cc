#include "engine/perft_path.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "base/strings.h"

namespace arbiter {
namespace {

// Best first.
std::vector<const PerftPath*> Built() {
#if ARBITER_PERFT_PATHS
  return {&kPerftPathV4, &kPerftPathV3, &kPerftPathV2};
#else
  return {&kPerftPathSingle};
#endif
}

// What the CPU (and the kernel, which must save the wider registers) offers for each path;
// __builtin_cpu_supports checks both.
bool CpuRuns(const PerftPath& path) {
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse4.2");
  const bool v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512vpopcntdq");
  if (path.avx512) return v4;
  if (path.pext) return v3;
  return v2;
}

const PerftPath* Best() {
  for (const PerftPath* p : Built())
    if (CpuRuns(*p)) return p;
  return Built().back();  // a single-level build: main() has checked the CPU level already
}

std::atomic<const PerftPath*> active{nullptr};

}  // namespace

const PerftPath& ActivePerftPath() {
  const PerftPath* p = active.load(std::memory_order_acquire);
  if (!p) {
    p = Best();
    const PerftPath* expected = nullptr;
    if (!active.compare_exchange_strong(expected, p)) p = expected;
  }
  return *p;
}

std::vector<const PerftPath*> BuiltPerftPaths() { return Built(); }

std::vector<const PerftPath*> RunnablePerftPaths() {
  std::vector<const PerftPath*> out;
  for (const PerftPath* p : Built())
    if (CpuRuns(*p)) out.push_back(p);
  return out;
}

absl::Status UsePerftPath(std::string_view name) {
  if (name.empty()) {
    active.store(Best(), std::memory_order_release);
    return absl::OkStatus();
  }
  if (name != "v2" && name != "v3" && name != "v4")
    return absl::InvalidArgumentError(
        Cat("unknown perft path '", name.substr(0, 64), "': use v2, v3 or v4"));
  std::string built;
  for (const PerftPath* p : Built()) {
    if (p->name != name) {
      built += Cat(built.empty() ? "" : ", ", p->name);
      continue;
    }
    if (!CpuRuns(*p))
      return absl::FailedPreconditionError(
          Cat("perft path ", PerftPathDescription(*p), " needs CPU features this CPU lacks"));
    active.store(p, std::memory_order_release);
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      Cat("perft path ", name, " is not in this binary (built for one CPU level: ", built, ")"));
}

absl::Status UsePerftPathFromEnvironment() {
  const char* name = std::getenv("ARBITER_PERFT_PATH");
  if (!name) return absl::OkStatus();
  absl::Status status = UsePerftPath(name);
  if (!status.ok())
    return absl::Status(status.code(), Cat("ARBITER_PERFT_PATH: ", std::string(status.message())));
  return status;
}

std::string PerftPathDescription(const PerftPath& path) {
  return Cat(path.name, " (", path.pext ? "pext" : "magic", " sliders",
             path.avx512 ? ", avx-512 counter" : "", ")");
}

}  // namespace arbiter

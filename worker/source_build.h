// Engines built from source: a packed tree (a gzipped tar) is unpacked and built in the engine
// box (match/sandbox.h) with limits of its own (wall clock, CPU time, output), and the binary it
// leaves is cached per (archive sha256, build command, binary, CPU level, toolchain), so that a
// tree is built once per machine however many runs use it. At most one build of a key runs at a
// time (an flock, which also holds between processes sharing the cache), and the cache is evicted
// by size, least recently used first.
//
//   SourceBuilder builder({.dir = cache, .box = box});
//   ASSIGN_OR_RETURN(BuiltEngine e, builder.Build({.archive = path, .sha256 = sha, .build =
//   "make"}));
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "match/sandbox.h"

namespace arbiter::worker {

struct BuildLimits {
  double wall_seconds = 900;            // the whole build, then killed
  uint64_t cpu_seconds = 1800;          // RLIMIT_CPU of each process of the build
  uint64_t output_bytes = 16ull << 20;  // what the build prints, stdout and stderr
  // The tree's disk use (the unpacked sources, objects, temporaries), measured twice a second:
  // RLIMIT_FSIZE bounds one file, not how many a build writes.
  uint64_t disk_bytes = 4ull << 30;
};

struct SourceBuilderOptions {
  std::string dir;  // the cache: one binary per key, and the keys' lock files
  match::SandboxOptions box;
  BuildLimits limits;
  uint64_t cache_bytes = 4ull << 30;  // evicted above this, least recently used first
  // >= 0: cached binaries belong to this group, 0550, and the cache directory is 0710 (engines
  // that drop to nobody must run them); otherwise 0500 and 0700.
  int engine_gid = -1;
  // The toolchain that builds (Toolchain()); part of every key. Empty: detected.
  std::string toolchain;
};

struct BuildRequest {
  std::string archive;  // a gzipped tar of the tree
  std::string sha256;   // its hash (64 lowercase hex digits)
  std::string build;    // a shell line run in the tree's root; empty: "make"
  std::string binary;   // relative to the root; empty: the one executable the build made
  int cpu_level = 1;    // 1..4: ARBITER_CPU_LEVEL=v1..v4 and ARBITER_MARCH in the environment
};

struct BuiltEngine {
  std::string path;  // the cached binary
  bool cached = false;
  double seconds = 0;  // the build's wall time (0 when cached)
};

// "gcc (Debian 12.2.0-14) 12.2.0; GNU Make 4.3": the first lines of `cc --version` and
// `make --version`, found in the box's PATH; empty when either is missing (the worker cannot
// build).
std::string DetectToolchain();

// The -march name of an x86-64 level: x86-64, x86-64-v2, x86-64-v3, x86-64-v4.
std::string MarchOfLevel(int cpu_level);

// A relative path inside the tree: not empty, not absolute, no ".." component.
bool IsTreePath(std::string_view path);

class SourceBuilder {
 public:
  explicit SourceBuilder(SourceBuilderOptions options);
  const std::string& toolchain() const { return options_.toolchain; }
  // The cached binary of `request`, building it when it is not cached. A failed build is
  // FAILED_PRECONDITION whose message names the limit hit, or ends with the tail of the build's
  // log (the compiler's error).
  absl::StatusOr<BuiltEngine> Build(const BuildRequest& request);

 private:
  absl::Status BuildInto(const BuildRequest& request, const std::string& out);
  void Evict(const std::string& keep);
  SourceBuilderOptions options_;
};

}  // namespace arbiter::worker

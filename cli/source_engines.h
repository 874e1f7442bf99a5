// Engines given as source (`--engine name=X,source=SRC[,build=CMD][,binary=PATH]`): the client
// packs the tree reproducibly into a gzipped tar (GNU tar: entries sorted by name, times 0,
// owner and group 0, modes 644/755, no VCS directories; gzip -n), so that the same files give
// the same sha256 on every machine. SRC is a directory, an archive (.tar, .tar.gz, .tgz,
// .tar.zst, .tar.xz, .tar.bz2: unpacked and packed again, so the compression does not change
// the hash), or a git work tree at a revision, DIR@REV (`git archive` of exactly that commit).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "match/sandbox.h"
#include "match/uci_engine.h"
#include "proto/arbiter/v1/engine.pb.h"

namespace arbiter::cli {

struct PackedSource {
  std::string archive;   // the .tar.gz, inside `temp`
  std::string sha256;    // of the archive
  std::string origin;    // SRC as given, without @REV
  std::string revision;  // the commit id of DIR@REV; empty otherwise
};

// A temporary directory removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Packs `source` into `temp`; INVALID_ARGUMENT when it is none of the forms above, the tool's
// error otherwise.
absl::StatusOr<PackedSource> PackSource(const std::string& source, const std::string& temp);

// A cluster run's source engine: `e.source` packed here and uploaded once per content (each
// worker builds it for its own CPU), with its build command, binary, origin and revision.
absl::StatusOr<v1::SourceTree> UploadSourceTree(const match::EngineSpec& e,
                                                const std::string& coordinator);

// The directory local builds are cached in: $XDG_STATE_HOME/arbiter/builds, or
// ~/.local/state/arbiter/builds.
std::string LocalBuildCache();

// For a match in this process: builds every source engine of `specs` (once per content, in the
// cache above, in `box`, for this CPU's level) and points its cmd at the binary. A failed
// build is FAILED_PRECONDITION naming the engine, with the build log's tail.
absl::Status BuildLocalSources(std::vector<match::EngineSpec>& specs,
                               const match::SandboxOptions& box, bool quiet);

}  // namespace arbiter::cli

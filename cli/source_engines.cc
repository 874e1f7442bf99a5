#include "cli/source_engines.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "absl/strings/str_format.h"
#include "base/cpu.h"
#include "base/status_macros.h"
#include "base/strings.h"
#include "cli/cluster_client.h"
#include "match/process.h"
#include "net/sha256.h"
#include "worker/source_build.h"

namespace arbiter::cli {
namespace fs = std::filesystem;
namespace {

// Runs a tool to its end (its stdout discarded); the error names it and ends with its stderr.
absl::Status RunTool(std::vector<std::string> argv, const std::string& cwd = "",
                     std::string* first_line = nullptr) {
  const std::string name = argv[0];
  absl::StatusOr<std::unique_ptr<match::Subprocess>> p =
      match::Subprocess::Start({.argv = std::move(argv), .cwd = cwd, .env = {"LC_ALL=C"}});
  if (!p.ok())
    return absl::FailedPreconditionError(
        Cat("cannot run ", name, ": ", std::string(p.status().message())));
  (*p)->CloseInput();
  match::OutputLine line;
  const auto deadline = match::SteadyClock::now() + std::chrono::minutes(10);
  while ((*p)->ReadLine(deadline, line) == match::ReadResult::kLine)
    if (first_line && first_line->empty()) *first_line = line.text;
  const int status = (*p)->WaitOrKill(std::chrono::seconds(10));
  (*p)->WaitStderrClosed(match::SteadyClock::now() + std::chrono::seconds(1));
  if (match::ExitCode(status) != 0)
    return absl::FailedPreconditionError(
        Cat(name, " ", match::DescribeExit(status), ": ", std::string(Strip((*p)->StderrTail()))));
  return absl::OkStatus();
}

bool IsArchive(std::string_view path) {
  for (std::string_view ext : {".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.xz", ".tar.bz2"})
    if (path.ends_with(ext)) return true;
  return false;
}

// A directory packed reproducibly into `out` (.tar.gz).
absl::Status PackDirectory(const std::string& dir, const std::string& out) {
  const std::string tar = out.substr(0, out.size() - 3);
  RETURN_IF_ERROR(RunTool({"tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0",
                           "--numeric-owner", "--mode=u+rw,go-w,a+rX", "--format=gnu",
                           "--exclude-vcs", "-cf", tar, "-C", dir, "."}));
  return RunTool({"gzip", "-n", tar});
}

}  // namespace

TempDir::TempDir() {
  const char* tmp = getenv("TMPDIR");
  std::string templ = Cat(tmp && *tmp ? tmp : "/tmp", "/arbiter-source-XXXXXX");
  if (mkdtemp(templ.data())) path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) fs::remove_all(path_, ec);
}

absl::StatusOr<PackedSource> PackSource(const std::string& source, const std::string& temp) {
  if (temp.empty()) return absl::InternalError("no temporary directory for packing the source");
  PackedSource out;
  out.origin = source;
  out.archive = (fs::path(temp) / "source.tar.gz").string();
  std::error_code ec;
  // DIR@REV: the last '@' whose left side is a directory (a path may hold '@' itself).
  const size_t at = source.rfind('@');
  if (at != std::string::npos && at + 1 < source.size() && !fs::exists(source, ec) &&
      fs::is_directory(source.substr(0, at), ec)) {
    const std::string dir = source.substr(0, at), rev = source.substr(at + 1);
    out.origin = dir;
    RETURN_IF_ERROR(
        RunTool({"git", "rev-parse", "--verify", "--end-of-options", Cat(rev, "^{commit}")}, dir,
                &out.revision));
    // Run in DIR: a subdirectory of a repository archives that subdirectory only.
    const std::string tar = out.archive.substr(0, out.archive.size() - 3);
    RETURN_IF_ERROR(RunTool({"git", "archive", "--format=tar", "-o", tar, out.revision}, dir));
    RETURN_IF_ERROR(RunTool({"gzip", "-n", tar}));
  } else if (fs::is_directory(source, ec)) {
    RETURN_IF_ERROR(PackDirectory(source, out.archive));
  } else if (fs::is_regular_file(source, ec) && IsArchive(source)) {
    // Unpacked and packed again: the same files give the same hash whatever the compression.
    const fs::path tree = fs::path(temp) / "tree";
    fs::create_directory(tree, ec);
    RETURN_IF_ERROR(RunTool(
        {"tar", "--no-same-owner", "-xf", fs::absolute(source).string(), "-C", tree.string()}));
    fs::path root = tree;
    std::vector<fs::path> top;
    for (const auto& e : fs::directory_iterator(tree, ec)) top.push_back(e.path());
    if (top.size() == 1 && fs::is_directory(top[0], ec)) root = top[0];  // "engine-1.0/"
    RETURN_IF_ERROR(PackDirectory(root.string(), out.archive));
  } else {
    return absl::InvalidArgumentError(
        Cat("source '", source,
            "' is not a directory, an archive (.tar, .tar.gz, .tgz, .tar.zst, .tar.xz, .tar.bz2) "
            "or DIR@REV of a git work tree"));
  }
  ASSIGN_OR_RETURN(out.sha256, net::Sha256OfFile(out.archive));
  return out;
}

absl::StatusOr<v1::SourceTree> UploadSourceTree(const match::EngineSpec& e,
                                                const std::string& coordinator) {
  TempDir temp;
  absl::StatusOr<PackedSource> packed = PackSource(e.source, temp.path());
  if (!packed.ok())
    return absl::Status(packed.status().code(),
                        Cat("--engine ", e.name, ": ", std::string(packed.status().message())));
  ASSIGN_OR_RETURN(v1::Engine up, UploadEngineFile(coordinator, packed->archive, e.name));
  v1::SourceTree t;
  t.set_sha256(up.sha256());
  t.set_build(e.build);
  t.set_binary(e.binary);
  t.set_origin(packed->origin.substr(0, 256));
  t.set_revision(packed->revision);
  return t;
}

std::string LocalBuildCache() {
  const char* state = getenv("XDG_STATE_HOME");
  if (state && *state == '/') return (fs::path(state) / "arbiter" / "builds").string();
  const char* home = getenv("HOME");
  return (fs::path(home && *home ? home : "/tmp") / ".local" / "state" / "arbiter" / "builds")
      .string();
}

absl::Status BuildLocalSources(std::vector<match::EngineSpec>& specs,
                               const match::SandboxOptions& box, bool quiet) {
  std::unique_ptr<worker::SourceBuilder> builder;
  for (match::EngineSpec& e : specs) {
    if (e.source.empty()) continue;
    if (!builder) {
      builder = std::make_unique<worker::SourceBuilder>(
          worker::SourceBuilderOptions{.dir = LocalBuildCache(), .box = box});
      if (builder->toolchain().empty())
        return absl::FailedPreconditionError(
            Cat("engine '", e.name, "' is built from source, and this machine has no cc or make"));
    }
    TempDir temp;
    ASSIGN_OR_RETURN(PackedSource packed, PackSource(e.source, temp.path()));
    absl::StatusOr<worker::BuiltEngine> built = builder->Build({.archive = packed.archive,
                                                                .sha256 = packed.sha256,
                                                                .build = e.build,
                                                                .binary = e.binary,
                                                                .cpu_level = DetectedCpuLevel()});
    if (!built.ok())
      return absl::FailedPreconditionError(
          Cat("engine '", e.name, "': build failed: ", std::string(built.status().message())));
    if (!quiet)
      std::cerr << absl::StrFormat(
          "engine '%s': %s (source %s%s)\n", e.name,
          built->cached ? "built before, from the cache"
                        : absl::StrFormat("built in %.1f s", built->seconds),
          packed.sha256.substr(0, 12),
          packed.revision.empty() ? "" : Cat(", revision ", packed.revision.substr(0, 12)));
    e.cmd = built->path;
  }
  return absl::OkStatus();
}

}  // namespace arbiter::cli

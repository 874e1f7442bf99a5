// The engine sandbox's flags, shared by `arbiter match`, `arbiter tournament`, `arbiter worker`
// and `arbiter local`.
#include <iostream>

#include "base/status_macros.h"
#include "base/strings.h"
#include "cli/commands.h"

namespace arbiter::cli {

void AddSandboxOptions(CLI::App* cmd, SandboxFlags& f) {
  cmd->add_option("--sandbox", f.mode,
                  Cat("Engine isolation: auto (bubblewrap namespaces where the kernel allows "
                      "them, else Landlock, else limits only), namespaces, landlock, or off "
                      "(default ",
                      f.mode.empty() ? "off on loopback, auto beyond it" : f.mode, ")"));
  match::ResourceLimits& l = f.limits;
  // Bounded so that a negative value cannot wrap to "unlimited" and MB * 2^20 cannot overflow;
  // 0 sets no limit of that kind.
  const auto mb = CLI::Range(uint64_t(0), uint64_t(1) << 24);
  const auto count = CLI::Range(uint64_t(0), uint64_t(1) << 22);
  cmd->add_option("--engine-memory-mb", l.memory_mb, "Sandbox: address space per engine (MB)")
      ->check(mb);
  cmd->add_option("--engine-processes", l.processes,
                  "Sandbox: processes and threads of the engines' user (RLIMIT_NPROC)")
      ->check(count);
  cmd->add_option("--engine-open-files", l.open_files, "Sandbox: open files per engine")
      ->check(count);
  cmd->add_option("--engine-file-size-mb", l.file_size_mb,
                  "Sandbox: largest file an engine may write (MB)")
      ->check(mb);
  cmd->add_option("--engine-cpu-s", l.cpu_seconds, "Sandbox: CPU seconds per engine process")
      ->check(CLI::Range(uint64_t(0), uint64_t(1) << 31));
  cmd->add_option("--engine-disk-mb", l.disk_mb,
                  "Sandbox: disk an engine's directory may fill, all files together (MB; with "
                  "namespaces also the size of its /tmp and /dev/shm)")
      ->check(mb);
  cmd->add_option("--engine-uids", f.engine_uids,
                  "Sandbox, as root: users FIRST-LAST that engines and builds each run as, one "
                  "per engine (--engine-processes then bounds one engine; what an engine leaves "
                  "dies with its user), or none: all run as nobody")
      ->capture_default_str();
  cmd->add_option("--engine-read-dir", f.read_dirs,
                  "Sandbox: a host directory engines may read, e.g. Syzygy tables (repeatable; "
                  "absolute): bound read-only with namespaces, readable with Landlock, and with "
                  "limits the only host directory besides the engine's own that a string option "
                  "may name (give one the engines' user cannot write)");
}

absl::StatusOr<match::SandboxOptions> ResolveSandbox(const SandboxFlags& f) {
  ASSIGN_OR_RETURN(match::SandboxMode mode, match::ParseSandboxMode(f.mode));
  absl::StatusOr<match::UidRange> uids = match::ParseUidRange(f.engine_uids);
  if (!uids.ok())
    return absl::InvalidArgumentError(Cat("--engine-uids ", std::string(uids.status().message())));
  match::ConfigureEngineUsers(*uids);
  for (const std::string& d : f.read_dirs)
    if (d.empty() || d[0] != '/')
      return absl::InvalidArgumentError(
          Cat("--engine-read-dir '", d, "' must be an absolute path"));
  match::SandboxOptions options{.limits = f.limits, .read_only = f.read_dirs};
  std::string warning;
  ASSIGN_OR_RETURN(options.isolation, match::ResolveIsolation(mode, options.bwrap, &warning));
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  return options;
}

}  // namespace arbiter::cli

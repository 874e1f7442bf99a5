// The box an engine process runs in: resource limits set in the child before exec, and, where
// the kernel allows it, Debian's bubblewrap (bwrap) around the engine: fresh user, network, PID,
// IPC, UTS and cgroup namespaces, every capability dropped, no_new_privs, a private writable
// working directory, the system's libraries and the engine's binary read-only, nothing else of
// the host's filesystem (no worker data, cache, tokens or host /tmp), and a clean environment.
// Both levels load a seccomp filter (built with libseccomp) that refuses the system calls an
// engine never needs (EngineSeccompFilter); bwrap loads it itself (--seccomp FD) after setting
// up the namespaces, without bwrap the child loads it just before exec.
//
//   ASSIGN_OR_RETURN(SandboxMode mode, ParseSandboxMode("auto"));
//   SandboxOptions box{.isolation = ResolveIsolation(mode, bwrap, &warning)};
//   ASSIGN_OR_RETURN(ProcessSpec boxed, Sandboxed(box, spec, private_dir));
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "match/process.h"

namespace arbiter::match {

// What the user asked for (`--sandbox=auto|namespaces|landlock|off`).
enum class SandboxMode { kOff, kAuto, kNamespaces, kLandlock };
absl::StatusOr<SandboxMode> ParseSandboxMode(std::string_view text);

// What an engine process actually gets: nothing; resource limits only; limits plus Landlock (its
// directory, the system's files, no TCP, no signals out: no privilege needed, so it works in an
// unprivileged pod); or limits plus bwrap's namespaces. Without bwrap (limits and landlock) the
// filter also refuses sockets other than AF_UNIX and new sessions or process groups, so that every
// process the engine starts stays in its group and dies with it.
enum class Isolation { kNone, kLimits, kLandlock, kNamespaces };
// "none", "limits", "landlock", "namespaces"
std::string_view IsolationName(Isolation isolation);
// Whether an engine under `isolation` is confined to its directory and has no network: the level
// an uploaded (anyone's) engine needs.
bool Confines(Isolation isolation);

// A sanitizer build's own programs (the test engine, `arbiter uci`) reserve terabytes of address
// space for their shadow memory and cannot start under any RLIMIT_AS: there the default is none.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// Per-engine resource limits (setrlimit in the child; 0 = leave that limit as inherited).
// RLIMIT_NPROC counts every process and thread of the user, not of one engine, and does not
// apply to root.
struct ResourceLimits {
  // RLIMIT_AS: address space (a failed allocation is a crash)
  uint64_t memory_mb = kSanitizerBuild ? 0 : 4096;
  uint64_t processes = 1024;     // RLIMIT_NPROC: processes and threads of the user
  uint64_t open_files = 256;     // RLIMIT_NOFILE
  uint64_t file_size_mb = 64;    // RLIMIT_FSIZE: larger writes get SIGXFSZ
  uint64_t cpu_seconds = 86400;  // RLIMIT_CPU: a backstop (SIGXCPU)
  // The engine's private directory together (match/disk_watch.h), and with namespaces the size
  // of its /tmp and /dev/shm, each.
  uint64_t disk_mb = 512;
};

struct SandboxOptions {
  Isolation isolation = Isolation::kNone;
  ResourceLimits limits;
  std::string bwrap = "/usr/bin/bwrap";
  std::string work_root;  // private working directories are made here (empty: $TMPDIR or /tmp)
  // Run as root, the engine (and bwrap) drop to this unprivileged user and group, so that
  // RLIMIT_NPROC applies and the engine is no host root even outside its namespaces. Its
  // binary must then be readable by that user. -1: keep the worker's user.
  int root_drops_to = 65534;  // nobody / nogroup
  bool seccomp = true;        // load EngineSeccompFilter (with limits or namespaces)
  // More of the host readable in the box, where it exists (a build's /etc/alternatives, through
  // which Debian's cc and c++ lead to the compiler).
  std::vector<std::string> read_only;
};

// The system calls the filter refuses with EPERM: ptrace and reading other processes' memory,
// mounts and namespaces (unshare, setns, clone with a namespace flag; clone3 gets ENOSYS, so
// that libc falls back to clone), kernel modules, kexec, reboot, swap, keyrings, bpf,
// perf_event_open, userfaultfd, io_uring, file handles, the clock and host names, accounting
// and quotas. Everything else is allowed. A call of another architecture kills the process.
const std::vector<std::string_view>& RefusedSyscalls();
// The filter as raw BPF (struct sock_filter[]), built once. `without_namespaces`: also refuse
// socket() for every family but AF_UNIX, setsid() and setpgid() (the box without bwrap).
absl::StatusOr<std::string> EngineSeccompFilter(bool without_namespaces = false);

// Whether `bwrap --unshare-all ... /bin/true` works here; the error says why not.
absl::Status ProbeNamespaces(const std::string& bwrap);

// Whether Landlock can confine an engine here (a probe engine cannot read outside its rules).
absl::Status ProbeLandlock();

// The isolation for `mode`: kAuto probes bwrap, then Landlock, and falls back to limits only,
// setting `warning` when it is not namespaces; kNamespaces and kLandlock fail if their probe does.
absl::StatusOr<Isolation> ResolveIsolation(SandboxMode mode, const std::string& bwrap,
                                           std::string* warning);

// `spec` as run under `options`: resource limits and no_new_privs, and with namespaces the
// argv of bwrap around the engine, which runs in `private_dir` (an existing directory, bound
// writable; `spec.cwd`, if set, is bound read-only). The environment is cleared except for
// PATH, HOME (the private directory) and `spec.env`.
absl::StatusOr<ProcessSpec> Sandboxed(const SandboxOptions& options, ProcessSpec spec,
                                      const std::string& private_dir);

// Makes a fresh private working directory under `work_root` (or $TMPDIR, or /tmp), owned by
// the user the engine runs as: as root, a user of its own from the engine users' range (held
// until RemovePrivateDir; RESOURCE_EXHAUSTED when all are taken), or `root_drops_to`.
absl::StatusOr<std::string> MakePrivateDir(const SandboxOptions& options);
// The user an engine in `private_dir` runs as when the process is root: the directory's owner
// when it is an engine user of its own (match/engine_users.h), else `root_drops_to`.
int EngineUidOf(const SandboxOptions& options, const std::string& private_dir);
// Removes a directory made by MakePrivateDir with everything in it; an engine user of its own
// has every process killed first and is then free again.
void RemovePrivateDir(const std::string& dir);
// Removes the private directories under the work root whose making process is gone (a worker
// that was killed leaves its engines' files behind), also when its pid was reused by a later
// process; returns how many.
int RemoveStalePrivateDirs(const SandboxOptions& options);
// When the process `pid` started, in seconds since the epoch; nullopt when it cannot be read.
std::optional<double> ProcessStartTime(pid_t pid);
// Whether `path`, named with the pid of the process that made it, was left by a process that is
// gone: no process has that pid, or the one that has it started after the path's last status
// change (a restarted container's PID 1).
bool LeftByGoneProcess(pid_t pid, const std::string& path);

// "exited with code 3", "exited with SIGXFSZ (file size limit)", from a wait status.
std::string DescribeExit(int wait_status);

}  // namespace arbiter::match

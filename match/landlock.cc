#include "match/landlock.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "base/strings.h"

namespace arbiter::match {
namespace {

// The kernel's UAPI, spelled out: Debian 12's headers stop at ABI 2, the kernels we run on are
// newer, and the structure is extended by size (the kernel reads as many bytes as we pass).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI >= 4
  uint64_t scoped;              // ABI >= 6
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2,
                   kReadDir = 1ull << 3, kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5,
                   kMakeChar = 1ull << 6, kMakeDir = 1ull << 7, kMakeReg = 1ull << 8,
                   kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10, kMakeBlock = 1ull << 11,
                   kMakeSym = 1ull << 12, kRefer = 1ull << 13, kTruncate = 1ull << 14,
                   kIoctlDev = 1ull << 15;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;

// What each ABI can restrict on files (each adds to the one before).
uint64_t HandledFs(int abi) {
  uint64_t fs = (kMakeSym << 1) - 1;  // ABI 1: execute .. make_sym
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

// Rights that apply to a file, as opposed to a directory (the kernel refuses the others there).
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

}  // namespace

int LandlockAbi() {
  const long abi = syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : int(abi);
}

absl::StatusOr<int> LandlockRuleset(const std::vector<LandlockPath>& paths) {
  const int abi = LandlockAbi();
  if (abi < 1)
    return absl::FailedPreconditionError(
        Cat("Landlock is not available (", strerror(errno),
            "): kernel >= 5.13 with lsm=landlock, and a seccomp profile that allows it"));
  const uint64_t fs = HandledFs(abi);
  RulesetAttr attr{.handled_access_fs = fs, .handled_access_net = 0, .scoped = 0};
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;  // no rule for any port: none
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnix | kScopeSignal;
    size = sizeof attr;
  }
  const long ruleset = syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return absl::InternalError(Cat("landlock_create_ruleset: ", strerror(errno)));
  const int fd = int(ruleset);
  const uint64_t read = kExecute | kReadFile | kReadDir;
  const uint64_t write = kWriteFile | kRemoveDir | kRemoveFile | kMakeDir | kMakeReg | kMakeSock |
                         kMakeFifo | kMakeSym | kRefer | kTruncate;
  for (const LandlockPath& p : paths) {
    const int path_fd = open(p.path.c_str(), O_PATH | O_CLOEXEC);
    if (path_fd < 0) {
      if (errno == ENOENT) continue;
      const int e = errno;
      close(fd);
      return absl::FailedPreconditionError(
          Cat("landlock: cannot open '", p.path, "': ", strerror(e)));
    }
    struct stat st;
    uint64_t allowed = read | (p.access == LandlockPath::kReadWrite ? write : 0);
    // /dev/null and friends are written and ioctl'd (isatty) by ordinary programs.
    if (fstat(path_fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
      allowed &= kFileRights;
      if (S_ISCHR(st.st_mode)) allowed |= kIoctlDev;
    }
    PathBeneathAttr rule{.allowed_access = allowed & fs, .parent_fd = path_fd};
    const long rc = syscall(__NR_landlock_add_rule, fd, kRulePathBeneath, &rule, 0);
    const int e = errno;
    close(path_fd);
    if (rc != 0) {
      close(fd);
      return absl::InternalError(Cat("landlock_add_rule '", p.path, "': ", strerror(e)));
    }
  }
  return fd;
}

int LandlockRestrictSelf(int ruleset_fd) {
  return syscall(__NR_landlock_restrict_self, ruleset_fd, 0) == 0 ? 0 : -1;
}

}  // namespace arbiter::match

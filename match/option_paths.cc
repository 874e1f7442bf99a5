#include "match/option_paths.h"

#include <filesystem>

#include "base/strings.h"

namespace arbiter::match {
namespace {

namespace fs = std::filesystem;

// `path` resolved as far as it exists (symlinks followed), the rest taken lexically.
fs::path Resolved(const fs::path& path) {
  std::error_code ec;
  fs::path out = fs::weakly_canonical(path, ec);
  return ec ? path.lexically_normal() : out;
}

// Whether `path` is `dir` or lies below it (both resolved).
bool Within(const fs::path& path, const fs::path& dir) {
  const fs::path rel = path.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

}  // namespace

absl::Status CheckOptionPath(const UciOption& declared, std::string_view value, Isolation isolation,
                             const std::string& cwd, const std::vector<std::string>& allowed) {
  if (isolation != Isolation::kLimits || declared.type != "string") return absl::OkStatus();
  const fs::path home = Resolved(cwd);
  size_t begin = 0;
  while (begin <= value.size()) {
    size_t end = value.find_first_of(":;", begin);
    if (end == std::string_view::npos) end = value.size();
    const std::string part(Strip(value.substr(begin, end - begin)));
    begin = end + 1;
    if (part.empty() || part == "<empty>") continue;
    const fs::path path = Resolved(home / fs::path(part));  // an absolute part replaces home
    bool ok = false;
    for (const std::string& dir : allowed) ok = ok || Within(path, Resolved(dir));
    if (ok) continue;
    return absl::InvalidArgumentError(
        Cat("option ", declared.name, "=", value, ": '", part,
            "' is outside the engine's own directory, and under --sandbox limits the engine "
            "could read or write any host file it names; use a name inside the engine's "
            "directory, a directory the worker lets engines read (--engine-read-dir), or a box "
            "that confines engines (--sandbox namespaces or landlock)"));
  }
  return absl::OkStatus();
}

}  // namespace arbiter::match

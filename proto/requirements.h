// WorkerRequirements as text, both ways, for the CLI (`--require cpu=v3,memory=8G,zone=a`) and
// the coordinator's messages.
//
//   v1::WorkerRequirements r;
//   if (absl::Status st = ParseRequirements("cpu=v3,zone=a", r); !st.ok()) ...
//   RequirementsText(r) == "cpu=v3,zone=a"
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/cpu.h"
#include "base/numbers.h"
#include "base/strings.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter {

// Adds `text`'s comma-separated KEY=VALUE items to `out`: cpu=v1..v4, memory=BYTES with an
// optional K/M/G/T suffix (powers of 1024), threads=N; any other key is a label.
inline absl::Status ParseRequirements(std::string_view text, v1::WorkerRequirements& out) {
  for (std::string_view item : Split(text, ',', /*skip_empty=*/true)) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return absl::InvalidArgumentError(Cat("requirement '", item, "' is not KEY=VALUE"));
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "cpu") {
      int level = 0;
      if (!ParseCpuLevel(value, level))
        return absl::InvalidArgumentError(
            Cat("cpu='", value, "' is not an x86-64 level (v1, v2, v3 or v4)"));
      out.set_cpu_level(uint32_t(level));
    } else if (key == "memory") {
      std::string_view digits = value;
      uint64_t unit = 1;
      if (!digits.empty()) {
        const std::string_view units = "KMGT";
        if (size_t u = units.find(digits.back()); u != std::string_view::npos) {
          unit = uint64_t(1) << (10 * (u + 1));
          digits.remove_suffix(1);
        }
      }
      uint64_t n = 0;
      if (!ParseNumber(digits, n) || n > (uint64_t(1) << 50) / unit)
        return absl::InvalidArgumentError(
            Cat("memory='", value, "' is not a size such as 8G, 512M or 1048576"));
      out.set_memory_bytes(n * unit);
    } else if (key == "threads") {
      uint32_t n = 0;
      if (!ParseNumber(value, n) || n > 4096)
        return absl::InvalidArgumentError(
            Cat("threads='", value, "' is not a number of at most 4096"));
      out.set_threads(n);
    } else {
      (*out.mutable_labels())[std::string(key)] = std::string(value);
    }
  }
  return absl::OkStatus();
}

// "cpu=v4,memory=8589934592,threads=4,zone=a" (labels sorted; "" for none).
inline std::string RequirementsText(const v1::WorkerRequirements& r) {
  std::string out;
  auto add = [&out](std::string_view item) { out += Cat(out.empty() ? "" : ",", item); };
  if (r.cpu_level() > 0) add(Cat("cpu=", CpuLevelName(int(r.cpu_level()))));
  if (r.memory_bytes() > 0) add(Cat("memory=", r.memory_bytes()));
  if (r.threads() > 0) add(Cat("threads=", r.threads()));
  const std::map<std::string, std::string> sorted(r.labels().begin(), r.labels().end());
  for (const auto& [key, value] : sorted) add(Cat(key, "=", value));
  return out;
}

}  // namespace arbiter

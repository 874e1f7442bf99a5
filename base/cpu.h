// x86-64 microarchitecture levels (the psABI's x86-64, -v2, -v3, -v4 as 1..4): what a worker's
// CPU runs, and the names by which runs and engines ask for one.
//
//   int level = 0;
//   if (!ParseCpuLevel("v3", level)) return Error("...");
//   if (DetectedCpuLevel() < level) ...
#pragma once

#include <string>
#include <string_view>

#include "base/numbers.h"

namespace arbiter {

inline constexpr int kMaxCpuLevel = 4;

// The level this CPU supports (1..4), from the features that define each level (by name, as
// GCC and Clang both know them; GCC 12's "x86-64-v3" strings are not Clang 14's).
inline int DetectedCpuLevel() {
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse4.2") &&
                  __builtin_cpu_supports("ssse3");
  const bool v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
                  __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? 4 : v3 ? 3 : v2 ? 2 : 1;
}

// "v3", "x86-64-v3" and "3" are level 3; "x86-64", "v1" and "1" level 1. False for anything
// else (a level outside 1..4 included).
inline bool ParseCpuLevel(std::string_view text, int& level) {
  if (text == "x86-64") {
    level = 1;
    return true;
  }
  if (text.substr(0, 7) == "x86-64-") text.remove_prefix(7);
  if (!text.empty() && text[0] == 'v') text.remove_prefix(1);
  return ParseNumber(text, level) && level >= 1 && level <= kMaxCpuLevel;
}

// "v3" for 3; "any" for 0.
inline std::string CpuLevelName(int level) {
  if (level <= 0) return "any";
  std::string name = std::to_string(level);
  name.insert(name.begin(), 'v');
  return name;
}

}  // namespace arbiter

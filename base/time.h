// Wall-clock time as Unix seconds (what runs, tokens and engines record).
#pragma once

#include <chrono>

namespace arbiter {

inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace arbiter

// What this binary is: the release version and the git revision it was built from (written by
// the CMake build into base/revision.h; a build without it says "unknown"). Shown by
// `arbiter --version`, sent by workers at registration, exported as arbiter_build_info.
#pragma once

#include <string_view>

#if __has_include("base/revision.h")
#include "base/revision.h"
#endif
#ifndef ARBITER_VERSION
#define ARBITER_VERSION "0.1.0"
#endif
#ifndef ARBITER_REVISION
#define ARBITER_REVISION "unknown"
#endif

namespace arbiter {

inline constexpr std::string_view kVersion = ARBITER_VERSION;
inline constexpr std::string_view kRevision = ARBITER_REVISION;

}  // namespace arbiter

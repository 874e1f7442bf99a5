// v1::Isolation and v1::PerftPath as people spell them ("landlock", "v3"): the CLI, the logs and
// the deprecated string fields older workers and readers use. One pair per enum, so the wire and
// every printout agree on the spellings.
//
//   v1::Isolation i = IsolationFromString(request.isolation());  // unknown: UNSPECIFIED
//   std::cout << IsolationString(i);
#pragma once

#include <string>
#include <string_view>

#include "proto/arbiter/v1/perft.pb.h"
#include "proto/arbiter/v1/worker.pb.h"

// In namespace arbiter, as proto/run_states.h.
namespace arbiter {

// "none", "limits", "landlock", "namespaces" (match::IsolationName's spellings); "unknown" for
// UNSPECIFIED and values this build does not know.
inline std::string IsolationString(v1::Isolation isolation) {
  switch (isolation) {
    case v1::ISOLATION_NONE:
      return "none";
    case v1::ISOLATION_LIMITS:
      return "limits";
    case v1::ISOLATION_LANDLOCK:
      return "landlock";
    case v1::ISOLATION_NAMESPACES:
      return "namespaces";
    default:
      return "unknown";
  }
}

// The inverse of IsolationString; "off" (--sandbox's word) is NONE. Anything else is UNSPECIFIED,
// which confines nothing: a worker must not get uploaded engines by a spelling it made up.
inline v1::Isolation IsolationFromString(std::string_view text) {
  if (text == "off") return v1::ISOLATION_NONE;
  for (v1::Isolation i :
       {v1::ISOLATION_NONE, v1::ISOLATION_LIMITS, v1::ISOLATION_LANDLOCK, v1::ISOLATION_NAMESPACES})
    if (text == IsolationString(i)) return i;
  return v1::ISOLATION_UNSPECIFIED;
}

// Whether the isolation confines an engine enough to run someone else's uploaded program.
inline bool IsolationConfines(v1::Isolation isolation) {
  return isolation == v1::ISOLATION_LANDLOCK || isolation == v1::ISOLATION_NAMESPACES;
}

// "v2", "v3", "v4" (PerftPath::name, ARBITER_PERFT_PATH's values); "unknown" otherwise.
inline std::string PerftPathString(v1::PerftPath path) {
  switch (path) {
    case v1::PERFT_PATH_V2:
      return "v2";
    case v1::PERFT_PATH_V3:
      return "v3";
    case v1::PERFT_PATH_V4:
      return "v4";
    default:
      return "unknown";
  }
}

// The inverse of PerftPathString; anything else is UNSPECIFIED.
inline v1::PerftPath PerftPathFromString(std::string_view text) {
  for (v1::PerftPath p : {v1::PERFT_PATH_V2, v1::PERFT_PATH_V3, v1::PERFT_PATH_V4})
    if (text == PerftPathString(p)) return p;
  return v1::PERFT_PATH_UNSPECIFIED;
}

}  // namespace arbiter

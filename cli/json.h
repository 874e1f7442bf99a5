// Prints a proto message through protobuf's JSON mapping (the CLI's --json output).
#pragma once

#include <string>

#include "google/protobuf/message.h"
#include "proto/json.h"

namespace arbiter::cli {

inline std::string ToJson(const google::protobuf::Message& m) { return ProtoToJson(m); }

}  // namespace arbiter::cli

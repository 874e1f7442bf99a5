// Prints a proto message through protobuf's JSON mapping (the CLI's --json output).
#pragma once

#include <string>

#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace arbiter::cli {

inline std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
}

}  // namespace arbiter::cli

// A proto message as JSON, the one way every JSON output of arbiter prints it (the CLI's --json,
// the dashboard's API and live pages): protobuf's JSON mapping with the .proto field names and
// every field printed, zeros included.
#pragma once

#include <string>

#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"

namespace arbiter {

inline std::string ProtoToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.always_print_primitive_fields = true;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &out, opts);
  return out;
}

}  // namespace arbiter

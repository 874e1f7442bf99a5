// JSON for the HTTP API: protobuf messages through protobuf's JSON mapping (the field names and
// options of the CLI's --json), and errors as {"code": "...", "message": "..."}.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace arbiter::web {

std::string ToJson(const google::protobuf::Message& m);
// INVALID_ARGUMENT naming what protobuf's parser did not accept.
absl::Status FromJson(std::string_view json, google::protobuf::Message* m);
// A JSON string literal of `s` (quotes included).
std::string JsonQuote(std::string_view s);
std::string ErrorJson(const absl::Status& status);

}  // namespace arbiter::web

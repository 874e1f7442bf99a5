#include "web/json.h"

#include <cstdio>

#include "base/strings.h"
#include "google/protobuf/util/json_util.h"
#include "proto/json.h"

namespace arbiter::web {

std::string ToJson(const google::protobuf::Message& m) { return ProtoToJson(m); }

absl::Status FromJson(std::string_view json, google::protobuf::Message* m) {
  google::protobuf::util::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  const auto st = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), m, opts);
  if (st.ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(Cat("request body: ", std::string(st.message())));
}

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

std::string ErrorJson(const absl::Status& status) {
  return Cat("{\"code\":", JsonQuote(absl::StatusCodeToString(status.code())),
             ",\"message\":", JsonQuote(std::string(status.message())), "}");
}

}  // namespace arbiter::web

#include "coordinator/store_upgrade.h"

#include "base/strings.h"
#include "google/protobuf/unknown_field_set.h"
#include "proto/arbiter/store/v1/store.pb.h"
#include "proto/arbiter/v1/run.pb.h"

namespace arbiter::coordinator {
namespace {

// Schema 5 and older kept the fields a match and a tournament share in the request itself. The
// request now reserves their numbers, so they parse as unknown fields; GamesSettings has the
// same numbers, so their bytes, moved as they are, are the settings.
template <typename Request>
absl::Status MoveIntoSettings(Request& request) {
  const google::protobuf::Reflection* reflection = request.GetReflection();
  const google::protobuf::UnknownFieldSet& unknown = reflection->GetUnknownFields(request);
  if (unknown.empty()) return absl::OkStatus();
  std::string bytes;
  if (!unknown.SerializeToString(&bytes) || !request.mutable_settings()->MergeFromString(bytes))
    return absl::DataLossError("a stored request's settings do not parse");
  reflection->MutableUnknownFields(&request)->Clear();
  return absl::OkStatus();
}

template <typename Record>
absl::StatusOr<std::string> Upgraded(const std::string& bytes, std::string_view what) {
  Record record;
  if (!record.ParseFromString(bytes))
    return absl::DataLossError(Cat("a stored ", what, " does not parse"));
  absl::Status st = absl::OkStatus();
  if constexpr (std::is_same_v<Record, v1::Run>) {
    if (record.has_match()) st = MoveIntoSettings(*record.mutable_match()->mutable_request());
    if (record.has_tournament())
      st = MoveIntoSettings(*record.mutable_tournament()->mutable_request());
  } else {
    st = MoveIntoSettings(*record.mutable_request());
  }
  if (!st.ok()) return absl::DataLossError(Cat(what, ": ", std::string(st.message())));
  return record.SerializeAsString();
}

}  // namespace

absl::StatusOr<std::string> UpgradeRunSpec(int kind, const std::string& spec) {
  switch (kind) {
    case v1::RUN_KIND_MATCH:
      return Upgraded<store::v1::StoredMatchRun>(spec, "match run");
    case v1::RUN_KIND_TOURNAMENT:
      return Upgraded<store::v1::StoredTournamentRun>(spec, "tournament run");
    default:
      return spec;
  }
}

absl::StatusOr<std::string> UpgradeRunResult(const std::string& result) {
  if (result.empty()) return result;
  return Upgraded<v1::Run>(result, "run status");
}

}  // namespace arbiter::coordinator

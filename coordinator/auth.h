// Who may call what: bearer tokens with one role each, kept as SHA-256 hashes in the store.
//
//   ASSIGN_OR_RETURN(auto tokens, TokenRegistry::Open(store));
//   absl::StatusOr<Caller> who = tokens->Authenticate("Bearer arb_...");  // UNAUTHENTICATED
//   RETURN_IF_ERROR(Permit(*who, v1::ROLE_SUBMITTER));                   // PERMISSION_DENIED
//
// Thread-safe. A revoked token fails on its next call. Last-use times are kept in memory and
// written to the store by Flush (the coordinator calls it every few seconds and at shutdown).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/store.h"
#include "proto/arbiter/v1/admin_service.pb.h"
#include "proto/roles.h"

namespace arbiter::coordinator {

// The identity of a call: a token's name and role. Without authentication (--no-auth on
// loopback) every call is the admin "anonymous".
struct Caller {
  std::string name;
  v1::Role role = v1::ROLE_UNSPECIFIED;
  // The network host the call came from ("10.1.2.3", "::1"; empty when unknown): with the token,
  // what tells two workers apart for verification (a token's holder cannot pose as two hosts).
  std::string peer;
  // SHA-256 of its secret (empty without authentication): tells a revoked token from a new one
  // of the same name.
  std::string token_hash;
  bool admin() const { return role == v1::ROLE_ADMIN; }
};

// The calls of the run API, and the role each needs: the gRPC RunService and the HTTP API
// (web/dashboard) both ask RoleFor, so the two cannot disagree. A submitter's cancel,
// scheduling change and engine deletion apply to its own runs and uploads only (the coordinator
// checks ownership); an admin may do them to anyone's.
enum class RunCall {
  kView,  // runs, PGN, watch, engines, workers, ratings
  kSubmit,
  kCancel,
  kSetScheduling,
  kUploadEngine,
  kDeleteEngine,
  kDrainWorkers,
};
constexpr v1::Role RoleFor(RunCall call) {
  switch (call) {
    case RunCall::kView:
      return v1::ROLE_VIEWER;
    case RunCall::kDrainWorkers:
      return v1::ROLE_ADMIN;
    default:
      return v1::ROLE_SUBMITTER;
  }
}

// OK when `caller` has `needed` (viewer < submitter < admin; worker stands apart; admin may do
// everything); otherwise PERMISSION_DENIED naming the role needed.
absl::Status Permit(const Caller& caller, v1::Role needed);

// A new secret: "arb_" and 64 hex digits (256 random bits from the kernel).
absl::StatusOr<std::string> NewTokenSecret();

class TokenRegistry {
 public:
  static absl::StatusOr<std::unique_ptr<TokenRegistry>> Open(Store* store);

  // The caller that `authorization` ("Bearer <secret>") names, or UNAUTHENTICATED.
  absl::StatusOr<Caller> Authenticate(std::string_view authorization);

  // A new token; returns its secret (shown once). ALREADY_EXISTS for a taken name.
  absl::StatusOr<std::string> Create(const std::string& name, v1::Role role);
  // A token with a given secret (bootstrap from a file, in-process tokens of `arbiter local`);
  // replaces a token of the same name whose secret differs.
  absl::Status Put(const std::string& name, v1::Role role, const std::string& secret);
  // NOT_FOUND when there is no such token.
  absl::Status Revoke(const std::string& name);
  std::vector<v1::Token> List();
  bool Exists(const std::string& name);
  // Whether the token `caller` authenticated with is still valid (always without authentication).
  bool Live(const Caller& caller);
  // Whether `name` is an admin token now.
  bool IsAdmin(const std::string& name);
  // Writes last-use times to the store.
  absl::Status Flush();

 private:
  explicit TokenRegistry(Store* store) : store_(store) {}
  Store* const store_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, v1::Token> by_hash_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> hash_of_ ABSL_GUARDED_BY(mu_);  // name -> hash
  absl::flat_hash_map<std::string, double> touched_ ABSL_GUARDED_BY(mu_);       // not yet flushed
  // Secret -> its hash, for secrets seen recently (a revoked token's hash is no longer in
  // by_hash_, so the cache never lets a revoked token in).
  absl::flat_hash_map<std::string, std::string> hash_cache_ ABSL_GUARDED_BY(mu_);
};

}  // namespace arbiter::coordinator

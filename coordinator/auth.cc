#include "coordinator/auth.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <set>

#include "base/strings.h"
#include "base/time.h"
#include "net/sha256.h"

namespace arbiter::coordinator {
namespace {

constexpr std::string_view kBearer = "Bearer ";
constexpr size_t kMaxTokenName = 64;
constexpr size_t kMaxSecret = 256;
// Secrets whose hashes are remembered (so that most calls hash nothing).
constexpr size_t kMaxCachedSecrets = 4096;

absl::Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > kMaxTokenName)
    return absl::InvalidArgumentError(
        Cat("token name must have 1..", kMaxTokenName, " characters, got ", name.size()));
  for (char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '-')
      return absl::InvalidArgumentError(
          Cat("token name '", name, "' may use only letters, digits, '.', '_' and '-'"));
  return absl::OkStatus();
}

// viewer < submitter < admin; worker only for itself.
int Rank(v1::Role role) {
  switch (role) {
    case v1::ROLE_VIEWER:
      return 1;
    case v1::ROLE_SUBMITTER:
      return 2;
    case v1::ROLE_ADMIN:
      return 3;
    default:
      return 0;
  }
}

}  // namespace

absl::Status Permit(const Caller& caller, v1::Role needed) {
  if (caller.role == v1::ROLE_ADMIN || caller.role == needed) return absl::OkStatus();
  if (needed != v1::ROLE_WORKER && Rank(caller.role) >= Rank(needed) && Rank(needed) > 0)
    return absl::OkStatus();
  return absl::PermissionDeniedError(
      Cat("token '", caller.name, "' has role ", RoleName(caller.role), "; this call needs role ",
          RoleName(needed), needed == v1::ROLE_WORKER ? "" : " (or above)"));
}

absl::StatusOr<std::string> NewTokenSecret() {
  unsigned char bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(Cat("getrandom failed: errno ", errno));
    }
    got += size_t(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "arb_";
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<TokenRegistry>> TokenRegistry::Open(Store* store) {
  absl::StatusOr<std::vector<StoredToken>> tokens = store->LoadTokens();
  if (!tokens.ok()) return tokens.status();
  std::unique_ptr<TokenRegistry> out(new TokenRegistry(store));
  absl::MutexLock lock(&out->mu_);
  for (const StoredToken& t : *tokens) {
    v1::Token& token = out->by_hash_[t.hash];
    token.set_name(t.name);
    token.set_role(v1::Role(t.role));
    token.set_created_unix(t.created_unix);
    token.set_last_used_unix(t.last_used_unix);
    out->hash_of_[t.name] = t.hash;
  }
  return out;
}

absl::StatusOr<Caller> TokenRegistry::Authenticate(std::string_view authorization) {
  if (authorization.empty())
    return absl::UnauthenticatedError(
        "no token: send 'authorization: Bearer <secret>' (--token-file or ARBITER_TOKEN)");
  if (authorization.substr(0, kBearer.size()) != kBearer || authorization.size() > kMaxSecret)
    return absl::UnauthenticatedError("malformed authorization: expected 'Bearer <secret>'");
  const std::string_view secret = authorization.substr(kBearer.size());
  const double now = UnixNow();
  {
    // The common case: a known secret whose hash is cached, used within the last second.
    absl::ReaderMutexLock lock(&mu_);
    auto cached = hash_cache_.find(absl::string_view(secret.data(), secret.size()));
    if (cached != hash_cache_.end()) {
      auto it = by_hash_.find(cached->second);
      if (it == by_hash_.end()) return absl::UnauthenticatedError("unknown or revoked token");
      if (now - it->second.last_used_unix() < 1)
        return Caller{it->second.name(), it->second.role(), "", cached->second};
    }
  }
  const std::string hash = net::Sha256Hex(secret);
  absl::MutexLock lock(&mu_);
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return absl::UnauthenticatedError("unknown or revoked token");
  if (hash_cache_.size() >= kMaxCachedSecrets) hash_cache_.clear();
  hash_cache_[std::string(secret)] = hash;
  // Last use to the second is enough; most calls touch nothing.
  if (now - it->second.last_used_unix() >= 1) {
    it->second.set_last_used_unix(now);
    touched_[it->second.name()] = now;
  }
  return Caller{it->second.name(), it->second.role(), "", hash};
}

bool TokenRegistry::Live(const Caller& caller) {
  if (caller.token_hash.empty()) return true;
  absl::ReaderMutexLock lock(&mu_);
  return by_hash_.contains(caller.token_hash);
}

absl::StatusOr<std::string> TokenRegistry::Create(const std::string& name, v1::Role role) {
  if (absl::Status st = CheckName(name); !st.ok()) return st;
  if (role == v1::ROLE_UNSPECIFIED || !v1::Role_IsValid(role))
    return absl::InvalidArgumentError("a token needs a role: viewer, submitter, worker or admin");
  absl::StatusOr<std::string> secret = NewTokenSecret();
  if (!secret.ok()) return secret.status();
  {
    absl::MutexLock lock(&mu_);
    if (hash_of_.contains(name))
      return absl::AlreadyExistsError(Cat("a token named '", name, "' exists; revoke it first"));
  }
  if (absl::Status st = Put(name, role, *secret); !st.ok()) return st;
  return *secret;
}

absl::Status TokenRegistry::Put(const std::string& name, v1::Role role, const std::string& secret) {
  if (absl::Status st = CheckName(name); !st.ok()) return st;
  if (secret.size() < 16 || secret.size() > kMaxSecret - kBearer.size())
    return absl::InvalidArgumentError(Cat("token secret of '", name, "' must have 16..",
                                          kMaxSecret - kBearer.size(), " characters, got ",
                                          secret.size()));
  // A secret an operator chose must not be guessable at a glance ("aaaa…", "1212…"): at least
  // kMinDistinct different characters, none of them a control character.
  constexpr size_t kMinDistinct = 10;
  if (std::set<char>(secret.begin(), secret.end()).size() < kMinDistinct || HasControl(secret))
    return absl::InvalidArgumentError(
        Cat("token secret of '", name, "' is too weak: it needs at least ", kMinDistinct,
            " different printable characters (e.g. `openssl rand -base64 32`)"));
  StoredToken stored{name, int(role), net::Sha256Hex(secret), UnixNow(), 0};
  absl::MutexLock lock(&mu_);
  auto old = hash_of_.find(name);
  if (old != hash_of_.end()) {
    if (old->second == stored.hash && by_hash_[old->second].role() == role) return absl::OkStatus();
    if (absl::Status st = store_->DeleteToken(name); !st.ok()) return st;
    by_hash_.erase(old->second);
    hash_of_.erase(old);
  }
  if (by_hash_.contains(stored.hash))
    return absl::AlreadyExistsError("another token has the same secret");
  if (absl::Status st = store_->PutToken(stored); !st.ok()) return st;
  v1::Token& token = by_hash_[stored.hash];
  token.set_name(name);
  token.set_role(role);
  token.set_created_unix(stored.created_unix);
  hash_of_[name] = stored.hash;
  return absl::OkStatus();
}

absl::Status TokenRegistry::Revoke(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = hash_of_.find(name);
  if (it == hash_of_.end()) return absl::NotFoundError(Cat("no token named '", name, "'"));
  if (absl::Status st = store_->DeleteToken(name); !st.ok()) return st;
  by_hash_.erase(it->second);
  hash_of_.erase(it);
  touched_.erase(name);
  return absl::OkStatus();
}

std::vector<v1::Token> TokenRegistry::List() {
  std::vector<v1::Token> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [hash, token] : by_hash_) out.push_back(token);
  std::sort(out.begin(), out.end(),
            [](const v1::Token& a, const v1::Token& b) { return a.name() < b.name(); });
  return out;
}

bool TokenRegistry::IsAdmin(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = hash_of_.find(name);
  return it != hash_of_.end() && by_hash_[it->second].role() == v1::ROLE_ADMIN;
}

bool TokenRegistry::Exists(const std::string& name) {
  absl::MutexLock lock(&mu_);
  return hash_of_.contains(name);
}

absl::Status TokenRegistry::Flush() {
  std::vector<std::pair<std::string, double>> touched;
  {
    absl::MutexLock lock(&mu_);
    touched.assign(touched_.begin(), touched_.end());
    touched_.clear();
  }
  if (touched.empty()) return absl::OkStatus();
  return store_->TouchTokens(touched);
}

}  // namespace arbiter::coordinator

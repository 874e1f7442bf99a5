// SHA-256 (OpenSSL) for content-addressed engine artifacts.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace arbiter::net {

// Incremental hash; Hex() finishes it and returns 64 lowercase hex digits.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  void Update(std::string_view data);
  std::string Hex();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string Sha256Hex(std::string_view data);
absl::StatusOr<std::string> Sha256OfFile(const std::string& path);
// True for 64 lowercase hex digits.
bool IsSha256Hex(std::string_view s);

}  // namespace arbiter::net

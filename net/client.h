// Client channels to the coordinator: the bearer token every call carries and the TLS material,
// from the environment (the CLI's --token-file / --tls-* flags set the same variables).
//
//   ARBITER_TOKEN       the token's secret
//   ARBITER_TOKEN_FILE  a file holding it (a Kubernetes Secret mounted in a pod)
//   ARBITER_TLS_CA      PEM of the CA that signed the coordinator's certificate: TLS on
//   ARBITER_TLS_CERT, ARBITER_TLS_KEY   a client certificate for mutual TLS
//
// With no token set, a client of a loopback address uses the token `arbiter local` leaves for
// its port (LocalTokenPath), so that `arbiter local` needs no set-up.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"

namespace arbiter::net {

struct ClientCredentials {
  std::string token;                      // the secret; empty = none
  std::string tls_ca, tls_cert, tls_key;  // PEM text; empty tls_ca = plaintext
};

// The credentials for `address` from the environment; errors name the unreadable file.
absl::StatusOr<ClientCredentials> CredentialsFromEnvironment(const std::string& address);

// A channel to `address` whose every call carries the credentials' token. Credentials that cannot
// be read give a channel whose calls fail with UNAUTHENTICATED and the reason.
std::shared_ptr<grpc::Channel> Dial(const std::string& address,
                                    const grpc::ChannelArguments& args = {});
std::shared_ptr<grpc::Channel> Dial(const std::string& address, const ClientCredentials& creds,
                                    const grpc::ChannelArguments& args = {});

// Where `arbiter local` on loopback port `port` writes its admin token (mode 0600, in a 0700
// directory under $XDG_RUNTIME_DIR or /tmp, named after the user).
std::string LocalTokenPath(int port);

// Writes `secret` to LocalTokenPath(port). The directory is made 0700 when missing; an existing
// one must be a real directory (not a link) of this user that nobody else may enter, else the
// token is not written (another user who made it first would read it). The file is created anew,
// 0600, never through a link.
absl::Status WriteLocalToken(int port, const std::string& secret);

// The token `arbiter local` left for `port`, only when the file and its directory are this user's
// and private (a token planted by another user is not sent to their server).
absl::StatusOr<std::string> ReadLocalToken(int port);

// The contents of a secret file, trimmed; errors name the file (and `what` it is, if given).
absl::StatusOr<std::string> ReadSecret(const std::string& path, std::string_view what = {});

// Whether "HOST:PORT" names a loopback host (127.0.0.0/8, localhost, [::1]).
bool IsLoopbackAddress(const std::string& address);

}  // namespace arbiter::net

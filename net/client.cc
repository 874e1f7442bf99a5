#include "net/client.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/strings.h"
#include "grpcpp/support/client_interceptor.h"

namespace arbiter::net {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Adds `authorization: Bearer <token>` to every call (works on plaintext channels too, where
// gRPC's call credentials refuse to go).
class BearerInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA))
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerFactory(std::string token) : header_("Bearer " + std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(&header_);
  }

 private:
  const std::string header_;  // lives as long as the channel (which owns the factory)
};

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  const std::string host = address.substr(0, address.rfind(':'));
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]" ||
         host.rfind("127.", 0) == 0;
}

absl::StatusOr<std::string> ReadSecret(const std::string& path, std::string_view what) {
  const std::string named = what.empty() ? Cat("'", path, "'") : Cat(what, " '", path, "'");
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(Cat("cannot read ", named));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text(Strip(ss.str()));
  if (text.empty()) return absl::InvalidArgumentError(Cat(named, " is empty"));
  return text;
}

std::string LocalTokenPath(int port) {
  std::string dir = Env("XDG_RUNTIME_DIR");
  if (dir.empty()) dir = "/tmp";
  return Cat(dir, "/arbiter-", getuid(), "/local-", port, ".token");
}

absl::StatusOr<ClientCredentials> CredentialsFromEnvironment(const std::string& address) {
  ClientCredentials c;
  c.token = Env("ARBITER_TOKEN");
  if (c.token.empty() && !Env("ARBITER_TOKEN_FILE").empty()) {
    absl::StatusOr<std::string> t = ReadSecret(Env("ARBITER_TOKEN_FILE"));
    if (!t.ok())
      return absl::InvalidArgumentError(Cat("token file: ", std::string(t.status().message())));
    c.token = *t;
  }
  if (c.token.empty() && IsLoopbackAddress(address)) {
    const size_t colon = address.rfind(':');
    const int port = colon == std::string::npos ? 0 : std::atoi(address.c_str() + colon + 1);
    if (port > 0) {
      absl::StatusOr<std::string> t = ReadSecret(LocalTokenPath(port));
      if (t.ok()) c.token = *t;
    }
  }
  for (auto [var, out] : {std::pair<const char*, std::string*>{"ARBITER_TLS_CA", &c.tls_ca},
                          {"ARBITER_TLS_CERT", &c.tls_cert},
                          {"ARBITER_TLS_KEY", &c.tls_key}}) {
    if (Env(var).empty()) continue;
    absl::StatusOr<std::string> pem = ReadSecret(Env(var));
    if (!pem.ok())
      return absl::InvalidArgumentError(Cat(var, ": ", std::string(pem.status().message())));
    *out = *pem + "\n";
  }
  if (c.tls_cert.empty() != c.tls_key.empty())
    return absl::InvalidArgumentError("a client certificate needs both --tls-cert and --tls-key");
  return c;
}

std::shared_ptr<grpc::Channel> Dial(const std::string& address, const ClientCredentials& creds,
                                    const grpc::ChannelArguments& args) {
  std::shared_ptr<grpc::ChannelCredentials> channel_creds;
  if (creds.tls_ca.empty() && creds.tls_cert.empty()) {
    channel_creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = creds.tls_ca;
    ssl.pem_private_key = creds.tls_key;
    ssl.pem_cert_chain = creds.tls_cert;
    channel_creds = grpc::SslCredentials(ssl);
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  if (!creds.token.empty()) factories.push_back(std::make_unique<BearerFactory>(creds.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, channel_creds, args,
                                                                 std::move(factories));
}

std::shared_ptr<grpc::Channel> Dial(const std::string& address,
                                    const grpc::ChannelArguments& args) {
  absl::StatusOr<ClientCredentials> creds = CredentialsFromEnvironment(address);
  if (!creds.ok()) {
    // A token that cannot be read must not turn into an anonymous call: send a marker that no
    // server accepts, and say why on stderr once.
    static bool said = false;
    if (!said) {
      said = true;
      std::fprintf(stderr, "error: %s\n", std::string(creds.status().message()).c_str());
    }
    return Dial(address, ClientCredentials{"unreadable-token", "", "", ""}, args);
  }
  return Dial(address, *creds, args);
}

}  // namespace arbiter::net

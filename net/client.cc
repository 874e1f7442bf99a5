#include "net/client.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_format.h"
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

namespace {

// Whether `fd` is this user's and closed to others: "" or what is wrong with it.
std::string NotPrivate(int fd, const std::string& path, bool directory) {
  struct stat st;
  if (fstat(fd, &st) != 0) return Cat("cannot stat '", path, "'");
  if (directory != S_ISDIR(st.st_mode))
    return Cat("'", path, "' is not a ", directory ? "directory" : "file");
  if (st.st_uid != getuid())
    return Cat("'", path, "' belongs to uid ", st.st_uid, ", not to this user (", getuid(), ")");
  if ((st.st_mode & 077) != 0)
    return Cat("'", path, "' is open to others (mode ", absl::StrFormat("%04o", st.st_mode & 07777),
               ")");
  return "";
}

// The private directory of LocalTokenPath, opened without following a link.
absl::StatusOr<int> OpenPrivateDir(const std::string& dir, bool create) {
  if (create && mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return absl::PermissionDeniedError(Cat("cannot create '", dir, "': ", strerror(errno)));
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return absl::PermissionDeniedError(
        Cat("cannot open '", dir, "' (", strerror(errno), "; a link is not followed)"));
  if (std::string bad = NotPrivate(fd, dir, true); !bad.empty()) {
    close(fd);
    return absl::PermissionDeniedError(bad);
  }
  return fd;
}

}  // namespace

absl::Status WriteLocalToken(int port, const std::string& secret) {
  const std::string path = LocalTokenPath(port);
  const size_t slash = path.rfind('/');
  const std::string dir = path.substr(0, slash), name = path.substr(slash + 1);
  absl::StatusOr<int> dfd = OpenPrivateDir(dir, /*create=*/true);
  if (!dfd.ok()) return dfd.status();
  unlinkat(*dfd, name.c_str(), 0);  // a stale token of an earlier run on this port
  const int fd =
      openat(*dfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  close(*dfd);
  if (fd < 0)
    return absl::PermissionDeniedError(Cat("cannot create '", path, "': ", strerror(errno)));
  const std::string text = secret + "\n";
  const bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
  close(fd);
  if (!ok) return absl::DataLossError(Cat("cannot write '", path, "'"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadLocalToken(int port) {
  const std::string path = LocalTokenPath(port);
  absl::StatusOr<int> dfd = OpenPrivateDir(path.substr(0, path.rfind('/')), /*create=*/false);
  if (!dfd.ok()) return dfd.status();
  const int fd =
      openat(*dfd, path.substr(path.rfind('/') + 1).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close(*dfd);
  if (fd < 0) return absl::NotFoundError(Cat("no token at '", path, "'"));
  if (std::string bad = NotPrivate(fd, path, false); !bad.empty()) {
    close(fd);
    return absl::PermissionDeniedError(bad);
  }
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return absl::NotFoundError(Cat("'", path, "' is empty"));
  return std::string(Strip(std::string_view(buf, size_t(n))));
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
      absl::StatusOr<std::string> t = ReadLocalToken(port);
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

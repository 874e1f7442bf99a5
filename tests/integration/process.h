// Test helpers: real child processes with a readable stdout, HTTP scrapes of /metrics.
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace arbiter::testing {

// A child process; stdout is a pipe the test reads, stderr goes to `log_path`.
class Process {
 public:
  static std::unique_ptr<Process> Start(const std::vector<std::string>& args,
                                        const std::string& log_path) {
    int out[2];
    if (pipe(out) != 0) return nullptr;
    pid_t pid = fork();
    if (pid == 0) {
      dup2(out[1], STDOUT_FILENO);
      int err = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (err >= 0) dup2(err, STDERR_FILENO);
      close(out[0]);
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    auto p = std::unique_ptr<Process>(new Process);
    p->pid_ = pid;
    p->out_ = out[0];
    return p;
  }
  ~Process() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      Wait();
    }
    if (out_ >= 0) close(out_);
  }
  pid_t pid() const { return pid_; }
  void Signal(int sig) { kill(pid_, sig); }
  // Exit status (or 128 + signal); waits for the process.
  int Wait() {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return exit_code_;
  }
  // Reads stdout until a line contains `needle`; returns that line, or nullopt on timeout/EOF.
  std::optional<std::string> ReadLineWith(const std::string& needle, double timeout_seconds) {
    const auto end = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(int64_t(timeout_seconds * 1000));
    for (;;) {
      size_t nl;
      while ((nl = buffer_.find('\n')) != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        output_ += line + "\n";
        if (line.find(needle) != std::string::npos) return line;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      end - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) return std::nullopt;
      pollfd pfd{out_, POLLIN, 0};
      if (poll(&pfd, 1, int(left)) <= 0) return std::nullopt;
      char buf[4096];
      ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, size_t(n));
    }
  }
  // All of stdout until EOF.
  std::string ReadAll() {
    char buf[4096];
    ssize_t n;
    while ((n = read(out_, buf, sizeof buf)) > 0) buffer_.append(buf, size_t(n));
    output_ += buffer_;
    buffer_.clear();
    return output_;
  }

 private:
  Process() = default;
  pid_t pid_ = -1;
  int out_ = -1;
  int exit_code_ = -1;
  std::string buffer_, output_;
};

// The number after `label` in `line` ("... port 1234, ..." -> 1234), or -1.
inline int NumberAfter(const std::string& line, const std::string& label) {
  size_t at = line.find(label);
  if (at == std::string::npos) return -1;
  return std::atoi(line.c_str() + at + label.size());
}

// GET http://127.0.0.1:port/path; the body, or "" on failure.
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  (void)write(fd, req.data(), req.size());
  std::string resp;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) resp.append(buf, size_t(n));
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  return body == std::string::npos ? "" : resp.substr(body + 4);
}

// Value of the series written exactly as `series` (name with labels) in a /metrics text.
inline std::optional<double> MetricValue(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0)
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
  }
  return std::nullopt;
}

}  // namespace arbiter::testing

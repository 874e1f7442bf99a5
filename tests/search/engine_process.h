// A real engine process on pipes for tests (match::Subprocess): write command lines, read reply
// lines with a (generous) deadline so that a broken engine fails the test instead of hanging it.
#pragma once

#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "match/process.h"

namespace arbiter::testing {

class EngineProcess {
 public:
  explicit EngineProcess(std::vector<std::string> argv) {
    match::ProcessSpec spec;
    spec.argv = std::move(argv);
    absl::StatusOr<std::unique_ptr<match::Subprocess>> p = match::Subprocess::Start(spec);
    if (p.ok()) process_ = std::move(*p);
  }
  // Gives the engine a moment to exit on end of input, then makes sure it is gone.
  ~EngineProcess() {
    if (process_) {
      process_->CloseInput();
      process_->WaitOrKill(std::chrono::seconds(2));
    }
  }
  EngineProcess(const EngineProcess&) = delete;
  EngineProcess& operator=(const EngineProcess&) = delete;

  bool Started() const { return process_ != nullptr; }

  bool Send(const std::string& line) {
    return process_->WriteLine(line, std::chrono::seconds(60)).ok();
  }
  void CloseInput() { process_->CloseInput(); }

  // The next line, or nullopt at end of output or after `timeout`.
  std::optional<std::string> ReadLine(
      std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    match::OutputLine line;
    if (process_->ReadLine(match::SteadyClock::now() + timeout, line) != match::ReadResult::kLine)
      return std::nullopt;
    return std::move(line.text);
  }

  // Lines up to and including the first one starting with `prefix`; empty if it never came.
  std::vector<std::string> ReadUntil(const std::string& prefix,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    std::vector<std::string> lines;
    const auto deadline = match::SteadyClock::now() + timeout;
    match::OutputLine line;
    while (process_->ReadLine(deadline, line) == match::ReadResult::kLine) {
      lines.push_back(std::move(line.text));
      if (lines.back().rfind(prefix, 0) == 0) return lines;
    }
    return {};
  }

  // Waits for the process to exit; its exit status, or -1 if it did not exit within `timeout`.
  int WaitExit(std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    const auto deadline = match::SteadyClock::now() + timeout;
    while (!process_->Exited()) {
      if (match::SteadyClock::now() > deadline) return -1;
      usleep(5'000);
    }
    return match::ExitCode(process_->WaitOrKill(std::chrono::milliseconds(0)));
  }

 private:
  std::unique_ptr<match::Subprocess> process_;
};

}  // namespace arbiter::testing

// The worker's engine policy: `path` engines only from its --engine-dir directories.
#include "worker/match_job.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace arbiter::worker {
namespace {

TEST(EngineDir, OnlyPathsInsideTheAllowedDirectories) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("arbiter-engine-dir-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "engines");
  std::filesystem::create_directories(dir / "enginesX");
  std::ofstream(dir / "engines" / "good") << "#!/bin/sh\n";
  std::ofstream(dir / "enginesX" / "evil") << "#!/bin/sh\n";
  std::filesystem::create_symlink(dir / "enginesX" / "evil", dir / "engines" / "link");
  const std::vector<std::string> allowed = {(dir / "engines").string()};

  EXPECT_TRUE(CheckEngineDir("a", (dir / "engines" / "good").string(), allowed).ok());
  EXPECT_TRUE(CheckEngineDir("a", "/tmp/anything", {}).ok());  // no list: any path
  for (const std::string& bad :
       {(dir / "enginesX" / "evil").string(),
        (dir / "engines" / ".." / "enginesX" / "evil").string(),
        (dir / "engines" / "link").string(), (dir / "engines" / "missing").string()}) {
    absl::Status st = CheckEngineDir("a", bad, allowed);
    EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << bad;
    EXPECT_NE(st.message().find("is not in an engine directory of this worker"), std::string::npos)
        << st;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace arbiter::worker

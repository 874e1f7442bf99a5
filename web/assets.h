// The dashboard's files (web/assets/), built into the binary by web/embed.py.
#pragma once

#include <string_view>

namespace arbiter::web {

struct Asset {
  std::string_view path;  // "/app.js"
  std::string_view content_type;
  std::string_view data;
  bool is_public;  // served without a token (the sign-in page, its script and style, the icon)
  std::string_view gzip;  // `data` gzipped at build time
};

// The asset at `path`, or null.
const Asset* FindAsset(std::string_view path);

}  // namespace arbiter::web

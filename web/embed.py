#!/usr/bin/env python3
"""Writes web/assets.cc: the dashboard's files as byte arrays, so the binary serves them with
nothing installed beside it. Usage: embed.py OUT.cc FILE...  (a file's URL is /its-name; a name
starting with "signin", "style" or "favicon" is served without a token)."""
import gzip
import os
import sys

TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
PUBLIC = ("signin", "style", "favicon")


def main():
    out, files = sys.argv[1], sys.argv[2:]
    lines = ['#include "web/assets.h"', "", "namespace arbiter::web {", "namespace {"]
    table = []
    for i, path in enumerate(files):
        name = os.path.basename(path)
        data = open(path, "rb").read()
        # Also gzipped (mtime 0: the same bytes every build), served to browsers that accept it.
        packed = gzip.compress(data, 9, mtime=0)
        body = ",".join(str(b) for b in data)
        lines.append(f"const unsigned char kData{i}[] = {{{body},0}};")
        lines.append(f"const unsigned char kGzip{i}[] = {{{','.join(str(b) for b in packed)}}};")
        public = "true" if name.startswith(PUBLIC) else "false"
        table.append(f'    {{"/{name}", "{TYPES[os.path.splitext(name)[1]]}", '
                     f"std::string_view(reinterpret_cast<const char*>(kData{i}), {len(data)}), {public}, "
                     f"std::string_view(reinterpret_cast<const char*>(kGzip{i}), {len(packed)})}},")
    lines += ["const Asset kAssets[] = {"] + table + ["};", "}  // namespace", "",
              "const Asset* FindAsset(std::string_view path) {",
              "  for (const Asset& a : kAssets)",
              "    if (a.path == path) return &a;",
              "  return nullptr;", "}", "", "}  // namespace arbiter::web", ""]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)


main()

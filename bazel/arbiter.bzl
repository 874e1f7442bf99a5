"""Shared settings for arbiter's BUILD files (the CMake build's flags, in Bazel form)."""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")

# What CMakeLists.txt adds to every target of ours (generated protobuf code gets none).
# x86-64-v2 (hardware popcount) as the CMake build's default level.
ARBITER_COPTS = ["-Wall", "-Wextra", "-Werror", "-march=x86-64-v2"]

def arbiter_library(name, srcs, deps, copts = [], **kwargs):
    """A folder's library, like `add_library(arbiter_<folder> ...)` in its CMakeLists.txt.

    Its headers are the folder's *.h; it is visible everywhere and built with ARBITER_COPTS.
    """
    cc_library(
        name = name,
        srcs = srcs,
        hdrs = native.glob(["*.h"]),
        copts = ARBITER_COPTS + copts,
        deps = deps,
        visibility = ["//visibility:public"],
        **kwargs
    )

def arbiter_test(name, srcs, deps = [], data = [], copts = [], local_defines = [], slow = False, cmake_only = False, **kwargs):
    """A GoogleTest binary, one Bazel test, like tests/CMakeLists.txt's arbiter_test().

    Linked statically like the binaries, so each object is compiled once.
    Tests run from the runfiles root, so the data they read is addressed from the repo root:
    ARBITER_PERFT_DATA is tests/data/perft and ARBITER_BINARY is cli/arbiter. A test that
    reads either lists "//tests/data:perft" or "//cli:arbiter" in `data`.
    Slow tests (CMake label `slow`) are tagged `slow`; the longest integration tests, which CI
    runs through CMake alone, `cmake_only`. `bazel test //...` builds both but runs neither
    (.bazelrc's --test_tag_filters); `--test_tag_filters=` with their names runs them.
    """
    tags = kwargs.pop("tags", [])
    if slow:
        tags = tags + ["slow"]
    if cmake_only:
        tags = tags + ["cmake_only"]
    cc_test(
        name = name,
        srcs = srcs,
        deps = deps + ["@system//:gtest_main"],
        data = data,
        copts = ARBITER_COPTS + copts,
        local_defines = [
            "ARBITER_PERFT_DATA=\\\"tests/data/perft\\\"",
            "ARBITER_BINARY=\\\"cli/arbiter\\\"",
        ] + local_defines,
        linkstatic = True,
        size = kwargs.pop("size", "large" if slow else "medium"),
        tags = tags,
        **kwargs
    )

def arbiter_tests(srcs, **kwargs):
    """One arbiter_test per source file, named after it ("elo_test.cc" -> elo_test).

    The other arguments (deps, data, copts, slow, ...) are shared by all of them.
    """
    for src in srcs:
        if not src.endswith(".cc"):
            fail("arbiter_tests: %s is not a .cc file" % src)
        arbiter_test(name = src[:-len(".cc")], srcs = [src], **kwargs)

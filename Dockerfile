# One image for every role (coordinator, worker, CLI). Built by the same scripts CI runs.
#   scripts/image.sh TAG   (podman, no registry: see README "Deploy to Kubernetes")
#   docker build -t arbiter .
#   docker run --rm arbiter perft --startpos --depth 6
FROM debian:12 AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh
COPY . .
# x86-64-v2 by default: any x86-64 node since 2009. The perft counter inside is compiled for
# x86-64-v2, -v3 (PEXT) and -v4 (the AVX-512 counter), and each node runs the best its CPU has
# (engine/perft_path.h), so one image is at full perft speed on every node. ARBITER_MARCH=x86-64
# for CPUs older than 2009; ARBITER_MARCH=LEVEL builds everything for one level.
ARG ARBITER_MARCH=
# The default tests run in the build; the deployment tests (netns, prometheus) need privileges
# and programs of the host and run there (scripts/test.sh, scripts/image-test.sh), as does the
# dashboard's browser test (Chromium).
RUN scripts/build.sh ${ARBITER_MARCH:+--march=$ARBITER_MARCH} build && \
    ctest --test-dir build -LE 'slow|netns|prometheus|browser' --output-on-failure -j2

# The runtime: only the shared libraries the binary links and bubblewrap (engine sandbox); no
# compilers, no engines (cmd=builtin is the binary itself; add engines under /usr/games).
FROM debian:12-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libsqlite3-0 libspdlog1.10 libprometheus-cpp-pull1.0 \
      libprometheus-cpp-core1.0 libseccomp2 bubblewrap \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc /usr/share/man
COPY --from=build /src/build/cli/arbiter /usr/local/bin/arbiter
RUN useradd --system --uid 10001 arbiter && mkdir -p /data /cache && chown arbiter /data /cache
USER arbiter
EXPOSE 50051 9090 8080
ENTRYPOINT ["/usr/local/bin/arbiter"]
CMD ["--help"]

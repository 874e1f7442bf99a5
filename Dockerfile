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

# The runtime: the shared libraries the binary links, bubblewrap (the engine box where the node
# allows namespaces; elsewhere the worker confines engines with Landlock, which needs nothing
# installed), and Debian's Stockfish, the reference opponent (`path=/usr/games/stockfish`).
# Debian's security and point-release updates are applied at build time.
FROM debian:12-slim AS runtime
ARG VERSION=unknown
ARG REVISION=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="arbiter" \
      org.opencontainers.image.description="Distributed chess engine testing and perft" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.source="$SOURCE" \
      org.opencontainers.image.base.name="debian:12-slim" \
      io.arbiter.engines="/usr/games/stockfish"
RUN printf '%s\n' \
      'deb http://deb.debian.org/debian bookworm main' \
      'deb http://deb.debian.org/debian bookworm-updates main' \
      'deb http://deb.debian.org/debian-security bookworm-security main' \
      >/etc/apt/sources.list && rm -f /etc/apt/sources.list.d/* && \
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libprotobuf32 libsqlite3-0 libspdlog1.10 libprometheus-cpp-pull1.0 \
      libprometheus-cpp-core1.0 libseccomp2 bubblewrap stockfish \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc /usr/share/man && \
    echo "image: engines in /usr/games: $(ls /usr/games | tr '\n' ' ')"
COPY --from=build /src/build/cli/arbiter /usr/local/bin/arbiter
RUN groupadd --system --gid 10001 arbiter && useradd --system --uid 10001 --gid 10001 arbiter && \
    mkdir -p /data /cache && \
    chown 10001:10001 /data /cache && /usr/local/bin/arbiter --version
# Numeric, so that runAsNonRoot can check it without the image's /etc/passwd.
USER 10001:10001
EXPOSE 50051 8080 8081 9090 9091
ENTRYPOINT ["/usr/local/bin/arbiter"]
CMD ["--help"]

# The build variant (tag TAG-build, `scripts/image.sh --variant build`): the runtime plus a C and
# C++ toolchain, for workers that build engines from source (`source=` engines: each worker
# compiles the tree for its own CPU in the engine box). The overlays' workers use it; a worker
# without a compiler registers without a toolchain and gets no source jobs.
FROM runtime AS build-worker
USER root
RUN apt-get update && \
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential clang && \
    rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /usr/share/doc /usr/share/man && \
    echo "image: toolchain: $(cc --version | head -1); $(make --version | head -1)"
LABEL io.arbiter.variant="build"
USER 10001:10001

# The default image (no target): the runtime alone.
FROM runtime

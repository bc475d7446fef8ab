# Arbor in a container: the single executable `dist/arbor` (npm run build: Bun, the code, the SQL,
# the embedded database and the search models in one file; src/binary.ts) on Debian's C library,
# and nothing else. docs/operations.md gives the commands; scripts/container-test.sh runs them.
#   npm run build
#   docker build -t arbor .
#   docker run -d --name arbor -p 3000:3000 -v arbor-data:/data arbor
# With DATABASE_URL=postgres://… the volume holds only caches; see docs/scaling-out.md.

# ---- 1. debian:bookworm-slim: the C library the executable links (libc, libm, libpthread, libdl and
#      the loader), the user it runs as, and /data, gathered into /rootfs ----
FROM debian:bookworm-slim AS base
RUN set -eu; \
    mkdir -p /rootfs/etc /rootfs/data /rootfs/tmp /rootfs/usr/local/bin; \
    for f in /lib*/ld-linux*.so.* /lib/*-linux-gnu/libc.so.6 /lib/*-linux-gnu/libm.so.6 \
             /lib/*-linux-gnu/libpthread.so.0 /lib/*-linux-gnu/libdl.so.2 /etc/ld.so.cache /etc/nsswitch.conf; do \
      [ -e "$f" ] || continue; mkdir -p "/rootfs$(dirname "$f")"; cp -L "$f" "/rootfs$f"; \
    done; \
    echo 'arbor:x:1000:1000:Arbor:/data:/nonexistent' > /rootfs/etc/passwd; \
    echo 'arbor:x:1000:' > /rootfs/etc/group; \
    chown 1000:1000 /rootfs/data; chmod 1777 /rootfs/tmp

# ---- 2. the image: those files and the executable; no shell, no package manager ----
FROM scratch
COPY --from=base /rootfs /
COPY dist/arbor /usr/local/bin/arbor
# No NODE_ENV=production: nothing of ours reads it, and it would only change how Elysia words
# validation errors, away from what the test suite checks.
ENV PATH=/usr/local/bin \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /data
VOLUME ["/data"]
USER 1000:1000
EXPOSE 3000
# No curl in the image: the executable asks /healthz itself (src/cli/healthcheck.ts).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["arbor", "healthcheck"]
# arbor is PID 1, so SIGTERM from `docker stop` reaches the server, which drains requests (held long
# polls answer at once), checkpoints PGlite, releases the data lock and exits 0.
ENTRYPOINT ["arbor"]
CMD ["serve"]

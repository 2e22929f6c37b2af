# syntax=docker/dockerfile:1
# Vesta's container image: the relayer (default command) and the triggers service (command
# "triggers"), run by scripts/serve.ts under ts-node (transpile only) from a production install.
# Release steps (README, "Operating Vesta" > "Releasing an image"): CI builds and pushes this
# image, signs it keylessly (Sigstore), and scripts/release.ts records its digest in
# docker-compose.yml and proposes the new compose hash.
#
# The base image is pinned by digest (node 22, Debian bookworm slim); update it on purpose.
ARG NODE_IMAGE=node:22-bookworm-slim@sha256:43ac6c60b8f89723f746e8a92ce91abd5017e627ce1ddfe4238355d3a30b772c

# 1. Build: every dependency, then the contracts' bindings (typechain-types), the typed client,
#    the dashboard and the sandbox bundle (npm run build).
FROM ${NODE_IMAGE} AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build --silent

# 2. Production dependencies only (native modules built here, with the compilers of this stage).
FROM ${NODE_IMAGE} AS deps
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Runtime: no compilers, no development dependencies, not root.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    VESTA_MODE=production \
    VESTA_HOST=0.0.0.0 \
    TRIGGERS_HOST=0.0.0.0 \
    VESTA_DATA_DIR=/data/relayer \
    TRIGGERS_DATA_DIR=/data/triggers
# unshare (util-linux) gives each sandbox process a network namespace of its own.
RUN apt-get update && apt-get install -y --no-install-recommends util-linux ca-certificates && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 vesta && useradd --system --uid 10001 --gid vesta --home-dir /app --shell /usr/sbin/nologin vesta \
 && mkdir -p /data/relayer /data/triggers && chown -R vesta:vesta /data
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/package.json /app/package-lock.json /app/tsconfig.json ./
COPY --from=build --chown=root:root /app/typechain-types ./typechain-types
COPY --from=build --chown=root:root /app/dist/sandbox ./dist/sandbox
COPY --from=build --chown=root:root /app/dist/dashboard ./dist/dashboard
COPY --from=build --chown=root:root /app/client ./client
COPY --from=build --chown=root:root /app/protocol ./protocol
COPY --from=build --chown=root:root /app/relayer ./relayer
COPY --from=build --chown=root:root /app/executor ./executor
COPY --from=build --chown=root:root /app/billing ./billing
COPY --from=build --chown=root:root /app/storage ./storage
COPY --from=build --chown=root:root /app/attestation ./attestation
COPY --from=build --chown=root:root /app/triggers ./triggers
COPY --from=build --chown=root:root /app/scripts/serve.ts /app/scripts/healthcheck.js ./scripts/
USER vesta
VOLUME ["/data"]
EXPOSE 8000 8100
# GET /live of the service in this container (VESTA_PORT, or TRIGGERS_PORT for "triggers"): liveness
# only, so the container is not marked unhealthy (and restarted) when the chain is down or it is busy.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.js"]
ENTRYPOINT ["node", "--require", "ts-node/register/transpile-only", "scripts/serve.ts"]
CMD ["relayer"]

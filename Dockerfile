# refwatch's container image: the standalone Next.js server (scripts/build-standalone.ts) on Node 20.
#
#   docker build -t refwatch:0.1.0 .
#   docker run --read-only --tmpfs /tmp --tmpfs /app/.next/cache -p 127.0.0.1:3000:3000 \
#     -e REFWATCH_TOKEN=$(openssl rand -hex 24) refwatch:0.1.0
#
# CI has no container engine nor a registry to pull the base image from, so it cannot build this
# image; the build stage runs the same script CI runs and tests (tests/integration/standalone.test.ts
# starts its output read-only, as a non-root user, outside the repository), and
# tests/unit/deploy/dockerfile.test.ts holds the stages to that.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM ${NODE_IMAGE} AS build
WORKDIR /src
ENV NEXT_TELEMETRY_DISABLED=1
COPY --from=deps /src/node_modules ./node_modules
COPY . .
RUN npx tsx scripts/build-standalone.ts

FROM ${NODE_IMAGE} AS runtime
# Only node and the server: no npm, yarn or corepack, and no compiler (the slim image ships none).
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
WORKDIR /app
# The standalone server binds HOSTNAME:PORT; REFWATCH_HOST tells refwatch the same address, so it asks for a token.
ENV NODE_ENV=production NEXT_TELEMETRY_DISABLED=1 HOSTNAME=0.0.0.0 PORT=3000 REFWATCH_HOST=0.0.0.0 REFWATCH_PORT=3000
# Owned by root and not writable by the server: the root file system can be mounted read-only.
# Next writes only under .next/cache and the OS temp dir: mount tmpfs or emptyDir volumes there.
COPY --from=build --chown=0:0 /src/.next/standalone ./
USER 65532:65532
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "server.js"]

# One image for every chunklog process: `node dist/<process>.js`, bundled JavaScript on the
# production dependencies. The compose file picks the process with `command`; alone, the image
# runs the all-in-one process with its data in /data (see the last lines).

# The workspaces' manifests only, so the installs below are cached until a dependency changes.
FROM node:24-bookworm-slim AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/chunk-core/package.json packages/chunk-core/
COPY packages/client/package.json packages/client/
COPY packages/store/package.json packages/store/
COPY packages/bus/package.json packages/bus/
COPY packages/anthropic-sim/package.json packages/anthropic-sim/
COPY packages/runtime/package.json packages/runtime/
COPY packages/test-infra/package.json packages/test-infra/
COPY services/agent-worker/package.json services/agent-worker/
COPY services/gateway/package.json services/gateway/
COPY services/all-in-one/package.json services/all-in-one/
COPY apps/web/package.json apps/web/
COPY bench/package.json bench/

# Every dependency, to bundle the processes (esbuild) and build the chat app (Vite).
FROM manifests AS build
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# What the bundles import at run time: the workspaces' production dependencies (the chat app's
# packages are build-time only, bundled into apps/web/dist). The workspace packages themselves
# are inside the bundles.
FROM manifests AS production-dependencies
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@chunklog \
 && npm cache clean --force

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/dist dist
COPY --from=build /app/drizzle drizzle
COPY --from=build /app/apps/web/dist apps/web/dist
# The all-in-one process keeps its PGlite data in /data (mount a volume there). In a container it
# must listen beyond loopback, which it only does with API_KEYS set:
#   docker run -e HOST=0.0.0.0 -e API_KEYS=me:secret -p 127.0.0.1:8787:8787 -v chunklog-data:/data <image>
RUN mkdir -p /data && chown node:node /data
ENV DATA_DIR=/data
USER node
EXPOSE 8787
# The compose services bring their own checks (each process has its own port).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${PORT:-8787} && printf 'GET /healthz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
CMD ["node", "dist/all-in-one.js"]

# One image for every chunklog service: the compose file picks the entry point with `command`,
# and each command is the same npm script the tests and the README run outside Docker.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
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
# Dev dependencies are included on purpose: the services run TypeScript through tsx.
RUN npm ci --include=dev --no-audit --no-fund
COPY . .
# The chat app the gateway serves at / and the bundles in dist/: `npm start` finds them built.
RUN npm run build
# The all-in-one default keeps its PGlite data in /data (mount a volume there), writable by the
# unprivileged user the services run as. In a container it must listen beyond loopback, which it
# only does with API_KEYS set: docker run -e HOST=0.0.0.0 -e API_KEYS=me:secret -p 8787:8787
# -v chunklog-data:/data <image>. The compose services use their own commands and need neither.
RUN mkdir -p /data && chown node:node /data
ENV DATA_DIR=/data
USER node
CMD ["npm", "start"]

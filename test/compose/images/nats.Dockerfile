# Stand-in for the official nats:2-alpine image, made from Debian's nats-server, with wget for
# the health check as the alpine image has it. Flags as the command (`-js ...`) go to nats-server.
FROM chunklog-base/debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nats-server wget >/dev/null \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 4222 6222 8222
ENTRYPOINT ["nats-server"]
CMD ["-js"]

import net from 'node:net';

export interface FlakyProxy {
  /** `http://127.0.0.1:<port>`: give this to the client instead of the gateway's URL. */
  url: string;
  /** Where new connections go; change it to fail over to another gateway. */
  target: string;
  /** Connections cut so far. */
  drops: number;
  /** Cuts every open connection now. */
  dropAll(): void;
  close(): Promise<void>;
}

export interface FlakyProxyOptions {
  target: string;
  /**
   * Per connection: after how many bytes from the server it is cut (in the middle of whatever
   * is on the wire: a header, an event, a JSON string), or null to leave it alone.
   */
  dropAfterBytes?: () => number | null;
}

/** A TCP proxy between a client and a gateway that drops connections at chosen points. */
export async function startFlakyProxy(options: FlakyProxyOptions): Promise<FlakyProxy> {
  const pairs = new Set<[client: net.Socket, upstream: net.Socket]>();
  const cut = (client: net.Socket, upstream: net.Socket) => {
    if (client.destroyed) return;
    proxy.drops += 1;
    client.destroy();
    upstream.destroy();
  };
  const server = net.createServer((client) => {
    const target = new URL(proxy.target);
    const upstream = net.connect({ host: target.hostname, port: Number(target.port) });
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    let budget = options.dropAfterBytes?.() ?? null;
    client.on('data', (data) => upstream.write(data));
    upstream.on('data', (data: Buffer) => {
      if (budget !== null && data.length >= budget) {
        client.write(data.subarray(0, budget), () => cut(client, upstream));
        budget = 0;
        return;
      }
      if (budget !== null) budget -= data.length;
      client.write(data);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  const proxy: FlakyProxy = {
    url: `http://127.0.0.1:${address.port}`,
    target: options.target,
    drops: 0,
    dropAll() {
      for (const [client, upstream] of pairs) cut(client, upstream);
    },
    close: () =>
      new Promise((resolve) => {
        proxy.dropAll();
        server.close(() => resolve());
      }),
  };
  return proxy;
}

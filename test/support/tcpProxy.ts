import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy in front of one server (a Redis), for fault tests that cut one process off from it.
 * `blackhole()` stops forwarding in both directions without closing anything: every socket stays open,
 * nothing is read from it (what the process writes fills the kernel's buffers, as it would towards a
 * peer that vanished from the network), no reset, no FIN — the process sees no error, only silence.
 * Connections made meanwhile are accepted and held the same way. `restore()` resumes: what was held
 * flows on, in order (like a healed partition), so the protocol is never torn mid-command.
 */
export interface TcpProxy {
  /** The proxy's address, as a `redis://` URL for the process to connect to instead of the target. */
  readonly url: string;
  blackhole(): void;
  restore(): void;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** Starts a proxy on a free loopback port, forwarding to `target` (`redis://host:port`). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const pairs = new Set<readonly [Socket, Socket]>();
  let holed = false;
  // Forwards `from` to `to` while the proxy is not a blackhole, with backpressure.
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!holed) from.resume();
    });
  };
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    const pair = [client, upstream] as const;
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    forward(client, upstream);
    forward(upstream, client);
    if (holed) (client.pause(), upstream.pause());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('the proxy has no port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    blackhole() {
      holed = true;
      for (const [client, upstream] of pairs) (client.pause(), upstream.pause());
    },
    restore() {
      holed = false;
      for (const [client, upstream] of pairs) (client.resume(), upstream.resume());
    },
    async close() {
      for (const [client, upstream] of pairs) (client.destroy(), upstream.destroy());
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

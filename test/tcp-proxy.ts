import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `redis://…` or `postgres://…` style URL through the proxy, from the real one. */
  url(realUrl: string): string;
  /** Reset every connection and refuse new ones, as a crashed or unreachable server does. */
  cut(): void;
  /** Keep connections open but hold every byte, as a partition or a hung server does. */
  stall(): void;
  /** Pass bytes again (held bytes go through, as TCP would retransmit them). */
  restore(): void;
  /** Send new connections to another port of the same host (open ones stay where they are). */
  retarget(port: number): void;
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1:0 to a real server, for taking a store "down" without touching the service. */
export async function tcpProxy(to: { host: string; port: number }): Promise<TcpProxy> {
  const target = { ...to };
  let mode: 'up' | 'cut' | 'stall' = 'up';
  const pairs = new Set<{ a: Socket; b: Socket; held: [Socket, Buffer][] }>();
  const server = createServer((a) => {
    if (mode === 'cut') return a.resetAndDestroy();
    const b = connect(target.port, target.host);
    const pair = { a, b, held: [] as [Socket, Buffer][] };
    pairs.add(pair);
    const pipe = (from: Socket, to: Socket) =>
      from.on('data', (d: Buffer) => (mode === 'stall' ? pair.held.push([to, d]) : to.write(d)));
    pipe(a, b);
    pipe(b, a);
    const end = () => {
      pairs.delete(pair);
      a.destroy();
      b.destroy();
    };
    a.on('error', end).on('close', end);
    b.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url(realUrl) {
      const u = new URL(realUrl);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    cut() {
      mode = 'cut';
      for (const p of pairs) {
        p.a.resetAndDestroy();
        p.b.destroy();
      }
      pairs.clear();
    },
    stall() {
      mode = 'stall';
    },
    retarget(port) {
      target.port = port;
    },
    restore() {
      mode = 'up';
      for (const p of pairs) {
        for (const [to, d] of p.held) if (!to.destroyed) to.write(d);
        p.held = [];
      }
    },
    close() {
      for (const p of pairs) {
        p.a.destroy();
        p.b.destroy();
      }
      return new Promise((r) => server.close(() => r()));
    },
  };
}

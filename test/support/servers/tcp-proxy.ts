import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** `redis://…` or `postgres://…` style URL through the proxy, from the real one. */
  url(realUrl: string): string;
  /** Reset every connection and refuse new ones, as a crashed or unreachable server does. */
  cut(): void;
  /**
   * Keep connections open but hold every byte, as a partition or a hung server does: nothing
   * arrives, neither an answer nor a reset. `restore()` passes the held bytes on.
   */
  stall(): void;
  /**
   * A partition whose connections never come back, as when a NAT or a load balancer forgets them
   * or a failover moves the address: every byte of the connections open now, and of those opened
   * before `restore()`, is dropped for ever, and their ends never hear a close. Only connections
   * opened after `restore()` carry bytes.
   */
  blackhole(): void;
  /** Pass bytes again: held bytes go through, as TCP would retransmit them; black-holed connections stay silent. */
  restore(): void;
  /** Send new connections to another port of the same host (open ones stay where they are). */
  retarget(port: number): void;
  /**
   * Hold every byte this long before passing it on, in order, as a replication stream running
   * behind does (0: at once). Bytes still held when `cut()` resets the connections are lost.
   */
  delay(ms: number): void;
  /** Connections open through the proxy (silent ones included). */
  open(): number;
  close(): Promise<void>;
}

interface Pair {
  a: Socket;
  b: Socket;
  held: [Socket, Buffer][];
  /** Black-holed: bytes are dropped and a close of the server's side is not passed on. */
  dead: boolean;
}

/** A TCP proxy on 127.0.0.1:0 to a real server, for taking a store "down" without touching the service. */
export async function tcpProxy(to: { host: string; port: number }): Promise<TcpProxy> {
  const target = { ...to };
  let mode: 'up' | 'cut' | 'stall' | 'blackhole' = 'up';
  let delayMs = 0;
  const pairs = new Set<Pair>();
  const server = createServer((a) => {
    if (mode === 'cut') return a.resetAndDestroy();
    const b = connect(target.port, target.host);
    const pair: Pair = { a, b, held: [], dead: mode === 'blackhole' };
    pairs.add(pair);
    const pipe = (from: Socket, to: Socket) =>
      from.on('data', (d: Buffer) => {
        if (pair.dead) return;
        if (mode === 'stall') pair.held.push([to, d]);
        // Timers of one delay fire in the order they were set: the stream stays in order.
        else if (delayMs > 0) setTimeout(() => !to.destroyed && !pair.dead && to.write(d), delayMs);
        else to.write(d);
      });
    pipe(a, b);
    pipe(b, a);
    const end = () => {
      pairs.delete(pair);
      a.destroy();
      b.destroy();
    };
    a.on('error', end).on('close', end);
    // Through a black hole no FIN or RST comes back: the client's side stays open until the client gives up on it.
    const serverEnd = () => (pair.dead ? b.destroy() : end());
    b.on('error', serverEnd).on('close', serverEnd);
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
    blackhole() {
      mode = 'blackhole';
      for (const p of pairs) {
        p.dead = true;
        p.held = [];
      }
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
    delay(ms) {
      delayMs = ms;
    },
    open: () => pairs.size,
    close() {
      for (const p of pairs) {
        p.a.destroy();
        p.b.destroy();
      }
      return new Promise((r) => server.close(() => r()));
    },
  };
}

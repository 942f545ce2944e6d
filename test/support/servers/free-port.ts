import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * The first port the kernel hands out to outgoing connections (Linux's ip_local_port_range; the
 * IANA range's start elsewhere). A port given by `listen(0)` comes from the same range, so once it
 * is closed again, any connection the machine opens may take it as its own end before the server
 * it was meant for binds it: with fault files running side by side, one fresh-clone run lost a
 * redis-server to "Address already in use" that way.
 */
function ephemeralStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 49_152;
  } catch {
    return 49_152;
  }
}

const LOWEST = 10_000;

const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });

/**
 * A port free on 127.0.0.1 a moment ago, for a server that cannot take port 0 (redis-server,
 * postgres, a child's --port): drawn at random below the range outgoing connections take their
 * ports from, so that only another server drawing the same port can take it in between.
 */
export async function freePort(): Promise<number> {
  const highest = Math.max(ephemeralStart() - 1, LOWEST + 999);
  for (let tries = 0; tries < 100; tries++) {
    const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1));
    if (await listens(port)) return port;
  }
  throw new Error(`@payhook/test-support: no free port on 127.0.0.1 between ${LOWEST} and ${highest} in 100 draws`);
}

import net from 'node:net';

/** A port free on 127.0.0.1 a moment ago, for a server that cannot take port 0 (redis-server, postgres, a child's --port). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis, ReplyError } from 'ioredis';

/**
 * Upstash's REST protocol in front of a real Redis, as Upstash's own local server (and
 * serverless-redis-http) does: `POST /` with a command as a JSON array and `POST /pipeline` with an
 * array of them, behind `Authorization: Bearer <token>`; with `Upstash-Encoding: base64`, every
 * string in a reply is base64-encoded but a plain `OK`.
 * docs/decisions/stores.md ("What the REST bridge leaves out") says what it leaves out.
 */
export interface UpstashBridge {
  url: string;
  token: string;
  /** HTTP requests answered (or held) so far: one per round trip. */
  requests(): number;
  /** The commands run, in order (names in lower case). */
  commands(): string[];
  /** The client versions that said who they are (`Upstash-Telemetry-Sdk`, sent unless telemetry is off). */
  sdks(): string[];
  /** Hold every request from now on without an answer (a black-holed database), or answer again. */
  hold(on: boolean): void;
  close(): Promise<void>;
}

type Reply = string | number | null | Reply[];

const encode = (reply: Reply): Reply => {
  if (typeof reply === 'string') return reply === 'OK' ? reply : Buffer.from(reply).toString('base64');
  if (Array.isArray(reply)) return reply.map(encode);
  return reply;
};

export async function startUpstashBridge(redisUrl: string, token = `bridge-${crypto.randomUUID()}`): Promise<UpstashBridge> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  let requests = 0;
  let holding = false;
  const held = new Set<ServerResponse>();
  const commands: string[] = [];
  const sdks = new Set<string>();

  const run = async (command: unknown): Promise<{ result?: Reply; error?: string }> => {
    if (!Array.isArray(command) || command.length === 0) return { error: 'ERR a command is a non-empty JSON array' };
    const [name, ...args] = command.map(String);
    commands.push(name!.toLowerCase());
    try {
      return { result: (await redis.call(name!, ...args)) as Reply };
    } catch (error) {
      // A Redis error reply (NOSCRIPT, WRONGTYPE…) is the command's answer; anything else is the bridge's failure (500).
      if (error instanceof ReplyError) return { error: (error as Error).message };
      throw error;
    }
  };

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    requests++;
    const sdk = req.headers['upstash-telemetry-sdk'];
    if (typeof sdk === 'string') sdks.add(sdk);
    if (holding) {
      held.add(res);
      return;
    }
    if (req.headers.authorization !== `Bearer ${token}`) return answer(res, 401, { error: 'Unauthorized' });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    const base64 = String(req.headers['upstash-encoding']).toLowerCase() === 'base64';
    const out = (r: { result?: Reply; error?: string }) => (r.error !== undefined ? r : { result: base64 ? encode(r.result!) : r.result });
    const path = new URL(req.url ?? '/', 'http://bridge').pathname;
    if (path === '/pipeline') {
      if (!Array.isArray(body)) return answer(res, 400, { error: 'ERR a pipeline is a JSON array of commands' });
      const replies = [];
      // One command after another, each reply or error in its place, as Upstash answers a pipeline.
      for (const command of body) replies.push(out(await run(command)));
      return answer(res, 200, replies);
    }
    // Transactions (/multi-exec) and the path form of commands (/set/k/v): the stores use neither.
    if (path !== '/') return answer(res, 404, { error: `ERR the bridge does not serve ${path}` });
    const reply = await run(body);
    return answer(res, reply.error === undefined ? 200 : 400, out(reply));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => answer(res, 500, { error: `ERR bridge: ${error.message}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests: () => requests,
    commands: () => [...commands],
    sdks: () => [...sdks],
    hold(on) {
      holding = on;
      if (on) return;
      for (const res of held) res.destroy();
      held.clear();
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { merchants, SANDBOX_KEY, SECRET, start, validInput } from '../reference/helpers.js';
import { buildNextExample, EXAMPLES, freePort, startExample, type ExampleName } from './examples.js';

/**
 * A bounded slowloris on loopback against each example, started with its `start` script: 200
 * sockets trickle their headers or their body while the reference service keeps delivering
 * webhooks. Deliveries must keep succeeding. The Express, Fastify and Hono examples set server
 * timeouts (examples/shop/src/listen.ts SERVER_TIMEOUTS: headers within 10 s, the whole request
 * within 15 s, checked every second) and must cut the trickling sockets off by then. `next start`
 * keeps Node's defaults (headers 60 s, request 300 s, checked every 30 s; README "Examples"): it
 * keeps serving, and the test records that it has not cut them within the window.
 */
const SOCKETS_PER_KIND = 100;
const TRICKLE_EVERY_MS = 500;
/** headersTimeout 10 s + the 1 s check interval, with slack for a loaded machine. */
const HEADERS_CUT_BY_MS = 13_000;
/** requestTimeout 15 s + the 1 s check interval, with slack. */
const REQUEST_CUT_BY_MS = 18_000;
const WINDOW_MS = 18_500;

interface Trickler {
  kind: 'headers' | 'body';
  /** When the server closed it, in ms since the attack started; null while open. */
  closedAt: number | null;
  /** The status line the server answered, if any. */
  answer: string | null;
  stop(): void;
}

function trickle(port: number, kind: Trickler['kind'], t0: number): Trickler {
  const socket = net.connect(port, '127.0.0.1');
  let stopped = false;
  const t: Trickler = {
    kind,
    closedAt: null,
    answer: null,
    stop: () => {
      stopped = true;
      socket.destroy();
    },
  };
  let n = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  socket.on('connect', () => {
    const head =
      kind === 'headers'
        ? 'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n'
        : `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Service-Signature: sha256=${'0'.repeat(64)}\r\nContent-Length: 100000\r\n\r\n{`;
    socket.write(head);
    // One header line, or one body byte, every half second: never idle long enough for an idle timeout.
    timer = setInterval(() => socket.write(kind === 'headers' ? `X-Slow-${n++}: 1\r\n` : ' '), TRICKLE_EVERY_MS);
  });
  socket.on('data', (d: Buffer) => (t.answer ??= d.toString('latin1').split('\r\n')[0]!));
  socket.on('error', () => {});
  socket.on('close', () => {
    clearInterval(timer);
    // Only a close by the server counts, not our own at the end.
    if (!stopped) t.closedAt ??= performance.now() - t0;
  });
  return t;
}

async function attack(name: ExampleName) {
  const port = await freePort();
  const ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${port}/webhooks`), rateLimit: { limit: 100_000 } });
  const app = await startExample(name, { PORT: String(port), PAYHOOK_BASE_URL: ref.url, PAYHOOK_API_KEY: SANDBOX_KEY, PAYHOOK_WEBHOOK_SECRET: SECRET }, 240_000);
  /** One honest delivery: initialize, pay, and wait for its first attempt's answer (at most 10 s of real time). */
  const deliver = async (merchantReference: string) => {
    const init = await ref.call('POST', '/v1/transactions/initialize', { body: validInput({ merchantReference }) });
    const started = performance.now();
    await ref.call('POST', `/_sandbox/transactions/${init.json.data.reference}/pay`);
    await ref.service.clock.advance(0);
    // advance() gives a delivery 1 s of real time; a slow first answer is recorded a little later.
    let attempt = ref.service.deliveries({ reference: init.json.data.reference })[0]?.attempts[0];
    while (!attempt && performance.now() - started < 10_000) {
      // Real wait: the answer comes over a real socket from a real server under attack.
      await new Promise((r) => setTimeout(r, 20));
      attempt = ref.service.deliveries({ reference: init.json.data.reference })[0]?.attempts[0];
    }
    return { merchantReference, ms: performance.now() - started, status: attempt?.status };
  };
  try {
    // Warm up: Next loads a route's code on its first request.
    expect((await deliver(`${name}-warm-up`)).status).toBe(200);
    const t0 = performance.now();
    const tricklers = [
      ...Array.from({ length: SOCKETS_PER_KIND }, () => trickle(port, 'headers', t0)),
      ...Array.from({ length: SOCKETS_PER_KIND }, () => trickle(port, 'body', t0)),
    ];
    // Honest deliveries, one after another, for the whole window.
    const deliveries: Awaited<ReturnType<typeof deliver>>[] = [];
    for (let i = 0; performance.now() - t0 < WINDOW_MS; i++) {
      deliveries.push(await deliver(`${name}-slowloris-${i}`));
      // Real pacing: the servers' own header and request timeouts (real time) are what is tested.
      await new Promise((r) => setTimeout(r, 200));
    }
    const open = tricklers.filter((t) => t.closedAt === null).length;
    const orders = await Promise.all(deliveries.map(async (d) => (await fetch(`${app.url}/orders/${d.merchantReference}`)).json()));
    for (const t of tricklers) t.stop();
    return { tricklers, deliveries, orders, open };
  } finally {
    await app.stop();
    await ref.close();
  }
}

// The Next build first, so its CPU load does not overlap the timed attacks.
beforeAll(buildNextExample, 300_000);

describe.concurrent('slowloris: 200 trickling sockets against each example while deliveries go on', () => {
  it.each(EXAMPLES)('%s', async (name) => {
    const { tricklers, deliveries, orders } = await attack(name);
    // Normal deliveries kept succeeding, promptly, and each order's handler ran.
    expect(deliveries.length).toBeGreaterThan(15);
    expect(deliveries.map((d) => d.status)).toEqual(deliveries.map(() => 200));
    // Well inside the service's 10 s, with room for a loaded CI machine.
    expect(Math.max(...deliveries.map((d) => d.ms))).toBeLessThan(5_000);
    expect(orders.map((o) => o.events)).toEqual(deliveries.map(() => ['payment.success']));

    const headers = tricklers.filter((t) => t.kind === 'headers');
    const bodies = tricklers.filter((t) => t.kind === 'body');
    const summary = (list: Trickler[]) => ({
      closed: list.filter((t) => t.closedAt !== null).length,
      latestMs: Math.round(Math.max(0, ...list.map((t) => t.closedAt ?? 0))),
      answers: [...new Set(list.map((t) => t.answer))],
    });
    console.info(`[slowloris] ${name}: headers ${JSON.stringify(summary(headers))}, bodies ${JSON.stringify(summary(bodies))}, ${deliveries.length} deliveries`);
    if (name === 'next') {
      // `next start` cannot be given headers/request timeouts: Node's defaults (60 s, 300 s) hold.
      expect(headers.filter((t) => t.closedAt !== null && t.closedAt < 15_000)).toHaveLength(0);
      return;
    }
    // Cut off on time: trickled headers by the headers timeout, trickled bodies by the request timeout.
    expect(headers.map((t) => t.closedAt !== null && t.closedAt <= HEADERS_CUT_BY_MS)).toEqual(headers.map(() => true));
    expect(bodies.map((t) => t.closedAt !== null && t.closedAt <= REQUEST_CUT_BY_MS)).toEqual(bodies.map(() => true));
    // And not by an idle timeout before then: they were sending all along.
    expect(Math.min(...headers.map((t) => t.closedAt!))).toBeGreaterThan(9_000);
  }, 300_000);
});

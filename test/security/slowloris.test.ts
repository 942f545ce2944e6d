import net from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { merchants, SANDBOX_KEY, SECRET, start, validInput } from '@payhook/test-support/apps/reference-service';
import { buildNextExample, EXAMPLES, freePort, startExample, type ExampleName } from '@payhook/test-support/apps/examples';

/**
 * A bounded slowloris on loopback against each example, started with its `start` script: 300
 * sockets trickle their headers, a body with a Content-Length, or a chunked body that never ends,
 * while the reference service keeps delivering webhooks. Deliveries must keep succeeding.
 * Trickled bodies meet the receiver's own `bodyTimeoutMs` (10 s) on every example, Next included:
 * answered 408 and closed. Trickled headers never reach payhook: the Express, Fastify and Hono
 * examples set server timeouts (examples/shop/src/listen.ts SERVER_TIMEOUTS: headers within 10 s,
 * checked every second) and must cut them off by then; `next start` keeps Node's defaults
 * (headers 60 s, checked every 30 s; README "Examples"), and the test records that it has not.
 */
const SOCKETS_PER_KIND = 100;
const TRICKLE_EVERY_MS = 500;
/** headersTimeout 10 s + the 1 s check interval, with slack for a loaded machine. */
const HEADERS_CUT_BY_MS = 13_000;
/** bodyTimeoutMs 10 s, then up to 2 s in which the 408 is let out before the socket closes, with slack. */
const BODY_CUT_BY_MS = 14_000;
const WINDOW_MS = 16_000;

interface Trickler {
  kind: 'headers' | 'body' | 'endless';
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
    const request = `POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Service-Signature: sha256=${'0'.repeat(64)}\r\n`;
    const head = {
      headers: 'POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\n',
      body: `${request}Content-Length: 100000\r\n\r\n{`,
      endless: `${request}Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
    }[kind];
    const trickled = { headers: () => `X-Slow-${n++}: 1\r\n`, body: () => ' ', endless: () => '1\r\n \r\n' }[kind];
    socket.write(head);
    // One header line, or one body byte, every half second: never idle long enough for an idle timeout.
    timer = setInterval(() => socket.write(trickled()), TRICKLE_EVERY_MS);
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
  const ref = await start({
    allowHttpCallbacks: true,
    merchants: merchants(`http://127.0.0.1:${port}/webhooks`),
    rateLimit: { limit: 100_000 },
  });
  const app = await startExample(
    name,
    { PORT: String(port), PAYHOOK_BASE_URL: ref.url, PAYHOOK_API_KEY: SANDBOX_KEY, PAYHOOK_WEBHOOK_SECRET: SECRET },
    240_000,
  );
  /** One honest delivery: initialize, pay, and wait for its first attempt's answer (at most 10 s of real time). */
  const deliver = async (merchantReference: string) => {
    const init = await ref.call('POST', '/v1/transactions/initialize', { body: validInput({ merchantReference }) });
    const started = performance.now();
    await ref.call('POST', `/_sandbox/transactions/${init.json.reference}/pay`);
    await ref.service.clock.advance(0);
    // advance() gives a delivery 1 s of real time; a slow first answer is recorded a little later.
    let attempt = ref.service.deliveries({ reference: init.json.reference })[0]?.attempts[0];
    while (!attempt && performance.now() - started < 10_000) {
      // Real wait: the answer comes over a real socket from a real server under attack.
      await new Promise((r) => setTimeout(r, 20));
      attempt = ref.service.deliveries({ reference: init.json.reference })[0]?.attempts[0];
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
      ...Array.from({ length: SOCKETS_PER_KIND }, () => trickle(port, 'endless', t0)),
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

// One example at a time: the bounds below are times, and four attacks at once on 2 cores measured
// the machine's load as much as the receiver.
describe('slowloris: 300 trickling sockets against each example while deliveries go on', () => {
  it.each(EXAMPLES)(
    '%s',
    async (name) => {
      const { tricklers, deliveries, orders } = await attack(name);
      // Normal deliveries kept succeeding, promptly, and each order's handler ran.
      expect(deliveries.length).toBeGreaterThan(15);
      expect(deliveries.map((d) => d.status)).toEqual(deliveries.map(() => 200));
      // Well inside the service's 10 s, with room for a loaded CI machine.
      expect(Math.max(...deliveries.map((d) => d.ms))).toBeLessThan(5_000);
      expect(orders.map((o) => o.events)).toEqual(deliveries.map(() => ['payment.success']));

      const of = (kind: Trickler['kind']) => tricklers.filter((t) => t.kind === kind);
      const summary = (list: Trickler[]) => ({
        closed: list.filter((t) => t.closedAt !== null).length,
        latestMs: Math.round(Math.max(0, ...list.map((t) => t.closedAt ?? 0))),
        answers: [...new Set(list.map((t) => t.answer))],
      });
      const kinds = ['headers', 'body', 'endless'] as const;
      console.info(
        `[slowloris] ${name}: ${kinds.map((k) => `${k} ${JSON.stringify(summary(of(k)))}`).join(', ')}, ${deliveries.length} deliveries`,
      );

      // Trickled bodies, with a length or chunked without end, on every example: the receiver's
      // body deadline answers 408 and the socket closes soon after.
      for (const kind of ['body', 'endless'] as const) {
        expect(
          of(kind).map((t) => t.closedAt !== null && t.closedAt <= BODY_CUT_BY_MS),
          kind,
        ).toEqual(of(kind).map(() => true));
        expect([...new Set(of(kind).map((t) => t.answer))], kind).toEqual(['HTTP/1.1 408 Request Timeout']);
      }
      const headers = of('headers');
      if (name === 'next') {
        // `next start` cannot be given a headers timeout: Node's default (60 s) holds.
        expect(headers.filter((t) => t.closedAt !== null && t.closedAt < 15_000)).toHaveLength(0);
        return;
      }
      // Trickled headers, cut off by the server's headers timeout, and not by an idle timeout before: they were sending all along.
      expect(headers.map((t) => t.closedAt !== null && t.closedAt <= HEADERS_CUT_BY_MS)).toEqual(headers.map(() => true));
      expect(Math.min(...headers.map((t) => t.closedAt!))).toBeGreaterThan(9_000);
    },
    300_000,
  );
});

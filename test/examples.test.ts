import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { merchants, SANDBOX_KEY, SECRET, start, type Started } from './reference/helpers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const MINUTE = 60_000;

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** Start an example with its own `start` script and wait until it answers. */
async function startExample(name: string, env: Record<string, string>, readyWithinMs: number) {
  const child: ChildProcess = spawn(`${root}node_modules/.bin/pnpm`, ['--dir', `examples/${name}`, 'start'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${env.PORT}`;
  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`examples/${name} exited (${child.exitCode}):\n${output}`);
    const res = await fetch(`${url}/orders/none`).catch(() => undefined);
    if (res?.status === 404) break;
    if (Date.now() > deadline) throw new Error(`examples/${name} did not answer within ${readyWithinMs} ms:\n${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    },
  };
}

const examples: [name: string, readyWithinMs: number][] = [
  ['express', 30_000],
  ['fastify', 30_000],
  ['hono', 30_000],
  // `start` runs `next build` first.
  ['next', 240_000],
];

describe.each(examples)('examples/%s end to end against the reference service', (name, readyWithinMs) => {
  let ref: Started;
  let app: Awaited<ReturnType<typeof startExample>>;

  beforeAll(async () => {
    const port = await freePort();
    ref = await start({ allowHttpCallbacks: true, merchants: merchants(`http://127.0.0.1:${port}/webhooks`) });
    app = await startExample(
      name,
      { PORT: String(port), PAYHOOK_BASE_URL: ref.url, PAYHOOK_API_KEY: SANDBOX_KEY, PAYHOOK_WEBHOOK_SECRET: SECRET },
      readyWithinMs,
    );
  }, readyWithinMs + 10_000);
  afterAll(async () => {
    await app?.stop();
    await ref?.close();
  });

  const order = async (merchantReference: string) => (await fetch(`${app.url}/orders/${merchantReference}`)).json();

  it('checkout, pay, webhook; then a duplicate and a refund', async () => {
    const merchantReference = `${name}-order-1`;
    const checkout = await fetch(`${app.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '250.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference }),
    });
    expect(checkout.status).toBe(200);
    const { reference, checkoutUrl } = await checkout.json();
    expect(checkoutUrl).toContain(reference);
    expect(await order(merchantReference)).toEqual({ merchantReference, reference, status: 'pending', events: [] });

    expect((await ref.call('POST', `/_sandbox/transactions/${reference}/pay`)).status).toBe(200);
    await ref.service.clock.advance(0);
    expect(await order(merchantReference)).toMatchObject({ reference, status: 'completed', events: ['payment.success'] });

    // Every delivery of the refund arrives three times; each event still runs once.
    await ref.call('POST', '/_sandbox/faults', { body: { type: 'duplicate', count: 2, times: 2, reference } });
    await ref.call('POST', `/_sandbox/transactions/${reference}/refund`);
    await ref.call('POST', `/_sandbox/transactions/${reference}/complete-refund`);
    await ref.service.clock.advance(10 * MINUTE);
    expect(await order(merchantReference)).toMatchObject({
      status: 'refunded',
      events: ['payment.success', 'payment.refunding', 'payment.refunded'],
    });
    const deliveries = ref.service.deliveries({ reference });
    expect(deliveries.length).toBe(7);
    expect(deliveries.every((d) => d.state === 'delivered')).toBe(true);
  });

  it('answers a bad checkout with the service\'s message', async () => {
    const res = await fetch(`${app.url}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '250', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'bad' }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/amount must be/);
  });
});

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock } from '@payhook/testing';
import { sign, signAsync, verifySignature, verifySignatureAsync } from '../../src/index.js';

const golden = JSON.parse(readFileSync(new URL('../fixtures/golden-signatures.json', import.meta.url), 'utf8')) as {
  vectors: { secret: string; bodyBase64: string; signature: string }[];
};

describe('verification on Web Crypto', () => {
  it('agrees with openssl on the golden vectors', async () => {
    for (const v of golden.vectors) {
      const bytes = new Uint8Array(Buffer.from(v.bodyBase64, 'base64'));
      expect(await signAsync(bytes, v.secret)).toBe(v.signature);
      expect(await verifySignatureAsync(bytes, v.signature, ['other', v.secret])).toEqual({ ok: true, secretIndex: 1 });
    }
  });

  it('gives the same result as the node:crypto verifier for any body and header', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 300 }),
        fc.oneof(fc.string(), fc.constant(undefined), fc.stringMatching(/^sha256=[0-9a-f]{64}$/)),
        fc.boolean(),
        async (body, header, useRealSignature) => {
          const h = useRealSignature ? sign(body, 'k') : header;
          expect(await verifySignatureAsync(body, h, 'k')).toEqual(verifySignature(body, h, 'k'));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the build for workers and edge functions (no node:crypto)', () => {
  afterEach(() => {
    vi.doUnmock('../../src/platform/node-apis.js');
    vi.resetModules();
  });

  it('runs the whole pipeline on Web Crypto, and says what to use instead of sign', async () => {
    // What the `workerd`, `edge-light`, `worker` and `browser` conditions pick for `#platform`.
    vi.doMock('../../src/platform/node-apis.js', () => import('../../src/platform/web-apis.js'));
    vi.resetModules();
    const core = await import('../../src/index.js');
    const runs: string[] = [];
    const receiver = core
      .createReceiver({ secret: 'edge-secret', logger: { warn() {}, error() {} } })
      .on('payment.success', (e) => void runs.push(e.reference));
    const body = JSON.stringify(createEvent('payment.success'));
    const signature = await core.signAsync(body, 'edge-secret');
    const res = await receiver.handle(
      new Request('https://edge.example/webhooks', { method: 'POST', body, headers: { 'x-service-signature': signature } }),
    );
    expect(res.status).toBe(200);
    expect(runs).toHaveLength(1);
    const forged = await receiver.handle(
      new Request('https://edge.example/webhooks', {
        method: 'POST',
        body,
        headers: { 'x-service-signature': await core.signAsync(body, 'x') },
      }),
    );
    expect(forged.status).toBe(401);
    expect(() => core.sign(body, 'k')).toThrow(/^\[@payhook\/core\] sign needs node:crypto.*use signAsync/);
  });

  it('sets a budget timer per delivery, since workerd cancels the timers of a request once it is answered', async () => {
    vi.doMock('../../src/platform/node-apis.js', () => import('../../src/platform/web-apis.js'));
    vi.resetModules();
    const core = await import('../../src/index.js');
    // A manual clock, and what workerd does at the end of each request: clear the timers it set.
    const manual = manualClock(0);
    let set: unknown[] = [];
    const clock = { ...manual, setTimeout: (fn: () => void, ms: number) => (set.push(manual.setTimeout(fn, ms)), set.at(-1)) };
    const endRequest = () => {
      for (const t of set) manual.clearTimeout(t as never);
      set = [];
    };
    const receiver = core.createReceiver({
      secret: 's',
      budgetMs: 200,
      clock,
      store: core.memoryStore({ now: manual.now }),
      logger: { warn() {}, error() {} },
    });
    receiver.on('payment.success', async (e) => void (e.merchantReference === 'slow' && (await manual.sleep(600))));
    const deliver = async (merchantReference: string) => {
      const body = JSON.stringify(createEvent('payment.success', { merchantReference }));
      const headers = { 'x-service-signature': await core.signAsync(body, 's') };
      return receiver.handle(new Request('https://edge.example/webhooks', { method: 'POST', body, headers }));
    };
    expect((await deliver('quick')).status).toBe(200);
    endRequest();
    let answered: number | undefined;
    void deliver('slow').then((r) => (answered = r.status));
    // Web Crypto answers on a real thread, off the manual clock: wait until the handler sleeps on it.
    while (manual.pending() === 0) await new Promise((resolve) => setImmediate(resolve));
    await manual.advance(200);
    // A timer shared with the first delivery would have died with it, and this would still be waiting.
    expect(answered).toBe(202);
  });
});

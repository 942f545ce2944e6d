import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEvent } from '@payhook/testing';
import { sign, signAsync, verifySignature, verifySignatureAsync } from '../src/index.js';

const golden = JSON.parse(readFileSync(new URL('./fixtures/golden-signatures.json', import.meta.url), 'utf8')) as {
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

describe('a runtime without node:crypto (workers, edge functions)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('runs the whole pipeline on Web Crypto, and says what to use instead of sign', async () => {
    vi.stubGlobal('process', { ...process, getBuiltinModule: undefined });
    vi.resetModules();
    const core = await import('../src/index.js');
    const runs: string[] = [];
    const receiver = core.createReceiver({ secret: 'edge-secret', logger: { warn() {}, error() {} } })
      .on('payment.success', (e) => void runs.push(e.reference));
    const body = JSON.stringify(createEvent('payment.success'));
    const signature = await core.signAsync(body, 'edge-secret');
    const res = await receiver.handle(new Request('https://edge.example/webhooks', { method: 'POST', body, headers: { 'x-service-signature': signature } }));
    expect(res.status).toBe(200);
    expect(runs).toHaveLength(1);
    const forged = await receiver.handle(new Request('https://edge.example/webhooks', { method: 'POST', body, headers: { 'x-service-signature': await core.signAsync(body, 'x') } }));
    expect(forged.status).toBe(401);
    expect(() => core.sign(body, 'k')).toThrow(/^\[@payhook\/core\] sign needs node:crypto.*use signAsync/);
  });

  it('keeps node: imports out of the built main entry', () => {
    const dist = new URL('../dist/', import.meta.url);
    if (!existsSync(new URL('index.js', dist))) throw new Error('build @payhook/core first (pnpm build)');
    const files = [...readFileSync(new URL('index.js', dist), 'utf8').matchAll(/from\s*["']\.\/([^"']+)["']/g)].map((m) => m[1]!);
    for (const file of ['index.js', ...files]) {
      expect(readFileSync(new URL(file, dist), 'utf8')).not.toMatch(/from\s*["']node:|require\(["']node:/);
    }
  });
});

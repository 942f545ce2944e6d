import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';

// The built package, loaded twice as an app can: once through `import`, once through `require`.
// A release test: it needs `pnpm build` (the unit tier runs without one).
const dist = new URL('../../packages/core/dist/', import.meta.url);
type Core = typeof import('@payhook/core');

async function bothCopies(): Promise<{ esm: Core; cjs: Core }> {
  if (!existsSync(new URL('index.cjs', dist))) throw new Error('[payhook tests] build @payhook/core first (pnpm build)');
  const esm = (await import(/* @vite-ignore */ new URL('index.js', dist).href)) as Core;
  const cjs = createRequire(import.meta.url)(new URL('index.cjs', dist).pathname) as Core;
  return { esm, cjs };
}

describe('two copies of core in one app (ESM and CJS, or two versions)', () => {
  it('are two copies: their classes differ', async () => {
    const { esm, cjs } = await bothCopies();
    expect(esm.NonRetriableError).not.toBe(cjs.NonRetriableError);
    expect(new cjs.NonRetriableError('x')).not.toBeInstanceOf(esm.NonRetriableError);
  });

  it('a NonRetriableError from the CJS copy thrown into an ESM receiver is answered 200 rejected, and not run again', async () => {
    const { esm, cjs } = await bothCopies();
    let runs = 0;
    const receiver = esm.createReceiver({ secret: 'whsec_two_copies', logger: { warn() {}, error() {} } }).on('payment.success', () => {
      runs += 1;
      throw new cjs.NonRetriableError('no such order');
    });
    const event = createEvent('payment.success');
    const res = await receiver.handle(signedRequest(event, { secret: 'whsec_two_copies' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ outcome: 'rejected' });
    expect((await receiver.handle(signedRequest(event, { secret: 'whsec_two_copies' }))).status).toBe(200);
    expect(runs).toBe(1);
    // Its test for code of your own, which `instanceof` would fail across the copies.
    const { isNonRetriableError } = (await import(
      /* @vite-ignore */ new URL('store.js', dist).href
    )) as typeof import('@payhook/core/store');
    expect(isNonRetriableError(new cjs.NonRetriableError('x'))).toBe(true);
    expect(isNonRetriableError(new Error('x'))).toBe(false);
  });
});

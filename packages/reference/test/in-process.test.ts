import { createClock, createReferenceService } from '@payhook/reference';
import { describe, expect, it, vi } from 'vitest';

const body = JSON.stringify({ amount: '1.00', currencyCode: 'USD', customerPhone: '+251712345678', merchantReference: 'in-process' });

describe('in process, no port', () => {
  it('fetch(request) serves the API with generated credentials; the whitelist reads info.remoteAddress', async () => {
    const service = createReferenceService({ clock: 'manual', publicUrl: 'https://pay.example.test/' });
    const { apiKey } = service.generated!;
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const res = await service.fetch(new Request('http://local/v1/transactions/initialize', { method: 'POST', headers, body }));
    expect(res.status).toBe(200);
    const data = await res.json();
    expect(data.checkoutUrl).toBe(`https://pay.example.test/checkout/${data.reference}`);
    expect(service.transactions()).toEqual([
      expect.objectContaining({
        reference: data.reference,
        currencyCode: 'USD',
        customer: expect.objectContaining({ phone: '251712345678' }),
      }),
    ]);

    const far = await service.fetch(new Request('http://local/v1/transactions', { headers }), { remoteAddress: '203.0.113.9' });
    expect(far.status).toBe(403);
    const mapped = await service.fetch(new Request('http://local/v1/transactions', { headers }), { remoteAddress: '::ffff:127.0.0.1' });
    expect(mapped.status).toBe(200);
    const dashboard = await service.fetch(new Request('http://local/_dashboard'), { remoteAddress: '203.0.113.9' });
    expect(dashboard.status).toBe(403);
    expect((await service.fetch(new Request('http://localhost/_dashboard'))).status).toBe(200);
    service.close();
  });

  it('rejects bad configuration with a message that says what to do', () => {
    expect(() => createReferenceService({ merchants: [{ apiKeys: [{ key: 'pk_test_x' }], webhookSecret: 's' }] })).toThrow(
      /\[@payhook\/reference\].*generateApiKey/,
    );
    expect(() =>
      createReferenceService({
        merchants: [{ apiKeys: [{ key: 'sk_test_abcdefgh', permissions: ['everything' as never] }], webhookSecret: 's' }],
      }),
    ).toThrow(/unknown permission "everything"/);
    expect(() =>
      createReferenceService({
        merchants: [{ apiKeys: [{ key: 'sk_test_abcdefgh', permissions: ['list_platform_payment_provider'] }], webhookSecret: 's' }],
      }),
    ).not.toThrow();
    expect(() => createReferenceService({ merchants: [{ apiKeys: [], webhookSecret: 's', providers: [] }] })).toThrow(/providers is empty/);
    expect(() => createReferenceService({ merchants: [{ apiKeys: [], ipWhitelist: ['nope'], webhookSecret: 's' }] })).toThrow(
      /ipWhitelist/,
    );
  });
});

describe('clock', () => {
  it('manual time moves only when advanced, and advance fires due timers in order', async () => {
    const clock = createClock({ mode: 'manual', startAt: 1_000 });
    const fired: string[] = [];
    clock.at(1_300, () => fired.push('c'));
    clock.at(1_100, () => fired.push('a'));
    clock.at(1_200, () => {
      fired.push('b');
      // A timer set while advancing, still due within the advance, fires in the same advance.
      clock.at(clock.now() + 50, () => fired.push(`b+50 at ${clock.now()}`));
    });
    const cancel = clock.at(1_150, () => fired.push('cancelled'));
    cancel();
    // Wall time passes (vitest's fake timers: Date and timers move 20 ms); the manual clock does not.
    vi.useFakeTimers();
    try {
      await vi.advanceTimersByTimeAsync(20);
    } finally {
      vi.useRealTimers();
    }
    expect(clock.now()).toBe(1_000);
    expect(fired).toEqual([]);
    await clock.advance(250);
    expect(fired).toEqual(['a', 'b', 'b+50 at 1250']);
    expect(clock.now()).toBe(1_250);
    await clock.advance(50);
    expect(fired.at(-1)).toBe('c');
  });

  it('real time plus the advanced offset', async () => {
    // Real time is vitest's fake Date and timers here, so every figure is exact.
    vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00.000Z') });
    try {
      const clock = createClock();
      const before = Date.now();
      await clock.advance(60_000);
      expect(clock.now() - before).toBe(60_000);
      let fired = false;
      clock.at(clock.now() + 20, () => (fired = true));
      await vi.advanceTimersByTimeAsync(19);
      expect(fired).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(fired).toBe(true);
      expect(clock.now() - before).toBe(60_020);
      clock.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

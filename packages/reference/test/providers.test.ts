import { providerItemSchema, providerListSchema, providerSchema } from '@payhook/core/api';
import { createReferenceService } from '@payhook/reference';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectError, LIVE_KEY, NO_SOURCE_KEY, READ_ONLY_KEY, start, type Started } from '@payhook/test-support/apps/reference-service';

// Black box: every request goes over real HTTP to a server on 127.0.0.1, port 0.
let s: Started;
beforeEach(async () => {
  s = await start();
});
afterEach(async () => {
  await s.close();
});

describe('payment providers', () => {
  const catalogue = [
    { providerCode: 'telebirr', providerName: 'Telebirr', providerCategory: 'mobile_money', flowCode: 'ussd' },
    { providerCode: 'cbe_birr', providerName: 'CBE Birr', providerCategory: 'mobile_money', flowCode: 'mobile_banking' },
    { providerCode: 'mpesa', providerName: 'M-PESA', providerCategory: 'mobile_money', flowCode: 'ussd' },
    { providerCode: 'awash_bank', providerName: 'Awash Bank', providerCategory: 'bank', flowCode: 'mobile_banking' },
  ];

  it('GET /v1/payment-providers lists every provider with isEnabled; /list the enabled ones, compact', async () => {
    const all = await s.call('GET', '/v1/payment-providers');
    expect(all.status).toBe(200);
    expect(providerListSchema(providerSchema).parse(all.json).data).toEqual(catalogue.map((p) => ({ ...p, isEnabled: true })));
    const list = await s.call('GET', '/v1/payment-providers/list');
    expect(list.status).toBe(200);
    providerListSchema(providerItemSchema).parse(list.json);
    expect(list.json).toEqual({
      data: catalogue.map(({ providerCode, providerName, flowCode }) => ({ providerCode, providerName, flowCode })),
    });
    // Mode-aware: a live key reads the same catalogue.
    expect((await s.call('GET', '/v1/payment-providers', { key: LIVE_KEY })).json).toEqual(all.json);
  });

  it('a merchant config enables some providers; without a payment source none is enabled', async () => {
    const KEY = 'sk_test_two_providers_01';
    const other = await start({ merchants: [{ apiKeys: [{ key: KEY }], webhookSecret: 'whsec_x', providers: ['cbe_birr', 'telebirr'] }] });
    try {
      const all = (await other.call('GET', '/v1/payment-providers', { key: KEY })).json.data;
      expect(all.map((p: { providerCode: string; isEnabled: boolean }) => [p.providerCode, p.isEnabled])).toEqual([
        ['telebirr', true],
        ['cbe_birr', true],
        ['mpesa', false],
        ['awash_bank', false],
      ]);
      expect(
        (await other.call('GET', '/v1/payment-providers/list', { key: KEY })).json.data.map(
          (p: { providerCode: string }) => p.providerCode,
        ),
      ).toEqual(['telebirr', 'cbe_birr']);
    } finally {
      await other.close();
    }
    const none = await s.call('GET', '/v1/payment-providers', { key: NO_SOURCE_KEY });
    expect(none.json.data.filter((p: { isEnabled: boolean }) => p.isEnabled)).toEqual([]);
    expect((await s.call('GET', '/v1/payment-providers/list', { key: NO_SOURCE_KEY })).json).toEqual({ data: [] });
    expect(() => createReferenceService({ merchants: [{ apiKeys: [], webhookSecret: 'w', providers: ['cbebirr' as never] }] })).toThrow(
      /\[@payhook\/reference\].*unknown provider "cbebirr"; use telebirr, cbe_birr, mpesa, awash_bank/,
    );
  });

  it('403 "Missing <permission> permission" for a key without the provider permission, in the error envelope', async () => {
    expectError(
      await s.call('GET', '/v1/payment-providers', { key: READ_ONLY_KEY }),
      403,
      /^Missing get_platform_payment_provider permission/,
    );
    expectError(
      await s.call('GET', '/v1/payment-providers/list', { key: READ_ONLY_KEY }),
      403,
      /^Missing list_platform_payment_provider permission/,
    );
    const KEY = 'sk_test_list_providers_1';
    const other = await start({
      merchants: [{ apiKeys: [{ key: KEY, permissions: ['list_platform_payment_provider'] }], webhookSecret: 'whsec_x' }],
    });
    try {
      expect((await other.call('GET', '/v1/payment-providers/list', { key: KEY })).status).toBe(200);
      expectError(await other.call('GET', '/v1/payment-providers', { key: KEY }), 403, /get_platform_payment_provider/);
    } finally {
      await other.close();
    }
  });
});

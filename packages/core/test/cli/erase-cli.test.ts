import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';
import { main } from '../../src/cli/cli.js';
import { receiver, store } from '../fixtures/erase-app.js';

const app = fileURLToPath(new URL('../fixtures/erase-app.ts', import.meta.url));

describe('payhook deliveries erase', () => {
  it('erases by email, phone or reference, and says how to ask', async () => {
    const send = (reference: string, email: string | null, phone: string | null) =>
      receiver.handle(
        signedRequest(createEvent('payment.success', { reference, customer: { name: 'A', email, phone } }), { secret: 'whsec_erase_cli' }),
      );
    await send('E1', 'ada@example.com', null);
    await send('E2', null, '+234 801 000 0009');
    await send('E3', 'bob@example.com', null);
    await receiver.idle();
    expect(await store.ledger!.list()).toHaveLength(3);
    const out = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await main(['deliveries', 'erase', '--email', 'ADA@example.com', '--app', app])).toBe(0);
      expect(await main(['deliveries', 'erase', '--phone', '2348010000009', '--app', app, '--json'])).toBe(0);
      expect(await main(['deliveries', 'erase', '--reference', 'nope', '--app', app])).toBe(0);
      expect(out.mock.calls.map((c) => c[0])).toEqual(['erased 1 records', '{"erased":1}', 'erased 0 records']);
      await expect(main(['deliveries', 'erase', '--app', app])).rejects.toThrow(
        /say whose deliveries to erase: --reference <ref>, --email <email> or --phone <phone>/,
      );
    } finally {
      out.mockRestore();
    }
    expect((await store.ledger!.list()).map((e) => e.reference)).toEqual(['E3']);
  });
});

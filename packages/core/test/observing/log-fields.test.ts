import { describe, expect, expectTypeOf, it } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type DeliveryOutcome, type LogFields, type LogFunction, type LogLevel } from '../../src/index.js';

/*
 * A function logger reads the fields payhook writes without a cast (issue 51): `fields.outcome`,
 * `fields.reference`, `fields.err` and the board's audit fields are typed, the rest `unknown`.
 * The types are checked by tsc in `pnpm test`; the run checks that they are the fields it gets.
 */
describe('a function logger’s fields', () => {
  it('are typed as payhook writes them: the delivery report, the error under err, the board’s audit', () => {
    const logger: LogFunction = (_level, fields) => {
      expectTypeOf(fields).toEqualTypeOf<LogFields>();
      expectTypeOf(fields.outcome).toEqualTypeOf<DeliveryOutcome | undefined>();
      expectTypeOf(fields.status).toEqualTypeOf<number | undefined>();
      expectTypeOf(fields.reference).toEqualTypeOf<string | undefined>();
      expectTypeOf(fields.deliveryId).toEqualTypeOf<string | undefined>();
      expectTypeOf(fields.err).toEqualTypeOf<unknown>();
      expectTypeOf(fields.board?.user).toEqualTypeOf<string | undefined>();
      expectTypeOf(fields.skipped).toEqualTypeOf<number | undefined>();
      expectTypeOf(fields.anythingElse).toEqualTypeOf<unknown>();
    };
    expect(typeof logger).toBe('function');
  });

  it('carry the outcome, status, reference and event a handler’s logger reads, and the error under err', async () => {
    const lines: Array<{ level: LogLevel; outcome?: DeliveryOutcome; status?: number; reference?: string; event?: string; err: unknown }> =
      [];
    const secret = 'whsec_log_fields';
    const receiver = createReceiver({
      secret,
      store: memoryStore({ warn: false }),
      logger: (level, fields) =>
        lines.push({
          level,
          outcome: fields.outcome,
          status: fields.status,
          reference: fields.reference,
          event: fields.event,
          err: fields.err,
        }),
    }).on('payment.success', (event) => {
      if (event.reference === 'P_FAIL') throw new Error('the shop is down');
    });
    await receiver.handle(signedRequest(createEvent('payment.success', { reference: 'P_OK' }), { secret }));
    await receiver.handle(signedRequest(createEvent('payment.success', { reference: 'P_FAIL' }), { secret }));
    expect(lines.map(({ err, ...l }) => ({ ...l, err: err instanceof Error ? err.message : err }))).toEqual([
      { level: 'info', outcome: 'processed', status: 200, reference: 'P_OK', event: 'payment.success', err: undefined },
      { level: 'error', outcome: 'failed', status: 500, reference: 'P_FAIL', event: 'payment.success', err: 'the shop is down' },
    ]);
  });
});

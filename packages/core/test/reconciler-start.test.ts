import { manualClock } from '@payhook/testing';
import { describe, expect, it, vi } from 'vitest';
import { createReceiver, createReconciler, type ReconcileClient } from '../src/index.js';

describe('reconciler.start', () => {
  it('logs a failed run through the logger given (fields first, the error under err) and runs again at the next tick', async () => {
    const clock = manualClock();
    // The service, down: every list call fails as a client does when its connection is refused.
    const client: ReconcileClient = {
      transactions: {
        // biome-ignore lint/correctness/useYield: a source that fails before its first row
        async *listAll() {
          throw new Error('[@payhook/client] GET /v1/transactions got no answer: could not reach the service');
        },
      },
    };
    const lines: { fields: { err?: unknown }; message: string }[] = [];
    const reconciler = createReconciler({
      client,
      receiver: createReceiver({ secret: 'whsec_reconciler_start', logger: {} }),
      clock,
      logger: { error: (fields: { err?: unknown }, message: string) => void lines.push({ fields, message }) },
    });
    const stop = reconciler.start({ everyMs: 60_000 });
    try {
      // The first run starts at once and fails.
      await vi.waitFor(() => expect(lines).toHaveLength(1), { timeout: 10_000 });
      await clock.advance(60_000);
      await vi.waitFor(() => expect(lines).toHaveLength(2), { timeout: 10_000 });
    } finally {
      stop();
    }
    expect(lines[0]!.message).toBe('[@payhook/core] a reconcile run failed; the next one will try again');
    expect(lines[0]!.fields.err).toBeInstanceOf(Error);
  });
});

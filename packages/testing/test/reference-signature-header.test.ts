import { describe, expect, it } from 'vitest';
import { createReceiver, memoryStore } from '@payhook/core';
import { startReferenceService } from '@payhook/testing';

const quiet = { info() {}, warn() {}, error() {} };

describe("startReferenceService's signatureHeader (issue 33)", () => {
  it('signs with the header given at the top, as ePay does, and a receiver set the same way takes the delivery', async () => {
    const ref = await startReferenceService({ signatureHeader: 'X-Epay-Signature' });
    try {
      const runs: string[] = [];
      const receiver = createReceiver({
        secret: ref.webhookSecret,
        signatureHeader: 'X-Epay-Signature',
        store: memoryStore(),
        logger: quiet,
      }).on('payment.success', (event) => void runs.push(event.reference));
      await ref.deliverTo(receiver);
      const { reference } = await ref.createTransaction();
      await ref.pay(reference);
      // Ignored, the option left the default header, and this receiver answered 401.
      expect(ref.deliveries({ reference }).flatMap((d) => d.attempts.map((a) => a.status))).toEqual([200]);
      expect(runs).toEqual([reference]);
    } finally {
      await ref.close();
    }
  });

  it('refuses two different headers, at the top and in service, saying to give it once', async () => {
    await expect(
      startReferenceService({ signatureHeader: 'X-Epay-Signature', service: { signatureHeader: 'X-Other-Signature' } }),
    ).rejects.toThrow(
      /^\[@payhook\/testing\] startReferenceService: signatureHeader is "X-Epay-Signature" but service\.signatureHeader is "X-Other-Signature"; give it once, at the top\.$/,
    );
  });
});

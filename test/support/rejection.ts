import { PaymentServiceError } from '@payhook/client';
import { expect } from 'vitest';

/** The `PaymentServiceError` a client call failed with; the test fails if it resolved or threw anything else. */
export async function rejection(promise: Promise<unknown>): Promise<PaymentServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PaymentServiceError);
  return error as PaymentServiceError;
}

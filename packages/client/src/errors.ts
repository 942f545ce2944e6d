import { errorEnvelopeSchema } from '@payhook/core/api';

/** The request a failure belongs to, without the API key. */
export interface FailedRequest {
  /** `GET`, `POST`, … */
  method: string;
  /** The full URL called. */
  url: string;
  /** The `X-Idempotency-Key` the request carried, for an initialize. */
  idempotencyKey?: string;
  /** False when the input was refused before anything was sent. */
  sent: boolean;
}

/**
 * Every failure of a client call: an error answer of the service (with its message), an input
 * refused before sending, a timeout or a network error (status 0), or an answer whose shape is not
 * the documented one.
 *
 * @example
 * try {
 *   await client.transactions.verify(reference);
 * } catch (error) {
 *   if (error instanceof PaymentServiceError && error.status === 400) console.log(error.serviceMessage);
 * }
 */
export class PaymentServiceError extends Error {
  /** Always `PaymentServiceError`. */
  override name = 'PaymentServiceError';
  constructor(
    /** The HTTP status, or 0 when no answer came (timeout, connection refused). */
    readonly status: number,
    /** The service's own message (its error body), or what went wrong locally. */
    readonly serviceMessage: string,
    /** The request that failed, without the API key. */
    readonly request: FailedRequest,
    /** The wait the service's `Retry-After` asked for, in ms, when it sent one. */
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(
      `[@payhook/client] ${request.method} ${new URL(request.url).pathname} ${status === 0 ? 'got no answer' : `failed with ${status}`}: ${serviceMessage}`,
      options,
    );
  }
}

/**
 * The service's words in an error body: the envelope's `data.message` (section 2.4), or the
 * top-level `message` of the framework's own refusals (a 403 for a missing permission answers
 * `{ statusCode, message, error }`; `message` may be a list). Undefined when neither is there.
 */
export function serviceMessageOf(payload: unknown): string | undefined {
  const envelope = errorEnvelopeSchema.safeParse(payload);
  if (envelope.success) return envelope.data.data.message;
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { message, error } = payload as { message?: unknown; error?: unknown };
  if (typeof message === 'string' && message !== '') return message;
  if (Array.isArray(message) && message.length > 0 && message.every((m) => typeof m === 'string')) return message.join('; ');
  if (typeof error === 'string' && error !== '') return error;
  return undefined;
}

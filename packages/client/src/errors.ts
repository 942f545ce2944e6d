/** The request a failure belongs to, without the API key. */
export interface FailedRequest {
  method: string;
  url: string;
  idempotencyKey?: string;
  /** False when the input was refused before anything was sent. */
  sent: boolean;
}

/**
 * Every failure of a client call: an error answer of the service (with its envelope's message),
 * an input refused before sending, a timeout or a network error (status 0), or an answer whose
 * shape is not the documented one.
 *
 * @example
 * try {
 *   await client.transactions.verify(reference);
 * } catch (error) {
 *   if (error instanceof PaymentServiceError && error.status === 400) console.log(error.serviceMessage);
 * }
 */
export class PaymentServiceError extends Error {
  override name = 'PaymentServiceError';
  constructor(
    /** The HTTP status, or 0 when no answer came (timeout, connection refused). */
    readonly status: number,
    /** The service's own message (its error envelope), or what went wrong locally. */
    readonly serviceMessage: string,
    readonly request: FailedRequest,
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(`[@payhook/client] ${request.method} ${new URL(request.url).pathname} ${status === 0 ? 'got no answer' : `failed with ${status}`}: ${serviceMessage}`, options);
  }
}

import { bodyUnavailable } from '../reading/body-unavailable.js';
import type { Clock } from '../base/clock.js';
import { signatureHeaderSeen } from '../settings/options.js';
import { readBodyLimited } from '../reading/read-body.js';
import type { RawDelivery } from '../contracts/delivery.js';

/**
 * What a web `Request` holds for the pipeline: method, signature header, and the body's bytes
 * counted against the limit as they stream, or why there are none. Like every adapter, it only
 * reads; `intake` decides the answer.
 */
export async function readRequest(
  request: Request,
  limits: { maxBodyBytes: number; bodyTimeoutMs: number; signatureHeader: string; clock: Clock },
  framework: string | undefined,
): Promise<RawDelivery> {
  const { method, headers } = request;
  const signature = headers.get(limits.signatureHeader) ?? undefined;
  const seen = signature === undefined ? signatureHeaderSeen(limits.signatureHeader, (name) => headers.has(name)) : undefined;
  // Literal objects of one shape, not spreads: this runs for every delivery.
  if (method !== 'POST') return { method, signature, signatureHeaderSeen: seen };
  if (request.bodyUsed) {
    const error = new Error(bodyUnavailable(framework, undefined, 'request'));
    return { method, signature, signatureHeaderSeen: seen, problem: 'unavailable', framework, error };
  }
  const body = await readBodyLimited(request, limits.maxBodyBytes, { ms: limits.bodyTimeoutMs, clock: limits.clock });
  return typeof body === 'string'
    ? { method, signature, signatureHeaderSeen: seen, problem: body }
    : { method, signature, signatureHeaderSeen: seen, body };
}

import { bodyUnavailable } from '../body-unavailable.js';
import { readBodyLimited } from '../read-body.js';
import type { RawDelivery } from './intake.js';

/**
 * What a web `Request` holds for the pipeline: method, signature header, and the body's bytes
 * counted against the limit as they stream, or why there are none. Like every adapter, it only
 * reads; `intake` decides the answer.
 */
export async function readRequest(
  request: Request,
  limits: { maxBodyBytes: number; signatureHeader: string },
  framework: string | undefined,
): Promise<RawDelivery> {
  const { method } = request;
  const signature = request.headers.get(limits.signatureHeader) ?? undefined;
  if (method !== 'POST') return { method, signature };
  if (request.bodyUsed) {
    const error = new Error(bodyUnavailable(framework, undefined, 'request'));
    return { method, signature, problem: 'unavailable', framework, error };
  }
  const body = await readBodyLimited(request, limits.maxBodyBytes);
  return body === 'too-large' ? { method, signature, problem: 'too-large' } : { method, signature, body };
}

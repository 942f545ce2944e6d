import { syncHmac } from '#platform';
import type { Awaitable } from '../base/maybe-async.js';
import { createVerifier, verifySignatureAsync, type RawBody, type VerifyResult } from '../protocol/signature.js';

/**
 * The signature step: Node's crypto where the package's export conditions chose it (synchronous,
 * keys prepared once), Web Crypto elsewhere.
 */
export function verifyStep(secrets: readonly string[]): (body: RawBody, header: unknown) => Awaitable<VerifyResult> {
  if (syncHmac) return createVerifier(secrets);
  return (body, header) => verifySignatureAsync(body, header, secrets);
}

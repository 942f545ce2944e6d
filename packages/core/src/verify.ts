/**
 * `@payhook/core/verify`: the signature alone, for an app that checks a webhook's HMAC itself and
 * wants nothing else loaded (a function's first delivery pays for every import). The same
 * functions as the root's; `createReceiver` does all of it, and more.
 *
 * @module
 */
export {
  createVerifier,
  EPAY_SIGNATURE_HEADER,
  SIGNATURE_HEADER,
  sign,
  signAsync,
  verifySignature,
  verifySignatureAsync,
  type RawBody,
  type VerifyResult,
} from './protocol/signature.js';

import type { Mode } from '../protocol/payment-lifecycle.js';
import type { SignatureReason, HeaderDefect, SignatureHint } from '../contracts/delivery.js';
import type { Awaitable } from '../base/maybe-async.js';
import { perMinute } from '../base/per-minute.js';
import { SIGNATURE_PREFIX as PREFIX, type RawBody, type VerifyResult } from '../protocol/signature.js';

export interface SignatureDiagnosis {
  reason: SignatureReason;
  /** With `unknown-account`: the name the request gave, when it is one an account could have. */
  accountNamed?: string;
  /** With `missing`: the other known signature header the delivery carried (`signatureHeader` names the wrong one). */
  signatureHeaderSeen?: string;
  defect?: HeaderDefect;
  hints?: SignatureHint[];
}

export interface DiagnoseSettings {
  secrets: readonly string[];
  /** The environment the secrets belong to, when the merchant said (`mode` option). */
  mode: Mode | undefined;
  /** The receiver's own verifier (its secrets, prepared once), to try re-serialisations of the body with. */
  verify: (body: RawBody, header: unknown) => Awaitable<VerifyResult>;
  /** The receiver's clock: the hints' budget is per minute on it. */
  now: () => number;
}

export interface DiagnoseInput {
  body: RawBody;
  header: unknown;
  /** The other known signature header the delivery carried, when the configured one was absent. */
  signatureHeaderSeen?: string;
  /** With `accounts`: the account whose secrets were tried, in place of the receiver's. */
  account?: { secrets: readonly string[]; verify: DiagnoseSettings['verify'] };
}

/** Bodies larger than this get no re-serialisation check: a webhook's JSON is about 1 KB. */
const DIAGNOSE_MAX_BYTES = 16 * 1024;
/** Nor do bodies nested deeper than the service's events (3 levels): a stranger's 6,000 `[` would overflow the stack. */
const DIAGNOSE_MAX_DEPTH = 16;
/**
 * Refusals per minute whose body is examined (parsed, re-serialised and hashed again for the
 * hints). Anyone can post a wrong signature: past this, a refusal costs what a plain 401 costs.
 * A misconfigured receiver is refused every delivery, so the first few a minute say why.
 */
export const HINTS_PER_MINUTE = 5;
const HEX64 = /^[0-9a-fA-F]{64}$/;

/** The defect of a header the verifier called malformed. */
export function headerDefect(header: unknown): HeaderDefect {
  if (Array.isArray(header) || (typeof header === 'string' && header.includes(','))) return 'joined';
  if (typeof header !== 'string') return 'not-text';
  if (header.trim() !== header) return 'whitespace';
  const hasPrefix = header.slice(0, PREFIX.length).toLowerCase() === PREFIX;
  const hex = hasPrefix ? header.slice(PREFIX.length) : header;
  if (!hasPrefix && HEX64.test(hex)) return 'no-prefix';
  if (HEX64.test(hex)) return 'upper-case';
  return hex.length === 64 ? 'not-hex' : 'length';
}

/**
 * The receiver's diagnosis of refused signatures: why a delivery's signature failed, in terms the
 * merchant can act on. Runs only on failure, never throws, and never changes the answer (a bare
 * 401); the body is examined for at most HINTS_PER_MINUTE refusals a minute, on bounded transforms.
 */
export function createDiagnosis(
  s: DiagnoseSettings,
): (verdict: Exclude<VerifyResult, { ok: true }>, input: DiagnoseInput) => Promise<SignatureDiagnosis> {
  // A secret padded with whitespace is a fact of the configuration: known once, free to report.
  const isPadded = (secrets: readonly string[]) => secrets.some((secret) => secret.trim() !== secret && secret.trim() !== '');
  const padded = isPadded(s.secrets);
  const mayExamine = perMinute(HINTS_PER_MINUTE, s.now);
  return async (verdict, input) => {
    if (verdict.reason === 'malformed') return { reason: 'malformed', defect: headerDefect(input.header) };
    if (verdict.reason === 'missing' && input.signatureHeaderSeen !== undefined)
      return { reason: 'missing', signatureHeaderSeen: input.signatureHeaderSeen };
    if (verdict.reason !== 'mismatch') return { reason: verdict.reason };
    const hints: SignatureHint[] = (input.account ? isPadded(input.account.secrets) : padded) ? ['secret-whitespace'] : [];
    try {
      if (mayExamine()) hints.push(...(await bodyHints(input.account ? { ...s, verify: input.account.verify } : s, input)));
    } catch {
      // A body no bound foresaw: the refusal stands without a hint.
    }
    return hints.length > 0 ? { reason: 'mismatch', hints } : { reason: 'mismatch' };
  };
}

/** The hints that need the body: a re-serialised JSON that verifies, and a delivery for the other environment. */
async function bodyHints(s: DiagnoseSettings, { body, header }: DiagnoseInput): Promise<SignatureHint[]> {
  const size = typeof body === 'string' ? body.length : body.byteLength;
  if (size > DIAGNOSE_MAX_BYTES) return [];
  const text = typeof body === 'string' ? body : decoder.decode(body);
  const value = shallow(text) ? parse(text) : undefined;
  if (value === undefined) return [];
  const hints: SignatureHint[] = [];
  for (const form of [JSON.stringify(value), JSON.stringify(value, null, 2), JSON.stringify(value, null, 4)]) {
    if (form !== text && (await s.verify(form, header)).ok) {
      hints.push('re-serialised');
      break;
    }
  }
  const sent = (value as { mode?: unknown }).mode;
  if (s.mode !== undefined && (sent === 'live' || sent === 'sandbox') && sent !== s.mode) hints.push('mode');
  return hints;
}

/** Whether JSON text nests at most DIAGNOSE_MAX_DEPTH deep (brackets inside strings do not count). */
function shallow(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > DIAGNOSE_MAX_DEPTH) return false;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return true;
}

const decoder = new TextDecoder();

function parse(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

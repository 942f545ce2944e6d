// The fix a refused signature's log line names (observing/report.ts): on every receiver's path, so
// apart from the diagnosis itself (./diagnose.ts), which is loaded at the first refusal (issue 54).
import type { HeaderDefect, SignatureHint } from '../contracts/delivery.js';
import type { SignatureDiagnosis } from './diagnose.js';

/** What to do about a diagnosis, for the log line. */
export function signatureFix(d: SignatureDiagnosis, header: string, mode?: string): string {
  switch (d.reason) {
    case 'missing':
      if (d.signatureHeaderSeen === undefined)
        return `no ${header} header: if this is the service, a proxy or framework in front of payhook dropped or renamed it.`;
      // An ePay receiver is right: the sender is the one to fix (the reference service started without --signature-header).
      return header === 'x-epay-signature'
        ? `no ${header} header, but a ${d.signatureHeaderSeen} header came. ePay's real deliveries carry X-Epay-Signature, so keep the receiver as it is and fix the sender: start the reference service with --signature-header X-Epay-Signature (its --state file then keeps it). Set signatureHeader to '${d.signatureHeaderSeen}' only if your sender is meant to use it.`
        : `no ${header} header, but a ${d.signatureHeaderSeen} header came: set the receiver's signatureHeader to '${d.signatureHeaderSeen}' (ePay's real deliveries carry X-Epay-Signature).`;
    case 'unknown-account':
      return d.accountNamed === undefined
        ? 'the request names no account (accounts.from: the last segment of its path, or your header): 1 to 64 letters, digits, _ or -. Check the callbackUrl your platform gives the service.'
        : `accounts.resolve knows no account ${d.accountNamed}: a stranger's guess, or an account missing from your table (a new one is looked up again within a minute).`;
    case 'no-secret':
      return 'no usable webhook secret: set `secret` to the webhook secret from your dashboard.';
    case 'not-raw-body':
      return 'the body given was not the raw bytes: give payhook the untouched request.';
    case 'malformed':
      return `the ${header} header is ${DEFECTS[d.defect ?? 'length']}; the service sends \`sha256=\` and 64 lower-case hex digits, so something between it and payhook changed the header.`;
    case 'mismatch': {
      const hints = (d.hints ?? []).map((h) => HINTS[h](mode));
      return hints.length > 0
        ? `no secret matched: ${hints.join('; ')}.`
        : 'no secret matched: check that `secret` is this endpoint’s webhook secret (sandbox and live differ) and that the body reaches payhook byte for byte.';
    }
  }
}

const DEFECTS: Record<HeaderDefect, string> = {
  joined: 'two signatures joined by a comma (the header was sent twice, or a proxy added one)',
  whitespace: 'padded with whitespace',
  'upper-case': 'in upper case',
  'no-prefix': 'missing its `sha256=` prefix',
  length: 'not 64 hex digits long',
  'not-hex': 'not hexadecimal',
  'not-text': 'not text',
};

const HINTS: Record<SignatureHint, (mode?: string) => string> = {
  'secret-whitespace': () => 'the configured secret has whitespace around it (a trailing newline from a file or env var?); trim it',
  're-serialised': () =>
    'the body is not the bytes the service signed, but a re-serialised JSON of it verifies: a body parser or proxy re-wrote it; give payhook the raw bytes',
  mode: (mode) =>
    `the delivery is for the other environment than this receiver's secret (mode: '${mode}'): use that environment's webhook secret`,
};

// What toHaveBeenDelivered reads from its value, and the message it fails with.
import type { DeliverResult } from '../delivering/delivery-report.js';

/** One delivery as the matcher sees it: a `deliver()` run or a reference service `Delivery`. */
export interface DeliveredItem {
  label: string;
  state: string;
  attempts: { status: number | null; outcome: string | null; error: string | null }[];
  /** The header the signature was sent in, when the delivery records it. */
  signatureHeader: string | undefined;
}

interface AttemptLike {
  status?: unknown;
  /** `deliver()`'s report: payhook's answer `{"outcome": …}`, already read. */
  outcome?: unknown;
  /** The reference service's attempt: the start of the receiver's answer. */
  responseBody?: unknown;
  error?: unknown;
}

interface DeliveryLike {
  id?: string;
  index?: number;
  event?: string;
  reference?: string;
  state?: unknown;
  attempts?: unknown;
  signatureHeader?: unknown;
}

/** The receiver's outcome name (payhook answers `{"outcome":"unauthorized"}`), or null for another answer. */
function outcomeOf(a: AttemptLike): string | null {
  if (typeof a.outcome === 'string') return a.outcome;
  if (typeof a.responseBody !== 'string') return null;
  try {
    const outcome = (JSON.parse(a.responseBody) as { outcome?: unknown } | null)?.outcome;
    return typeof outcome === 'string' ? outcome : null;
  } catch {
    return null;
  }
}

function itemOf(value: unknown, index: number): DeliveredItem | undefined {
  const v = value as DeliveryLike;
  if (typeof v !== 'object' || v === null || typeof v.state !== 'string' || !Array.isArray(v.attempts)) return undefined;
  return {
    label: `${v.id ?? `delivery ${v.index ?? index}`} (${v.event ?? '?'} ${v.reference ?? ''})`.replace(/ \)$/, ')'),
    state: v.state,
    attempts: (v.attempts as AttemptLike[]).map((a) => ({
      status: typeof a.status === 'number' ? a.status : null,
      outcome: outcomeOf(a),
      error: typeof a.error === 'string' ? a.error : null,
    })),
    signatureHeader: typeof v.signatureHeader === 'string' ? v.signatureHeader : undefined,
  };
}

/** The deliveries of a `deliver()` result, one of its deliveries, or `ref.deliveries()`; undefined for anything else. */
export function deliveredItems(received: unknown): DeliveredItem[] | undefined {
  const result = received as Partial<DeliverResult> | undefined;
  const list =
    typeof result === 'object' && result !== null && Array.isArray(result.deliveries)
      ? result.deliveries
      : Array.isArray(received)
        ? received
        : [received];
  const items: DeliveredItem[] = [];
  for (const value of list as unknown[]) {
    const item = itemOf(value, items.length);
    if (!item) return undefined;
    items.push(item);
  }
  return items;
}

/** `401 unauthorized`, `503`, or `no answer (timed out: …)`. */
function attemptText(a: DeliveredItem['attempts'][number]): string {
  if (a.status === null) return a.error ? `no answer (${a.error})` : 'no answer';
  return a.outcome === null ? String(a.status) : `${a.status} ${a.outcome}`;
}

/** A 401 that is payhook's `unauthorized`, or a 401 of a receiver that does not name its outcome. */
const refusedSignature = (a: DeliveredItem['attempts'][number]) => a.status === 401 && (a.outcome === null || a.outcome === 'unauthorized');

/** What to check when attempts were refused for their signature, naming the header the service sent. */
function signatureHint(items: DeliveredItem[]): string | undefined {
  const refused = items.filter((i) => i.attempts.some(refusedSignature));
  if (refused.length === 0) return undefined;
  const headers = [...new Set(refused.map((i) => i.signatureHeader).filter((h): h is string => h !== undefined))];
  const header =
    headers.length > 0
      ? `the header the service sent, ${headers.join(' or ')}`
      : 'the header the service signs in (x-service-signature unless its signatureHeader says otherwise)';
  return (
    "  hint: the receiver refused the signature (401): check that the receiver's secret is the webhook secret the service signs with " +
    `(the secret given to deliver, or ref.webhookSecret; sandbox and live secrets differ), and that the receiver's signatureHeader names ${header}.`
  );
}

/** The matcher's message: every delivery with each attempt's status and outcome, and a hint for signature refusals. */
export function deliveredMessage(items: DeliveredItem[], pass: boolean): string {
  if (items.length === 0) return 'expected deliveries, but there were none';
  const lines = items.map((i) => `  ${i.label}: ${i.state}, attempts answered ${i.attempts.map(attemptText).join(', ') || 'none'}`);
  const hint = pass ? undefined : signatureHint(items);
  return (
    (pass ? 'expected some delivery not to have been delivered, but every one got a 2xx:\n' : 'expected every delivery to get a 2xx:\n') +
    [...lines, ...(hint ? [hint] : [])].join('\n')
  );
}

import type { MerchantConfig } from '../domain/merchants.js';

export interface BannerParts {
  /** The address `serve` listens on. */
  url: string;
  /** The merchants, each with an id (`setupMerchants` gives every one of them its id). */
  merchants: MerchantConfig[];
  /** Per merchant, same order: its lines about credentials (`setupMerchants`). */
  shown: string[][];
  /** The state file's line, with --state. */
  state?: string;
  /** The signature header's line. */
  signature: string;
}

const NO_CALLBACK_FIRST = '(none: pass --callback-url or callbackUrl at initialize)';
const NO_CALLBACK_OTHER = '(none: pass callbackUrl at initialize)';

/**
 * `serve`'s banner. With one merchant, its credentials and callback URL as they always were; with
 * several (a platform's accounts), a block per merchant named by its id, so that each account's
 * generated key and secret can be told apart.
 *
 * @example
 * out(banner({ url, merchants, shown, signature: '  signed in       X-Service-Signature' }));
 */
export function banner({ url, merchants, shown, state, signature }: BannerParts): string {
  const head = [`payhook-reference listening on ${url}`, `  dashboard       ${url}/_dashboard`];
  const stateLines = state === undefined ? [] : [state];
  if (merchants.length === 1) {
    const only = merchants[0]!;
    return [...head, ...shown[0]!, ...stateLines, `  callback URL    ${only.callbackUrl ?? NO_CALLBACK_FIRST}`, signature, ''].join('\n');
  }
  const blocks = merchants.flatMap((m, i) => [
    `  merchant        ${m.id}${m.name !== undefined && m.name !== m.id ? ` (${m.name})` : ''}`,
    ...shown[i]!.map((line) => `  ${line}`),
    `    callback URL    ${m.callbackUrl ?? (i === 0 ? NO_CALLBACK_FIRST : NO_CALLBACK_OTHER)}`,
  ]);
  return [
    ...head,
    ...stateLines,
    `  merchants       ${merchants.length} (--api-key, --webhook-secret and --callback-url apply to the first)`,
    ...blocks,
    signature,
    '',
  ].join('\n');
}

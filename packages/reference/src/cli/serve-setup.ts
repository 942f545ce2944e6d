import { readFileSync } from 'node:fs';
import { signatureHeaderName } from '@payhook/core/api';
import {
  DEFAULT_MERCHANT,
  generateApiKey,
  generateWebhookSecret,
  hashKey,
  type ApiKeyConfig,
  type MerchantConfig,
} from '../domain/merchants.js';
import type { StateFile } from '../state/state-file.js';
import { UsageError } from './common.js';

export interface ConfigFile {
  merchants?: MerchantConfig[];
  allowHttpCallbacks?: boolean;
  publicUrl?: string;
}

export interface ServeFlags {
  'api-key'?: string[];
  'webhook-secret'?: string;
  'callback-url'?: string;
  config?: string;
  state?: string;
}

const mask = (secret: string) => `${secret.slice(0, 8)}…${secret.slice(-4)} (given; not shown)`;

export function readConfig(file: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the config file ${file} (${(error as Error).message}); check the path.`);
  }
  let parsed: ConfigFile;
  try {
    parsed = JSON.parse(text) as ConfigFile;
  } catch (error) {
    throw new UsageError(`${file} is not valid JSON (${(error as Error).message}).`);
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed.merchants !== undefined && !Array.isArray(parsed.merchants))) {
    throw new UsageError(`${file} must hold a JSON object whose "merchants" is a list.`);
  }
  parsed.merchants?.forEach((m, i) => {
    const problem = merchantProblem(m);
    if (problem) throw new UsageError(`${file}: merchants[${i}] ${problem}.`);
  });
  return parsed;
}

/** What is wrong with one entry of the config's merchants, before anything reads it; the service checks the rest. */
function merchantProblem(m: unknown): string | null {
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'must be an object such as { "id": "shop-a" }';
  const { id, apiKeys, webhookSecret } = m as Record<string, unknown>;
  if (id !== undefined && (typeof id !== 'string' || id === '')) return '"id" must be a non-empty string, such as "shop-a"';
  if (apiKeys !== undefined && !Array.isArray(apiKeys)) return '"apiKeys" must be a list, such as [{ "key": "sk_test_…" }]';
  if (webhookSecret !== undefined && typeof webhookSecret !== 'string')
    return '"webhookSecret" must be a string (leave it out to generate one)';
  return null;
}

/** A key as a state file keeps it: its sha256 digest and mode, never the key. */
function digested(k: ApiKeyConfig): ApiKeyConfig {
  if (k.key === undefined) return k;
  const { key, ...rest } = k;
  return { ...rest, sha256: hashKey(key), mode: key.startsWith('sk_test_') ? 'sandbox' : 'live' };
}

const isSandbox = (k: ApiKeyConfig) => (k.key ?? '').startsWith('sk_test_') || k.mode === 'sandbox';

/** What `setupMerchants` gives `serve`: the merchants, and per merchant (same order) its banner lines about credentials. */
export interface MerchantSetup {
  merchants: MerchantConfig[];
  shown: string[][];
}

/**
 * The merchants `serve` runs with, and the banner lines about their credentials. From a state
 * file when one was saved (flags add keys to the first merchant or set its callback URL), else
 * from --config and the flags (which apply to the first merchant), with a sandbox key and a
 * webhook secret generated for each merchant that has none (printed once). Every merchant gets
 * its id (`merchant_<n>` when the file gives none), so the banner and a state file name it.
 * With --state, keys are kept as sha256 digests only.
 */
export function setupMerchants(flags: ServeFlags, config: ConfigFile, saved: StateFile | null): MerchantSetup {
  const keys = flags['api-key'] ?? [];
  for (const key of keys) {
    if (!/^sk_(test|live)_[A-Za-z0-9_-]{8,}$/.test(key)) {
      throw new UsageError(
        '--api-key: an API key must look like sk_test_… (sandbox) or sk_live_… (live) with at least 8 more characters of A-Z, a-z, 0-9, _ or -.',
      );
    }
  }
  let merchants: MerchantConfig[];
  let shown: string[][];
  if (saved) {
    if (flags.config) {
      throw new UsageError(
        `--config cannot be used with the existing state file ${flags.state}: its merchants come from that file. Drop --config, or pass a new --state file.`,
      );
    }
    merchants = saved.merchants.map((m) => ({ ...m, apiKeys: [...m.apiKeys] }));
    const first = merchants[0]!;
    if (flags['webhook-secret'] && flags['webhook-secret'] !== first.webhookSecret) {
      throw new UsageError(`--webhook-secret differs from the secret kept in ${flags.state}: drop the flag, or pass a new --state file.`);
    }
    const known = new Set(first.apiKeys.map((k) => k.sha256));
    for (const key of keys) if (!known.has(hashKey(key))) first.apiKeys.push({ key });
    shown = merchants.map((m, i) => [
      ...(m.apiKeys.some(isSandbox) && (i > 0 || keys.length === 0)
        ? ['  sandbox key     kept in the state file as a sha256 digest: use the key printed when it was generated']
        : []),
      `  webhook secret  ${m.webhookSecret.slice(0, 8)}… (kept in the state file)`,
    ]);
  } else {
    const given = config.merchants?.length ? config.merchants : [{ ...DEFAULT_MERCHANT, apiKeys: [], webhookSecret: '' }];
    merchants = given.map((m, i) => ({ ...m, id: m.id ?? `merchant_${i + 1}`, apiKeys: [...(m.apiKeys ?? [])] }));
    merchants[0]!.apiKeys.push(...keys.map((key) => ({ key })));
    if (flags['webhook-secret']) merchants[0]!.webhookSecret = flags['webhook-secret'];
    shown = merchants.map((m) => credentials(m, flags.state !== undefined));
  }
  for (const key of keys) if (key.startsWith('sk_test_')) shown[0]!.unshift(`  sandbox key     ${mask(key)}`);
  if (flags['callback-url']) merchants[0]!.callbackUrl = flags['callback-url'];
  if (flags.state) for (const m of merchants) m.apiKeys = (m.apiKeys ?? []).map(digested);
  return { merchants, shown };
}

/**
 * Generate what a merchant of the config lacks (a sandbox key, a webhook secret) and say so:
 * what was generated is printed in full, once; a secret that was given is masked, and keys from
 * the config file are never printed.
 */
function credentials(m: MerchantConfig, state: boolean): string[] {
  const shown: string[] = [];
  if (!m.apiKeys.some(isSandbox)) {
    const key = generateApiKey('sandbox');
    m.apiKeys.push({ key });
    shown.push(`  sandbox key     ${key}${state ? '  (shown once: the state file keeps only its sha256 digest)' : ''}`);
  }
  if (m.webhookSecret) {
    shown.push(`  webhook secret  ${mask(m.webhookSecret)}`);
  } else {
    m.webhookSecret = generateWebhookSecret();
    shown.push(`  webhook secret  ${m.webhookSecret}`);
  }
  return shown;
}

/**
 * The header deliveries are signed in, and the banner line saying so. `--signature-header` wins
 * when given (and is then saved, said in the banner when it replaces a different saved one);
 * without it, the header kept in the state file; without either, the interface's
 * `X-Service-Signature`. The name is kept as given, so the banner and the file show it as typed.
 */
export function setupSignatureHeader(flag: string | undefined, saved: StateFile | null): { header: string; shown: string } {
  // A file saved before the header was kept still tells it: each delivery records the header it was signed in.
  const kept = saved?.signatureHeader ?? saved?.deliveries.at(-1)?.signatureHeader;
  if (flag !== undefined) {
    try {
      signatureHeaderName(flag);
    } catch {
      throw new UsageError(
        `--signature-header must be an HTTP header name such as X-Epay-Signature; got ${JSON.stringify(flag)}. Leave it out for X-Service-Signature.`,
      );
    }
    const replaced = kept !== undefined && kept.toLowerCase() !== flag.toLowerCase();
    return {
      header: flag,
      shown: `  signed in       ${flag}${replaced ? ` (--signature-header; the state file said ${kept}, now saved)` : ''}`,
    };
  }
  if (kept !== undefined) return { header: kept, shown: `  signed in       ${kept} (kept in the state file)` };
  return { header: 'X-Service-Signature', shown: '  signed in       X-Service-Signature' };
}

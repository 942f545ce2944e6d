import type { Mode } from '@payhook/core';
import { createHash, randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { PROVIDER_PERMISSIONS } from '@payhook/core/api';
import { PAYMENT_METHODS, type PaymentMethod } from './providers.js';

/**
 * What a key may do. Retrieve, list and timeline need `transactions:read`; the provider endpoints
 * need the permissions the SDKs name (`list_platform_payment_provider`, `get_platform_payment_provider`).
 */
export const PERMISSIONS = [
  'transactions:initialize',
  'transactions:verify',
  'transactions:cancel',
  'transactions:read',
  PROVIDER_PERMISSIONS.list,
  PROVIDER_PERMISSIONS.getAll,
] as const;
/** The permissions a key may hold: one of PERMISSIONS. */
export type Permission = (typeof PERMISSIONS)[number];

export type { Mode };

/** The merchant made when none is configured; its name is what the checkout page shows ("Pay 100.00 ETB to Demo shop"). */
export const DEFAULT_MERCHANT = { id: 'default', name: 'Demo shop' } as const;

/** One API key of a merchant, as configured. Give the key itself or only its sha256 hex digest. */
export interface ApiKeyConfig {
  /** `sk_test_…` (sandbox) or `sk_live_…` (live). Hashed at once; never kept or logged in plain text. */
  key?: string;
  /** sha256 hex digest of the key, for config files that should not hold the key. Needs `mode`. */
  sha256?: string;
  /** Required with `sha256`: the digest does not tell the prefix. */
  mode?: Mode;
  /** Default: every permission. */
  permissions?: Permission[];
  /** Revoked: requests with it get 401. */ revoked?: boolean;
}

/** A merchant account, from CLI flags or the config file. */
export interface MerchantConfig {
  /** Default: `merchant_<n>`. */
  id?: string;
  /** Shown on the checkout page ("Pay 100.00 ETB to <name>"). Default: the id. */
  name?: string;
  /** Its API keys, each with its mode and permissions. */ apiKeys: ApiKeyConfig[];
  /** Addresses or CIDR ranges allowed to call the API; `*` allows any. Default: loopback only. */
  ipWhitelist?: string[];
  /** Key of the HMAC-SHA256 webhook signature. */
  webhookSecret: string;
  /** Global callback URL; a transaction's own `callbackUrl` wins over it. */
  callbackUrl?: string;
  /** Whether the account has an active payment source; without one initialize answers 404 and no provider is enabled. Default true. */
  paymentSourceActive?: boolean;
  /** The provider codes enabled for the account (PAYMENT_METHODS). Default: all of them. */
  providers?: PaymentMethod[];
}

export interface Merchant {
  id: string;
  name: string;
  webhookSecret: string;
  callbackUrl: string | undefined;
  paymentSourceActive: boolean;
  /** Enabled provider codes: none without an active payment source. */
  providers: ReadonlySet<PaymentMethod>;
  /** Whether a client address may call the API. */
  allows(address: string): boolean;
}

interface StoredKey {
  merchant: Merchant;
  mode: Mode;
  permissions: ReadonlySet<Permission>;
  revoked: boolean;
}

export type Authentication =
  | { ok: true; merchant: Merchant; mode: Mode; keyHash: string; permissions: ReadonlySet<Permission> }
  | { ok: false; message: string };

/** The service's merchant accounts and their keys. */
export interface MerchantRegistry {
  /** Resolve an `Authorization` header to a merchant and a mode (the 401 rules of section 5). */
  authenticate(header: string | null): Authentication;
  /** Revoke a key (plain or its sha256 digest); later requests with it get 401. False if unknown. */
  revokeKey(keyOrHash: string): boolean;
  /** The merchant of that id, if there is one. */ get(id: string): Merchant | undefined;
  /** Every merchant, in the order configured. */ list(): Merchant[];
}

const KEY = /^sk_(test|live)_[A-Za-z0-9_-]{8,}$/;
const BEARER = /^Bearer ([^\s]+)$/;

/** The sha256 hex digest under which a key is stored. */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/**
 * A fresh random API key.
 *
 * @example
 * const key = generateApiKey('sandbox'); // 'sk_test_…'
 */
export function generateApiKey(mode: Mode = 'sandbox'): string {
  return `sk_${mode === 'sandbox' ? 'test' : 'live'}_${randomBytes(24).toString('base64url')}`;
}

/**
 * A fresh random webhook secret.
 *
 * @example
 * const secret = generateWebhookSecret(); // 'whsec_…'
 */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/** `::ffff:127.0.0.1` (an IPv4 client on a dual-stack socket) is `127.0.0.1`. */
export function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export function isLoopback(address: string): boolean {
  const a = normalizeAddress(address);
  return a === '::1' || a.startsWith('127.');
}

function whitelist(entries: string[], merchantId: string): (address: string) => boolean {
  if (entries.includes('*')) return () => true;
  const list = new BlockList();
  for (const entry of entries) {
    const [ip, bits] = entry.split('/');
    const family = isIP(ip ?? '');
    if (!family || (bits !== undefined && !/^\d{1,3}$/.test(bits))) {
      throw new TypeError(
        `[@payhook/reference] merchant ${merchantId}: ipWhitelist entry "${entry}" is not an IP address or CIDR range; use e.g. "127.0.0.1", "10.0.0.0/8" or "*".`,
      );
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(ip!, type);
    else list.addSubnet(ip!, Number(bits), type);
  }
  return (address) => {
    const a = normalizeAddress(address);
    const family = isIP(a);
    return family !== 0 && list.check(a, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/**
 * Build the merchant accounts. Keys are stored as sha256 digests only.
 *
 * @example
 * const merchants = createMerchantRegistry([
 *   { apiKeys: [{ key: 'sk_test_abcdefgh' }], webhookSecret: 'whsec_x', callbackUrl: 'https://shop.example/webhooks' },
 * ]);
 */
export function createMerchantRegistry(configs: MerchantConfig[]): MerchantRegistry {
  const byId = new Map<string, Merchant>();
  const keys = new Map<string, StoredKey>();
  configs.forEach((config, i) => {
    const id = config.id ?? `merchant_${i + 1}`;
    if (byId.has(id)) throw new TypeError(`[@payhook/reference] two merchants share the id "${id}"; give each its own id.`);
    if (typeof config.webhookSecret !== 'string' || config.webhookSecret.length === 0) {
      throw new TypeError(
        `[@payhook/reference] merchant ${id} needs a webhookSecret (a non-empty string); generate one with generateWebhookSecret().`,
      );
    }
    for (const code of config.providers ?? []) {
      if (!(PAYMENT_METHODS as readonly string[]).includes(code)) {
        throw new TypeError(`[@payhook/reference] merchant ${id}: unknown provider "${code}"; use ${PAYMENT_METHODS.join(', ')}.`);
      }
    }
    if (config.providers?.length === 0) {
      throw new TypeError(
        `[@payhook/reference] merchant ${id}: providers is empty; list at least one provider, or set paymentSourceActive: false.`,
      );
    }
    const paymentSourceActive = config.paymentSourceActive ?? true;
    const merchant: Merchant = {
      id,
      name: config.name ?? id,
      webhookSecret: config.webhookSecret,
      callbackUrl: config.callbackUrl,
      paymentSourceActive,
      providers: new Set(paymentSourceActive ? (config.providers ?? PAYMENT_METHODS) : []),
      allows: whitelist(config.ipWhitelist ?? ['127.0.0.1', '::1'], id),
    };
    byId.set(id, merchant);
    for (const k of config.apiKeys ?? []) {
      let hash: string;
      let mode: Mode;
      if (k.key !== undefined) {
        const m = KEY.exec(k.key);
        if (!m) {
          throw new TypeError(
            `[@payhook/reference] merchant ${id}: an API key must look like sk_test_… (sandbox) or sk_live_… (live) with at least 8 characters after the prefix; generate one with generateApiKey().`,
          );
        }
        hash = hashKey(k.key);
        mode = m[1] === 'test' ? 'sandbox' : 'live';
      } else if (k.sha256 !== undefined && /^[0-9a-f]{64}$/.test(k.sha256) && (k.mode === 'sandbox' || k.mode === 'live')) {
        hash = k.sha256;
        mode = k.mode;
      } else {
        throw new TypeError(
          `[@payhook/reference] merchant ${id}: each apiKeys entry needs "key", or "sha256" (64 lower-case hex digits) with "mode" ("sandbox" or "live").`,
        );
      }
      for (const p of k.permissions ?? []) {
        if (!(PERMISSIONS as readonly string[]).includes(p)) {
          throw new TypeError(`[@payhook/reference] merchant ${id}: unknown permission "${p}"; use ${PERMISSIONS.join(', ')}.`);
        }
      }
      // One key, one account: a key given to two merchants would silently act for the later one.
      const owner = keys.get(hash)?.merchant;
      if (owner !== undefined && owner !== merchant) {
        throw new TypeError(
          `[@payhook/reference] merchants ${owner.id} and ${id} share an API key; give each merchant keys of its own (generateApiKey()).`,
        );
      }
      keys.set(hash, { merchant, mode, permissions: new Set(k.permissions ?? PERMISSIONS), revoked: k.revoked ?? false });
    }
  });

  return {
    authenticate(header) {
      if (header === null || header === '') {
        return { ok: false, message: 'Missing Authorization header: send Authorization: Bearer <API key>.' };
      }
      const token = BEARER.exec(header)?.[1];
      if (!token || !KEY.test(token)) {
        return { ok: false, message: 'Malformed Authorization header: expected "Bearer sk_test_…" or "Bearer sk_live_…".' };
      }
      const keyHash = hashKey(token);
      const stored = keys.get(keyHash);
      if (!stored) return { ok: false, message: 'Invalid API key: check the key in your dashboard.' };
      if (stored.revoked) return { ok: false, message: 'This API key has been revoked: use an active key.' };
      return { ok: true, merchant: stored.merchant, mode: stored.mode, keyHash, permissions: stored.permissions };
    },
    revokeKey(keyOrHash) {
      const stored = keys.get(keyOrHash) ?? keys.get(hashKey(keyOrHash));
      if (!stored) return false;
      stored.revoked = true;
      return true;
    },
    get: (id) => byId.get(id),
    list: () => [...byId.values()],
  };
}

import { generateApiKey, generateWebhookSecret } from '@payhook/reference';
import type { StartReferenceServiceOptions } from './service-types.js';

/** One merchant account of a started service, with everything filled in. */
export interface TestAccount {
  id: string;
  name: string;
  apiKey: string;
  webhookSecret: string;
  /** The merchant's own (dashboard) callback URL: the one given, else the relay's. */
  callbackUrl: string;
}

/** What a receiver with `accounts` reads from the path's last segment (core's account names); it names the relay's path too. */
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const fail = (message: string): never => {
  throw new TypeError(`[@payhook/testing] startReferenceService: ${message}`);
};

/**
 * The merchant accounts to start the service with: the one `test` merchant (its callback URL the
 * relay itself), or each entry of `merchants`, whose webhooks reach the relay at
 * `/webhooks/<id>`. Keys and secrets not given are generated. Everything is checked at once,
 * before the relay is started: anything wrong throws saying what to pass. The function returned
 * fills in the callback URLs once the relay's is known.
 *
 * @example
 * const accountsAt = testAccounts({ merchants: [{ id: 'shop-a' }, { id: 'shop-b' }] });
 * const accounts = accountsAt(relay.callbackUrl); // [{ id: 'shop-a', callbackUrl: '…/webhooks/shop-a', … }, …]
 */
export function testAccounts(options: StartReferenceServiceOptions): (relayUrl: string) => TestAccount[] {
  const sandboxKey = (key: string | undefined, name: string) => {
    if (key !== undefined && !(typeof key === 'string' && key.startsWith('sk_test_'))) {
      fail(`${name} must be a sandbox key (sk_test_…), or leave it out to generate one.`);
    }
    return key ?? generateApiKey('sandbox');
  };
  const secret = (value: string | undefined, name: string) => {
    if (value !== undefined && !(typeof value === 'string' && value !== '')) {
      fail(`${name} must be a non-empty string, or leave it out to generate one.`);
    }
    return value ?? generateWebhookSecret();
  };
  const { merchants } = options;
  if (merchants === undefined) {
    const apiKey = sandboxKey(options.apiKey, 'apiKey');
    const webhookSecret = secret(options.webhookSecret, 'webhookSecret');
    return (relayUrl) => [{ id: 'test', name: 'Test shop', apiKey, webhookSecret, callbackUrl: relayUrl }];
  }
  if (!Array.isArray(merchants) || merchants.length === 0) {
    fail("merchants must be a list of accounts such as [{ id: 'shop-a' }, { id: 'shop-b' }]; leave it out for one merchant.");
  }
  if (options.apiKey !== undefined || options.webhookSecret !== undefined) {
    fail("with merchants, give each account's apiKey and webhookSecret in its own entry, not beside merchants.");
  }
  const seen = new Set<string>();
  const accounts = merchants.map((m, i) => {
    const id = (m as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || !ACCOUNT_ID.test(id)) {
      fail(
        `merchants[${i}].id must be 1 to 64 letters, digits, "_" or "-", such as "shop-a" (it is the last segment of the account's webhook path); got ${JSON.stringify(id)}.`,
      );
    }
    const account = id as string;
    if (seen.has(account)) fail(`two merchants share the id "${account}"; give each its own.`);
    seen.add(account);
    return {
      id: account,
      name: m.name ?? account,
      apiKey: sandboxKey(m.apiKey, `merchants[${i}].apiKey`),
      webhookSecret: secret(m.webhookSecret, `merchants[${i}].webhookSecret`),
      callbackUrl: m.callbackUrl,
    };
  });
  return (relayUrl) => accounts.map((a) => ({ ...a, callbackUrl: a.callbackUrl ?? `${relayUrl}/${a.id}` }));
}

// The names the guides use without importing them: the reader's own app (its orders, database,
// secret, admin check, and its receiver and app where a guide is not about making them), which
// no guide can import. The samples' program declares each of them as a
// global of the type here (check.ts); a block that declares one itself shadows it. Keep it small:
// anything payhook's packages export, a block imports.
import type { PaymentEvent, Receiver } from '@payhook/core';
import type { Express } from 'express';
import type { Pool } from 'pg';

export interface Prelude {
  /** The app's receiver, where a guide is about what to do with one rather than how to make it. */
  receiver: Receiver;
  /** The app, an Express one, where a guide passes it to a test helper. */
  app: Express;
  /** The app's orders. */
  orders: {
    find(merchantReference: string): Promise<{ id: string } | undefined>;
    markPaid(...args: string[]): Promise<void>;
    markReturned(merchantReference: string): Promise<void>;
  };
  /** The app's own data access. */
  db: {
    /** A platform's merchant account, as its own table holds it. */
    merchantAccount(account: string): Promise<{ webhookSecrets: string[]; apiKey: string } | undefined>;
  };
  /** The app's PostgreSQL pool. */
  pool: Pool;
  /** The webhook secret, from the service's dashboard. */
  secret: string;
  /** A PostgreSQL connection string. */
  connectionString: string;
  /** The payment service's API base URL. */
  baseUrl: string;
  /** The app's fulfilment of an order: by its merchant reference or its event, with what the service said of it. */
  fulfil: (order: string | PaymentEvent, detail?: unknown) => Promise<void>;
  /** Whether a request comes from one of the app's admins. */
  admin: (request: Request) => Promise<boolean>;
}

/** Every name of `Prelude`: the samples' globals. */
export const PRELUDE_NAMES = [
  'receiver',
  'app',
  'orders',
  'db',
  'pool',
  'secret',
  'connectionString',
  'baseUrl',
  'fulfil',
  'admin',
] as const;

// Every name of Prelude is listed above, and only those.
type Listed = (typeof PRELUDE_NAMES)[number];
export const everyNameListed: [Exclude<keyof Prelude, Listed>, Exclude<Listed, keyof Prelude>] extends [never, never] ? true : false = true;

/** The declaration file that makes each name a global in the samples' program. */
export function preludeDeclarations(preludeModule: string): string {
  const globals = PRELUDE_NAMES.map((name) => `  const ${name}: Prelude['${name}'];`).join('\n');
  return `import type { Prelude } from ${JSON.stringify(preludeModule)};\ndeclare global {\n${globals}\n}\nexport {};\n`;
}

import type Database from 'better-sqlite3';

/** A merchant account the platform serves: its ePay API key, its webhook secrets (newest first), its staff's board password. */
export interface MerchantAccount {
  id: string;
  apiKey: string;
  webhookSecrets: string[];
  staffPassword: string;
}

/**
 * The platform's table of merchant accounts, in the SQLite file that also holds payhook's store
 * and ledger. A real platform fills it when a merchant connects their ePay account; this example
 * seeds it from `PLATFORM_ACCOUNTS` at start.
 */
export function accountsTable(db: Database) {
  db.exec(`CREATE TABLE IF NOT EXISTS merchant_accounts (
    id              TEXT PRIMARY KEY,
    api_key         TEXT NOT NULL,
    webhook_secrets TEXT NOT NULL,
    staff_password  TEXT NOT NULL
  )`);
  const get = db.prepare('SELECT * FROM merchant_accounts WHERE id = ?');
  const put = db.prepare(
    `INSERT INTO merchant_accounts (id, api_key, webhook_secrets, staff_password) VALUES (?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET api_key = excluded.api_key, webhook_secrets = excluded.webhook_secrets, staff_password = excluded.staff_password`,
  );
  const setSecrets = db.prepare('UPDATE merchant_accounts SET webhook_secrets = ? WHERE id = ?');
  return {
    get(id: string): MerchantAccount | undefined {
      const row = get.get(id) as { id: string; api_key: string; webhook_secrets: string; staff_password: string } | undefined;
      return row && { id: row.id, apiKey: row.api_key, webhookSecrets: JSON.parse(row.webhook_secrets), staffPassword: row.staff_password };
    },
    put(a: MerchantAccount): void {
      put.run(a.id, a.apiKey, JSON.stringify(a.webhookSecrets), a.staffPassword);
    },
    /** The account's secrets, newest first: during a rotation the new one and the old one. */
    setSecrets(id: string, secrets: string[]): boolean {
      return setSecrets.run(JSON.stringify(secrets), id).changes === 1;
    },
  };
}

export type AccountsTable = ReturnType<typeof accountsTable>;

// Run by file-mode.test.ts in a process of its own, under the umask it sets: opens a store on the
// file given, writes one claim and one ledger record, and prints the modes of the database and its
// -wal and -shm files while they are open (SQLite removes the last two on close).
import { statSync } from 'node:fs';
import { sqliteStore } from '@payhook/store-sqlite';

const [path, which] = process.argv.slice(2) as [string, 'better-sqlite3' | 'node:sqlite'];
const driver: unknown = which === 'better-sqlite3' ? (await import('better-sqlite3')).default : undefined;
const store = sqliteStore({ path, driver, ledger: true });
await store.claim('key', 5_000);
const mode = (file: string) => (statSync(file).mode & 0o777).toString(8).padStart(4, '0');
console.log(JSON.stringify({ db: mode(path), wal: mode(`${path}-wal`), shm: mode(`${path}-shm`) }));
await store.close();

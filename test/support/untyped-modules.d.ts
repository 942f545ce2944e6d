// Declarations for the dev dependencies that ship no types of their own.
// The part of better-sqlite3 the tests and bench use: its Database class, passed to sqliteStore as
// `driver` (the store asks no more of it than this). better-sqlite3 ships no types of its own.
declare module 'better-sqlite3' {
  interface Statement {
    run(...params: unknown[]): { changes: number };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  }
  export default class Database {
    constructor(path: string);
    prepare(sql: string): Statement;
    exec(sql: string): this;
    close(): this;
  }
}

// dynalite ships no types: the part the DynamoDB store's tests use, a server to listen on loopback.
declare module 'dynalite' {
  import type { Server } from 'node:http';
  export default function dynalite(options?: {
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    path?: string;
  }): Server;
}

import { failedDoneTtl, isKept, isRefusal, matchesQuery, pageSize } from '@payhook/core/store';
import type { LedgerEntry, LedgerQuery } from '@payhook/core';
import { COMMON_OUTCOMES } from '@payhook/core/lifecycle';
import type { Ledger, LedgerPatch, ledgerSettings } from '@payhook/core/store';
import type { Cluster, Redis } from 'ioredis';
import { APPEND_SCRIPT, LIST_SCRIPT, REMOVE_SCRIPT, UPDATE_SCRIPT } from './ledger-scripts.js';

const NAME = '[@payhook/store-redis]';
/** Most ids one list call reads, one remove call deletes, and most records past a bound one append trims beyond twice its batch. */
const CHUNK = 1000;

export type RedisLedgerSettings = ReturnType<typeof ledgerSettings>;

type ScriptFn = (...args: (string | number)[]) => Promise<unknown>;
interface LedgerCommands {
  payhookLedgerAppendV2: ScriptFn;
  payhookLedgerUpdateV2: ScriptFn;
  payhookLedgerListV2: ScriptFn;
  payhookLedgerRemoveV2: ScriptFn;
}
const SCRIPTS: Record<keyof LedgerCommands, [string, number]> = {
  payhookLedgerAppendV2: [APPEND_SCRIPT, 5],
  payhookLedgerUpdateV2: [UPDATE_SCRIPT, 5],
  payhookLedgerListV2: [LIST_SCRIPT, 6],
  payhookLedgerRemoveV2: [REMOVE_SCRIPT, 5],
};

/**
 * The delivery ledger on Redis, beside the store's claims: each record is one string key, indexed
 * by sorted sets (score receivedAt) for every record, each account, reference, event and outcome,
 * the dead letters and the refusals. All keys share the hash tag `{ledger}`, so the scripts run on
 * Redis Cluster. An append is one `EVALSHA` per batch, which also trims what fell past a bound.
 * A record's key expires when its retention ends (an open dead letter's, deadLetterRetentionMs),
 * so nothing outlives it even where nobody writes. Needs Redis 5 or later.
 *
 * `ready` waits for the connection (the store's, so a ledger call never sits in an offline queue).
 */
export function redisLedger(
  client: Redis | Cluster,
  prefix: string,
  settings: RedisLedgerSettings,
  ready: () => Promise<void>,
  storeRetentionMs?: number,
): Ledger {
  const { maxEntries, maxRefusals } = settings;
  const retentionMs = Math.ceil(settings.retentionMs);
  const deadMs = Math.ceil(settings.deadLetterRetentionMs);
  for (const [name, [lua, numberOfKeys]] of Object.entries(SCRIPTS)) {
    if (typeof (client as unknown as Record<string, unknown>)[name] !== 'function') client.defineCommand(name, { numberOfKeys, lua });
  }
  const scripts = client as unknown as LedgerCommands;
  const base = `${prefix}{ledger}:`;
  const sets = [`${base}all`, `${base}live`, `${base}dead`, `${base}dead-all`, `${base}refused`];
  // Every script gets the client's time: the retention is read by the clock that wrote receivedAt.
  const common = (now: number) => [...sets, base, now, retentionMs, deadMs];

  async function run<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      await ready();
      return await fn();
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      const fix = /WRONGTYPE/.test(reason)
        ? 'Delete the key the reason names (it is not one the ledger made), or use another prefix.'
        : 'Check that Redis is running and reachable at the configured URL (REDIS_URL).';
      throw new Error(`${NAME} could not ${what} (${reason}). ${fix}`, { cause });
    }
  }
  const live = (e: LedgerEntry, now: number) => isKept(e, now, settings);

  return {
    body: settings.body,
    ...(storeRetentionMs !== undefined && { failedDoneTtlMs: failedDoneTtl(storeRetentionMs, settings) }),
    async append(entries) {
      if (entries.length === 0) return;
      const now = Date.now();
      const args: (string | number)[] = [];
      for (const e of entries) {
        if (!Number.isFinite(e.receivedAt)) {
          throw new TypeError(`${NAME} ledger record ${e.id} has receivedAt ${e.receivedAt}; it must be epoch milliseconds.`);
        }
        const state = isRefusal(e) ? 'refused' : deadState(e.deadLetter);
        // Its key lives until its retention ends; a record already past it is not written.
        const ms = Math.ceil(e.receivedAt + (state === 'open' ? deadMs : retentionMs) - now);
        if (ms > 0) args.push(e.id, e.receivedAt, state, encode(e), ms);
      }
      if (args.length === 0) return;
      const budget = Math.max(CHUNK, 2 * entries.length);
      await run(`append ${entries.length} ledger records`, () =>
        scripts.payhookLedgerAppendV2(...common(now), now - retentionMs, now - deadMs, maxEntries, maxRefusals, budget, ...args),
      );
    },
    async update(id: string, patch: LedgerPatch) {
      const late = patch.late === undefined ? ['', ''] : [JSON.stringify(patch.late), outcomeKey(patch.late.outcome)];
      const dead = patch.deadLetter === undefined ? ['', ''] : [JSON.stringify(patch.deadLetter), deadState(patch.deadLetter)];
      await run(`update ledger record ${id}`, () => scripts.payhookLedgerUpdateV2(...common(Date.now()), id, ...late, ...dead));
    },
    async remove(ids) {
      const unique = [...new Set(ids)];
      let removed = 0;
      for (let i = 0; i < unique.length; i += CHUNK) {
        const chunk = unique.slice(i, i + CHUNK);
        removed += Number(
          await run(`remove ${chunk.length} ledger records`, () => scripts.payhookLedgerRemoveV2(...common(Date.now()), ...chunk)),
        );
      }
      return removed;
    },
    async get(id: string) {
      const value = await run(`read ledger record ${id}`, () => client.get(`${base}e:${id}`));
      if (value === null) return undefined;
      const e = decode(value);
      return live(e, Date.now()) ? e : undefined;
    },
    async list(query: LedgerQuery = {}) {
      const limit = pageSize(query, NAME);
      const index = base + indexFor(query);
      const now = Date.now();
      const found: LedgerEntry[] = [];
      const min = query.since === undefined ? '-inf' : String(query.since);
      let max = query.until === undefined ? '+inf' : `(${query.until}`;
      let before = query.before ?? '';
      let offset = 0;
      let count = limit;
      for (;;) {
        const rows = (await run('list the ledger', () =>
          scripts.payhookLedgerListV2(...sets, index, base, now, retentionMs, deadMs, max, min, offset, count, before),
        )) as (string | null)[];
        const last = rows.length > 0 ? rows[rows.length - 2]! : max;
        // Members read at the last score: the next read starts at that score, past them.
        let ties = 0;
        for (let i = 0; i < rows.length; i += 3) {
          const value = rows[i + 2];
          if (value === null || value === undefined) continue; // expired unseen; the script dropped it
          if (rows[i + 1] === last) ties++;
          const e = decode(value);
          if (live(e, now) && matchesQuery(e, query)) {
            found.push(e);
            if (found.length === limit) return found;
          }
        }
        if (rows.length < count * 3) return found;
        offset = last === max ? offset + ties : ties;
        max = last;
        before = '';
        count = Math.min(count * 2, CHUNK);
      }
    },
  };
}

/** The most selective index a query can read: its other filters are applied to what it returns. */
function indexFor(q: LedgerQuery): string {
  if (q.reference !== undefined) return refKey(q.reference);
  // Dead letters and the rare outcomes are few across every account; a busy account's records are many.
  if (q.deadLetters === 'open') return 'dead';
  if (q.deadLetters === 'all') return 'dead-all';
  if (q.outcome !== undefined && (q.account === undefined || !COMMON_OUTCOMES.includes(q.outcome))) return outcomeKey(q.outcome);
  if (q.account !== undefined) return accountKey(q.account);
  if (q.event !== undefined) return eventKey(q.event);
  return 'all';
}

// Key names as the head's JSON gives them to Lua: lone surrogates (which cjson refuses) become
// U+FFFD, as ioredis sends them anyway. Records that collide so are told apart by matchesQuery.
const wellFormed = (s: string) => s.replace(/\p{Cs}/gu, '\ufffd');
const refKey = (r: string) => `ref:${wellFormed(r)}`;
const accountKey = (a: string) => `account:${wellFormed(a)}`;
const eventKey = (e: string) => `event:${wellFormed(e)}`;
const outcomeKey = (o: string) => `outcome:${wellFormed(o)}`;

function deadState(d: LedgerEntry['deadLetter']): string {
  return d === undefined ? '' : d.retriedBy === undefined ? 'open' : 'retried';
}

/** A record as stored: see ledger-scripts.ts. */
function encode(e: LedgerEntry): string {
  const { late, deadLetter, ...entry } = e;
  const k = [outcomeKey(e.outcome)];
  // Named in the head like the others, so trims, expiry and remove drop it from its account's set too.
  if (e.account !== undefined) k.push(accountKey(e.account));
  if (e.reference !== undefined) k.push(refKey(e.reference));
  if (e.event !== undefined) k.push(eventKey(e.event));
  const head = late === undefined ? { k } : { k, l: outcomeKey(late.outcome) };
  const lines = [head, entry, late, deadLetter].map((part) => (part === undefined ? '' : JSON.stringify(part)));
  return lines.join('\n');
}

function decode(value: string): LedgerEntry {
  const [, entry = '{}', late, deadLetter] = value.split('\n');
  const e = JSON.parse(entry) as LedgerEntry;
  if (late) e.late = JSON.parse(late) as LedgerEntry['late'];
  if (deadLetter) e.deadLetter = JSON.parse(deadLetter) as LedgerEntry['deadLetter'];
  return e;
}

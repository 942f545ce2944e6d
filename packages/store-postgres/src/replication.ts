import { primaryWatch, type StoreLog } from '@payhook/core/store';
import type { Pool } from 'pg';
import { NAME } from './base/store-error.js';

// The store and PostgreSQL's standbys: the check that says what a failover would forget, and who the primary is.

interface Replication {
  synchronous_commit: string;
  names: string;
  standbys: number;
  /** Standbys the primary waits for (`sync` or `quorum`); null where this role may not read `sync_state`. */
  waited: number | null;
}

/**
 * Warn once when a failover could forget commits already answered: standbys that replay
 * asynchronously (none named in `synchronous_standby_names`, or `synchronous_commit` local or
 * off). An error when the primary waits for standbys that are not there: every commit then
 * waits until the query timeout. Silent without standbys, and where the settings are unreadable.
 */
export async function checkReplication(pool: Pool, log: StoreLog, listening: boolean): Promise<void> {
  let state: Replication;
  try {
    const { rows } = await pool.query<Replication>(
      `select current_setting('synchronous_commit') as synchronous_commit,
              current_setting('synchronous_standby_names') as names,
              (select count(*)::int from pg_stat_replication) as standbys,
              (select case when bool_and(sync_state is null) then null
                      else (count(*) filter (where sync_state in ('sync', 'quorum')))::int end from pg_stat_replication) as waited`,
    );
    state = rows[0]!;
  } catch {
    return;
  }
  const { synchronous_commit: commit, names, standbys, waited } = state;
  if (names.trim() && commit !== 'off' && commit !== 'local' && (standbys === 0 || waited === 0)) {
    log.error(
      `${NAME} synchronous_standby_names is '${names}' and no standby it names is connected: every commit waits for one, so deliveries are answered 503 at the query timeout. Bring the standby back, or clear synchronous_standby_names.`,
    );
    return;
  }
  if (standbys === 0 || commit === 'off') return;
  if (names.trim() && commit !== 'local' && listening) {
    log.warn(
      `${NAME} PostgreSQL waits for a synchronous standby, and the store tells waiting copies with NOTIFY, which holds a lock on the whole database until the standby confirms: every commit that ends a claim takes its turn behind the others (20 at once took 10.8 s instead of 0.6 s with a standby 250 ms away). Pass listen: false to postgresStore() (waiting copies then ask again after growing pauses), or checkDurability: false to silence this.`,
    );
    return;
  }
  if (!names.trim() || commit === 'local') {
    log.warn(
      `${NAME} PostgreSQL has ${standbys} asynchronous standby(s): it answers a commit before they have it, so a failover to one forgets the done records and transactional() effects of its last moments (its lag), and events already answered 200 run again or, with transactional(), never ran. ` +
        "Name the standby you would fail over to in synchronous_standby_names (e.g. 'ANY 1 (standby_a, standby_b)'), with synchronous_commit on or remote_apply, or pass checkDurability: false to silence this.",
    );
  }
}

/** The identity of the server behind a connection: its cluster (`system_identifier`) and, on a primary, its WAL timeline, which a promotion moves on. */
async function identityOf(pool: Pool): Promise<{ system: string; timeline: string } | undefined> {
  const { rows } = await pool.query<{ system: string; timeline: string | null }>(
    `select (select system_identifier::text from pg_control_system()) as system,
            case when pg_is_in_recovery() then null else substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) end as timeline`,
  );
  const row = rows[0];
  return row?.timeline ? { system: row.system, timeline: row.timeline } : undefined;
}

/**
 * Read who the primary is after the pool made a new connection, and log at error when it is
 * another than before: a promoted standby (a new timeline) or another cluster behind the same
 * address (a new system identifier). Returns what the store calls after each query that
 * succeeded: it marks the old primary as still there, for the recovery window, and asks again
 * once a connection was made since (on its own statement: a query of its own on the new
 * connection would run beside the one the pool made it for).
 */
export function watchPrimary(pool: Pool, log: StoreLog): () => void {
  const primary = primaryWatch(`${NAME} PostgreSQL`, log);
  let connected = true;
  let asking = false;
  pool.on('connect', () => {
    connected = true;
  });
  const ask = () => {
    asking = true;
    connected = false;
    identityOf(pool)
      .then(
        (now) => {
          if (!now) return;
          primary.seen({
            id: `${now.system}/${now.timeline}`,
            describe(before) {
              const [system, timeline] = before.id.split('/');
              return system === now.system
                ? `timeline ${Number.parseInt(timeline!, 16)} → ${Number.parseInt(now.timeline, 16)}: a standby promoted`
                : `system identifier ${system} → ${now.system}: another cluster`;
            },
          });
        },
        () => {
          // Unreadable (a pooler, a limited role, the server gone again): asked again after the next connection.
        },
      )
      .finally(() => {
        asking = false;
      });
  };
  return () => {
    primary.ok();
    if (connected && !asking) ask();
  };
}

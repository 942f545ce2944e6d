import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { printList, show } from './cli-print.js';
import { reconcilerOf, reconcileWindow, type ReconcileExports } from './cli-reconcile.js';
import { escapeText } from '../base/escape-text.js';
import { retryDeadLetters } from '../ledger/dead-letters.js';
import { eraseDeliveries } from '../ledger/erase.js';
import { noDelivery } from '../ledger/replay.js';
import { isAccountName } from '../accounts/account-name.js';
import { errorMessage } from '../base/errors.js';
import { pageSize, type LedgerQuery } from '../storage/ledger.js';
import { accountLedger } from '../ledger/account-ledger.js';
import { isMemoryLedger } from '../storage/memory-ledger-mark.js';
import type { DeliveryReport } from '../contracts/delivery.js';
import type { Receiver } from '../contracts/receiving.js';

const USAGE = `Usage: payhook <command> [options]

  deliveries list [filters]       the ledger's records, newest first
  deliveries show <id>            one record, with its body
  deliveries erase --reference <ref> | --email <e> | --phone <p>
                                  delete a payment's or a customer's records (open dead letters too)
  replay <id> [--force]           run a recorded delivery again through the receiver
  dead-letters list [filters]     dead letters not yet retried
  dead-letters retry [<id>...]    retry them (all open ones when no id is given)
  reconcile --since <t> [--until <t>]
                                  run every event of the window's transactions that has no done
                                  record (after a failover forgot some); the app exports \`reconciler\`

Options:
  --app <file>        the module that exports your receiver (named \`receiver\` or default);
                      default: $PAYHOOK_APP
  --reference <ref>   --event <name>   --outcome <outcome>
  --since <time>      --until <time>   (ISO 8601, or epoch milliseconds)
  --limit <n>         (default 50)     --before <id> (the next page)
  --account <name>    one merchant account's records (a receiver with \`accounts\`): list, erase
                      and retry act within it; show and replay answer another's id as missing
  --json              one JSON record per line
  --force             replay a done event's handlers again (recorded as forced)`;

/** A failure the user can fix: printed without a stack, exit code 2 for usage. */
class UsageError extends Error {}

/**
 * The command. `apart`: it runs in a process of its own (the `payhook` binary, through `run`), so a
 * memory ledger it loads is a new, empty one, never the app's; `main` called beside the app reads it.
 */
export async function main(argv: readonly string[], { apart = false } = {}): Promise<number> {
  const { values: o, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      app: { type: 'string' },
      reference: { type: 'string' },
      event: { type: 'string' },
      outcome: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      before: { type: 'string' },
      json: { type: 'boolean' },
      force: { type: 'boolean' },
      email: { type: 'string' },
      phone: { type: 'string' },
      account: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, verb, ...ids] = positionals;
  if (o.help || group === undefined) {
    console.log(USAGE);
    return o.help ? 0 : 2;
  }
  const account = accountOption(o.account);
  const app = o.app ?? process.env.PAYHOOK_APP;
  const { receiver, mod } = await loadApp(app, argv);
  if (group === 'reconcile' && verb === undefined) {
    try {
      const since = time(o.since, '--since');
      if (since === undefined) throw new UsageError('say the window: --since <time> [--until <time>] (ISO 8601, or epoch milliseconds).');
      const reconciler = await reconcilerOf(mod, app!, account);
      if (typeof reconciler === 'string') throw new UsageError(reconciler);
      return await reconcileWindow(reconciler, since, time(o.until, '--until') ?? Date.now(), o.json);
    } finally {
      await receiver.store.close?.();
    }
  }
  const ledger = receiver.store.ledger;
  if (!ledger)
    throw new UsageError(
      "the app's store keeps no ledger: create it with a `ledger` option, e.g. postgresStore({ connectionString, ledger: true }).",
    );
  if (isMemoryLedger(ledger) && apart) {
    throw new UsageError(
      "the app's store keeps its ledger in memory (memoryStore), which lives in the app's own process: this command runs in another, and cannot read it. Keep the ledger in Redis, Postgres or a SQLite file: redisStore({ url, ledger: true }) from @payhook/store-redis, postgresStore({ connectionString, ledger: true }) from @payhook/store-postgres, or sqliteStore({ path, ledger: true }) from @payhook/store-sqlite.",
    );
  }
  // Another account's record is answered as one the ledger does not hold: a wrapper script that
  // scopes an operator to one account gives away nothing of the others, not even that an id exists.
  const scoped = accountLedger(ledger, account, '[@payhook/core] payhook');
  const query = (): LedgerQuery => ({
    reference: o.reference,
    event: o.event,
    outcome: o.outcome as LedgerQuery['outcome'],
    since: time(o.since, '--since'),
    until: time(o.until, '--until'),
    before: o.before,
    limit: o.limit === undefined ? undefined : Number(o.limit),
  });
  // One page, and the next page's --before only when a record lies past it (a full page may be the last).
  const list = async (q: LedgerQuery, empty: string) => {
    const entries = await scoped.list(q);
    const last = entries.at(-1)?.id;
    const more =
      !o.json &&
      last !== undefined &&
      entries.length >= pageSize(q, '[@payhook/core]') &&
      (await scoped.list({ ...q, before: last, limit: 1 })).length > 0;
    printList(entries, { json: o.json, empty, next: more ? last : undefined });
    return 0;
  };
  try {
    if (group === 'deliveries' && verb === 'list') return await list(query(), 'no deliveries match');
    if (group === 'deliveries' && verb === 'erase' && ids.length === 0) {
      if (o.reference === undefined && o.email === undefined && o.phone === undefined)
        throw new UsageError('say whose deliveries to erase: --reference <ref>, --email <email> or --phone <phone>.');
      const { erased } = await eraseDeliveries(ledger, { reference: o.reference, email: o.email, phone: o.phone, account });
      console.log(o.json ? JSON.stringify({ erased }) : `erased ${erased} records`);
      return 0;
    }
    if (group === 'dead-letters' && verb === 'list') return await list({ ...query(), deadLetters: 'open' }, 'no open dead letters');
    if (group === 'deliveries' && verb === 'show' && ids.length === 1) {
      const entry = await scoped.get(ids[0]!);
      if (!entry) throw new UsageError(`no delivery ${ids[0]} in the ledger; list them with \`payhook deliveries list\`.`);
      console.log(o.json ? escapeText(JSON.stringify(entry), true) : show(entry));
      return 0;
    }
    if (group === 'replay' && verb !== undefined && ids.length === 0) {
      if (account !== undefined && !(await scoped.get(verb))) throw noDelivery(verb);
      const r = await receiver.replay(verb, { force: o.force === true });
      console.log(
        o.json
          ? escapeText(JSON.stringify(summary(r)), true)
          : escapeText(`replayed ${verb}${o.force ? ' (forced)' : ''} as ${r.deliveryId}: ${r.outcome} (${r.status})${why(r)}`),
      );
      return r.status < 300 ? 0 : 1;
    }
    if (group === 'dead-letters' && verb === 'retry') {
      const results = await retryDeadLetters(receiver, { ...(ids.length > 0 && { ids }), account });
      for (const x of results) {
        const line = `${x.id}${x.forced ? ' (forced)' : ''} -> ${x.report.deliveryId}: ${x.report.outcome} (${x.report.status})${x.closed ? '' : ', still open'}${why(x.report)}`;
        console.log(
          escapeText(o.json ? JSON.stringify({ id: x.id, forced: x.forced, closed: x.closed, ...summary(x.report) }) : line, o.json),
        );
      }
      if (!o.json) console.log(`${results.filter((x) => x.closed).length} of ${results.length} dead letters closed`);
      return results.every((x) => x.closed) ? 0 : 1;
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  } finally {
    await receiver.store.close?.();
  }
}

async function loadApp(file: string | undefined, argv: readonly string[]): Promise<{ receiver: Receiver; mod: ReconcileExports }> {
  if (!file)
    throw new UsageError(
      'say where your receiver is: --app ./src/webhooks.js (or PAYHOOK_APP), a module that exports it as `receiver` or default.',
    );
  const mod = (await import(pathToFileURL(resolve(file)).href).catch((error: unknown) => {
    // Node runs no TypeScript by itself: name the command that does, rather than Node's stack.
    if ((error as { code?: unknown } | null)?.code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/"\.[cm]?tsx?"/.test(errorMessage(error)))
      throw error;
    const again = ['node --import tsx node_modules/@payhook/core/bin/payhook.mjs', ...argv.map(quote)].join(' ');
    throw new UsageError(
      `cannot load ${file}: Node does not run TypeScript by itself (${errorMessage(error)}). Run the command through tsx (npm install -D tsx):\n\n  ${again}\n\nor point --app at the built JavaScript.`,
    );
  })) as { receiver?: unknown; default?: unknown } & ReconcileExports;
  const found = [mod.receiver, mod.default, (mod.default as { receiver?: unknown } | undefined)?.receiver].find(
    (x): x is Receiver => typeof (x as Receiver | undefined)?.replay === 'function',
  );
  if (!found)
    throw new UsageError(`${file} exports no receiver: export the one createReceiver() made, as \`export const receiver = …\` or default.`);
  return { receiver: found, mod };
}

/** An argument as a POSIX shell reads it back. */
const quote = (arg: string) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);

/** `--account`: a name as the receiver's accounts have them, or a usage error that says what one is. */
function accountOption(value: string | undefined): string | undefined {
  if (value === undefined || isAccountName(value)) return value;
  throw new UsageError(`--account must be an account's name, 1 to 64 ASCII letters, digits, _ or -; got ${JSON.stringify(value)}.`);
}

function time(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(t)) throw new UsageError(`${flag} must be an ISO 8601 time or epoch milliseconds; got ${value}.`);
  return t;
}

const summary = (r: DeliveryReport) => ({
  deliveryId: r.deliveryId,
  outcome: r.outcome,
  status: r.status,
  reference: r.reference,
  event: r.event,
  error: r.error === undefined ? undefined : errorMessage(r.error),
});
/** Why a replay ran nothing, or failed: its error, after the answer. */
const why = (r: DeliveryReport) => (r.error === undefined ? '' : ` - ${errorMessage(r.error)}`);

export function run(argv: readonly string[]): void {
  main(argv, { apart: true }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      // payhook's own errors (a replay's unknown id, a store that cannot be reached) name their package and say what to do: the message alone.
      const own = !usage && error instanceof Error && error.message.startsWith('[@payhook/');
      // A usage error's lines are the command's own; any other message may quote a record: one escaped line (then, unless payhook's own, the stack's frames).
      const lines = usage
        ? (error as Error).message.split('\n')
        : own
          ? [error.message]
          : [String(error), ...((error as Error)?.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l))];
      if (!own) lines[0] = `[@payhook/core] payhook: ${lines[0]}`;
      console.error(lines.map((line) => escapeText(line)).join('\n'));
      process.exit(usage ? 2 : 1);
    },
  );
}

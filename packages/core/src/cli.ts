import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { escapeText } from './escape-text.js';
import { retryDeadLetters } from './dead-letters.js';
import { eraseDeliveries } from './erase.js';
import { errorMessage } from './errors.js';
import type { LedgerEntry, LedgerQuery } from './ledger.js';
import type { DeliveryReport } from './pipeline/outcome.js';
import type { Receiver } from './receiver.js';

const USAGE = `Usage: payhook <command> [options]

  deliveries list [filters]       the ledger's records, newest first
  deliveries show <id>            one record, with its body
  deliveries erase --reference <ref> | --email <e> | --phone <p>
                                  delete a payment's or a customer's records (open dead letters too)
  replay <id> [--force]           run a recorded delivery again through the receiver
  dead-letters list [filters]     dead letters not yet retried
  dead-letters retry [<id>...]    retry them (all open ones when no id is given)

Options:
  --app <file>        the module that exports your receiver (named \`receiver\` or default);
                      default: $PAYHOOK_APP
  --reference <ref>   --event <name>   --outcome <outcome>
  --since <time>      --until <time>   (ISO 8601, or epoch milliseconds)
  --limit <n>         (default 50)     --before <id> (the next page)
  --json              one JSON record per line
  --force             replay a done event's handlers again (recorded as forced)`;

/** A failure the user can fix: printed without a stack, exit code 2 for usage. */
class UsageError extends Error {}

export async function main(argv: readonly string[]): Promise<number> {
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
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, verb, ...ids] = positionals;
  if (o.help || group === undefined) {
    console.log(USAGE);
    return o.help ? 0 : 2;
  }
  const receiver = await loadReceiver(o.app ?? process.env.PAYHOOK_APP);
  const ledger = receiver.store.ledger;
  if (!ledger) throw new UsageError("the app's store keeps no ledger: create it with a `ledger` option, e.g. postgresStore({ connectionString, ledger: true }).");
  const query = (): LedgerQuery => ({
    reference: o.reference,
    event: o.event,
    outcome: o.outcome as LedgerQuery['outcome'],
    since: time(o.since, '--since'),
    until: time(o.until, '--until'),
    before: o.before,
    limit: o.limit === undefined ? undefined : Number(o.limit),
  });
  try {
    if (group === 'deliveries' && verb === 'list') return print(await ledger.list(query()), o.json);
    if (group === 'deliveries' && verb === 'erase' && ids.length === 0) {
      if (o.reference === undefined && o.email === undefined && o.phone === undefined) throw new UsageError('say whose deliveries to erase: --reference <ref>, --email <email> or --phone <phone>.');
      const { erased } = await eraseDeliveries(ledger, { reference: o.reference, email: o.email, phone: o.phone });
      console.log(o.json ? JSON.stringify({ erased }) : `erased ${erased} records`);
      return 0;
    }
    if (group === 'dead-letters' && verb === 'list') return print(await ledger.list({ ...query(), deadLetters: 'open' }), o.json);
    if (group === 'deliveries' && verb === 'show' && ids.length === 1) {
      const entry = await ledger.get(ids[0]!);
      if (!entry) throw new UsageError(`no delivery ${ids[0]} in the ledger; list them with \`payhook deliveries list\`.`);
      console.log(o.json ? escapeText(JSON.stringify(entry), true) : show(entry));
      return 0;
    }
    if (group === 'replay' && verb !== undefined && ids.length === 0) {
      const r = await receiver.replay(verb, { force: o.force === true });
      console.log(o.json ? escapeText(JSON.stringify(summary(r)), true) : escapeText(`replayed ${verb}${o.force ? ' (forced)' : ''} as ${r.deliveryId}: ${r.outcome} (${r.status})${why(r)}`));
      return r.status < 300 ? 0 : 1;
    }
    if (group === 'dead-letters' && verb === 'retry') {
      const results = await retryDeadLetters(receiver, ids.length > 0 ? { ids } : {});
      for (const x of results) {
        const line = `${x.id}${x.forced ? ' (forced)' : ''} -> ${x.report.deliveryId}: ${x.report.outcome} (${x.report.status})${x.closed ? '' : ', still open'}${why(x.report)}`;
        console.log(escapeText(o.json ? JSON.stringify({ id: x.id, forced: x.forced, closed: x.closed, ...summary(x.report) }) : line, o.json));
      }
      if (!o.json) console.log(`${results.filter((x) => x.closed).length} of ${results.length} dead letters closed`);
      return results.every((x) => x.closed) ? 0 : 1;
    }
    throw new UsageError(`unknown command: ${positionals.join(' ')}\n\n${USAGE}`);
  } finally {
    await receiver.store.close?.();
  }
}

async function loadReceiver(file: string | undefined): Promise<Receiver> {
  if (!file) throw new UsageError('say where your receiver is: --app ./src/webhooks.js (or PAYHOOK_APP), a module that exports it as `receiver` or default.');
  const mod = (await import(pathToFileURL(resolve(file)).href)) as { receiver?: unknown; default?: unknown };
  const found = [mod.receiver, mod.default, (mod.default as { receiver?: unknown } | undefined)?.receiver].find(
    (x): x is Receiver => typeof (x as Receiver | undefined)?.replay === 'function',
  );
  if (!found) throw new UsageError(`${file} exports no receiver: export the one createReceiver() made, as \`export const receiver = …\` or default.`);
  return found;
}

function time(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const t = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(t)) throw new UsageError(`${flag} must be an ISO 8601 time or epoch milliseconds; got ${value}.`);
  return t;
}

const summary = (r: DeliveryReport) => ({ deliveryId: r.deliveryId, outcome: r.outcome, status: r.status, reference: r.reference, event: r.event, error: r.error === undefined ? undefined : errorMessage(r.error) });
/** Why a replay ran nothing, or failed: its error, after the answer. */
const why = (r: DeliveryReport) => (r.error === undefined ? '' : ` - ${errorMessage(r.error)}`);

// Every value printed comes from the ledger, which holds what anyone sent: each goes through
// escapeText (escape-text.ts), so no control character, newline or bidi control reaches the terminal.
function print(entries: LedgerEntry[], json: boolean | undefined): number {
  if (json) {
    for (const e of entries) console.log(escapeText(JSON.stringify(e), true));
    return 0;
  }
  if (entries.length === 0) {
    console.log('no deliveries match');
    return 0;
  }
  const rows = entries.map((e) =>
    [
      e.id,
      Number.isFinite(e.receivedAt) ? new Date(e.receivedAt).toISOString() : String(e.receivedAt),
      e.source,
      e.event ?? '-',
      e.reference ?? '-',
      // Whether the sender was who it said: a 401's reference and event are anyone's text.
      e.signature === 'valid' || e.signature === 'invalid' ? e.signature : '-',
      `${e.status} ${e.outcome}${e.late ? ` -> ${e.late.outcome}` : ''}`,
      `${e.durationMs}ms`,
      [e.deadLetter && (e.deadLetter.retriedBy ? 'dead (retried)' : `dead: ${e.deadLetter.reason}`), e.forced && 'forced'].filter(Boolean).join(' '),
    ].map((cell) => escapeText(String(cell))),
  );
  const head = ['ID', 'RECEIVED', 'SOURCE', 'EVENT', 'REFERENCE', 'SIG', 'ANSWER', 'TOOK', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd());
  console.log(`\n${entries.length} shown; the next page: --before ${escapeText(String(entries.at(-1)!.id))}`);
  return 0;
}

function show(e: LedgerEntry): string {
  const { body, ...rest } = e;
  const lines = Object.entries(rest).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
  if (body !== undefined) {
    // Split only JSON.stringify's own lines (it escapes newlines within strings); any other body is one line.
    let pretty = [String(body)];
    try {
      if (e.bodyEncoding === 'utf8') pretty = JSON.stringify(JSON.parse(body), null, 2).split('\n');
    } catch {}
    lines.push('body:', ...pretty);
  }
  return lines.map((line) => escapeText(line)).join('\n');
}

export function run(argv: readonly string[]): void {
  main(argv).then(
    (code) => process.exit(code),
    (error: unknown) => {
      const usage = error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
      // A usage error's lines are the command's own; any other message may quote a record: one escaped line, then the stack's frames.
      const lines = usage ? `${(error as Error).message}`.split('\n') : [String(error), ...((error as Error)?.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l))];
      lines[0] = `[@payhook/core] payhook: ${lines[0]}`;
      console.error(lines.map((line) => escapeText(line)).join('\n'));
      process.exit(usage ? 2 : 1);
    },
  );
}

import {
  createReceiver,
  createReconciler,
  retryDeadLetters,
  type HandlerContext,
  type LedgerEntry,
  type PaymentEvent,
  type Receiver,
} from '@payhook/core';
import { eventFromRecord } from '@payhook/core/lifecycle';
import { signedBody, startReferenceService, type TestReferenceService } from '@payhook/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { countPg, effectsTable } from '@payhook/test-support/effects';
import { requirePostgres, requireRedis } from '@payhook/test-support/services';
import { forgedId, ledgerKinds, payhook } from './trust-helpers.js';

const redisUrl = await requireRedis();
const pgUrl = await requirePostgres();
const quiet = { info() {}, warn() {}, error() {} };
const HOUR = 60 * 60_000;

/**
 * Issue 30: whoever can write to the store can write the ledger. A record written straight into
 * its keys or table (a reconciled dead letter for 999999.00, never signed) must run no handler
 * through `retryDeadLetters`, `replay` or `payhook dead-letters retry`; a reconciled event is read
 * again from the service, and a legitimate one still runs, with the service's record.
 */
describe.each(ledgerKinds(redisUrl, pgUrl))('replay and dead-letter retry on a $kind ledger run only verified events', (kind) => {
  const skip = !kind.url || !pgUrl;
  const name = `payhook_trust_${kind.kind}_${process.pid}_${Date.now().toString(36)}`;
  const run = `trust_${name}`;
  let ref: TestReferenceService;
  let store: ReturnType<typeof kind.open>;
  let receiver: Receiver;
  let fixed = false;
  const runs: { event: PaymentEvent; ctx: HandlerContext }[] = [];
  let reference: string;
  let legit: LedgerEntry;
  let forged: LedgerEntry;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    ref = await startReferenceService();
    store = kind.open(name);
    receiver = createReceiver({ secret: ref.webhookSecret, store, client: ref.client, logger: quiet }).onAny((event, ctx) => {
      if (!fixed) throw new Error('the order system is down');
      runs.push({ event, ctx });
    });
    // Paid, its webhook lost (nothing answers the callback yet); a reconcile finds it and its handler fails.
    ({ reference } = await ref.createTransaction({ amount: '100.00' }));
    await ref.pay(reference);
    const now = ref.clock.now();
    const recon = await createReconciler({ client: ref.client, receiver }).run({ from: new Date(now - HOUR), to: new Date(now + 1000) });
    expect(recon.failed.map((r) => r.outcome)).toEqual(['failed']);
    await vi.waitFor(async () => expect(await store.ledger!.list({ deadLetters: 'open' })).toHaveLength(1));
    legit = (await store.ledger!.list({ deadLetters: 'open' }))[0]!;
    expect(legit).toMatchObject({ source: 'reconcile', signature: 'not-checked', deadLetter: { reason: 'reconcile-failed' } });

    const at = Date.now();
    const body = JSON.stringify({ ...JSON.parse(legit.body!), amount: '999999.00' });
    const { id: _, deadLetter: __, ...rest } = legit;
    forged = { ...rest, id: forgedId(at), receivedAt: at, body, deadLetter: { reason: 'reconcile-failed', at } };
    await kind.forge(name, forged);
    await effectsTable(pgUrl!).then((p) => p.end());
    cliEnv = {
      TRUST_STORE: kind.kind,
      TRUST_URL: kind.url!,
      TRUST_NAME: name,
      TRUST_SECRET: ref.webhookSecret,
      TRUST_EFFECTS: pgUrl!,
      TRUST_RUN: run,
    };
    fixed = true;
  }, 60_000);

  afterAll(async () => {
    await ref?.close();
    await store?.close();
    if (!skip) await kind.drop(name);
  });

  it.skipIf(skip)('a forged reconciled dead letter runs nothing: the service does not back its amount', async () => {
    expect(await store.ledger!.get(forged.id)).toMatchObject({
      source: 'reconcile',
      signature: 'not-checked',
      deadLetter: { reason: 'reconcile-failed' },
    });
    const [retry] = await retryDeadLetters(receiver, { ids: [forged.id] });
    expect(retry).toMatchObject({ closed: false, report: { outcome: 'mismatch', reference } });
    expect(String(retry!.report.error)).toMatch(
      /^Error: \[@payhook\/core\] delivery \S+ was not replayed: .*amount "999999.00" stored, "100.00" at the service/,
    );
    for (const force of [false, true]) expect((await receiver.replay(forged.id, { force })).outcome).toBe('mismatch');
    expect(runs).toEqual([]);
    expect((await store.ledger!.get(forged.id))!.deadLetter!.retriedBy).toBeUndefined();
    // The refusal is on record, as a replay that ran nothing.
    expect(await store.ledger!.get(retry!.report.deliveryId!)).toMatchObject({
      source: 'replay',
      replayOf: forged.id,
      outcome: 'mismatch',
      signature: 'not-checked',
    });

    // A reference the service does not know: refused as well.
    const at = Date.now();
    const unknown = {
      ...forged,
      id: forgedId(at),
      receivedAt: at,
      reference: `${reference}x`,
      body: forged.body!.replace(reference, `${reference}x`),
    };
    await kind.forge(name, unknown);
    const [other] = await retryDeadLetters(receiver, { ids: [unknown.id] });
    expect(['mismatch', 'verify-unavailable']).toContain(other!.report.outcome);
    expect(other!.closed).toBe(false);
    expect(runs).toEqual([]);
  });

  it.skipIf(skip)('without a client, a reconciled dead letter is refused with an error that says to configure one', async () => {
    const bare = createReceiver({ secret: ref.webhookSecret, store, logger: quiet }).onAny(() => void runs.push({} as never));
    const [retry] = await retryDeadLetters(bare, { ids: [legit.id] });
    expect(retry).toMatchObject({ closed: false, report: { outcome: 'verify-unavailable' } });
    expect((retry!.report.error as Error).message).toMatch(
      /^\[@payhook\/core\] .*this receiver has no client\. Configure one, createReceiver\(\{ client: createClient/,
    );
    expect(runs).toEqual([]);
  });

  it.skipIf(skip)(
    'the payhook command says why: dead-letters retry of the forged record',
    async () => {
      const withClient = await payhook(['dead-letters', 'retry', forged.id], {
        ...cliEnv,
        TRUST_BASE_URL: ref.url,
        TRUST_API_KEY: ref.apiKey,
      });
      expect(withClient.stderr).toBe('');
      expect(withClient.code).toBe(1);
      expect(withClient.stdout).toMatch(
        /: mismatch \(200\), still open - \[@payhook\/core\] delivery \S+ was not replayed: .*amount "999999.00" stored, "100.00" at the service/,
      );
      expect(withClient.stdout).toContain('0 of 1 dead letters closed');
      const bare = await payhook(['dead-letters', 'retry', forged.id], cliEnv);
      expect(bare.stdout).toMatch(/: verify-unavailable \(503\), still open - \[@payhook\/core\] .*no client\. Configure one/);
      const effects = await effectsTable(pgUrl!);
      expect(await countPg(effects, run)).toEqual(new Map());
      await effects.end();
    },
    60_000,
  );

  it.skipIf(skip)('the legitimate reconciled dead letter still retries, and its handler gets the service record', async () => {
    const [retry] = await retryDeadLetters(receiver, { ids: [legit.id] });
    expect(retry).toMatchObject({ forced: false, closed: true, report: { outcome: 'processed', source: 'replay' } });
    expect(runs).toHaveLength(1);
    const [{ event, ctx }] = runs as [(typeof runs)[0]];
    expect(ctx).toMatchObject({ source: 'replay', record: { reference, amount: '100.00', status: 'completed' } });
    expect(event).toEqual(eventFromRecord(ctx.record!, 'payment.success'));
    expect(JSON.parse((await store.ledger!.get(retry!.report.deliveryId!))!.body!)).toEqual(event);
  });

  it.skipIf(skip)('a webhook record runs only if its stored bytes verify: changed bytes, or a refused delivery, run nothing', async () => {
    const genuine = JSON.stringify({ ...JSON.parse(legit.body!), reference, status: 'completed' });
    const { signature } = signedBody(genuine, { secret: ref.webhookSecret });
    const at = Date.now();
    const webhook = {
      ...forged,
      source: 'webhook' as const,
      signatureHeader: signature,
      outcome: 'rejected' as const,
      status: 200,
      deadLetter: { reason: 'rejected' as const, at },
    };
    // Signature "valid", but the bytes were changed after it was checked.
    const altered = { ...webhook, id: forgedId(at), signature: 'valid' as const, body: genuine.replace('"100.00"', '"999999.00"') };
    // Bytes that verify, on a record of a delivery that was refused: never run.
    const refused = { ...webhook, id: forgedId(at), signature: 'invalid' as const, body: genuine };
    for (const e of [altered, refused]) await kind.forge(name, e);
    const before = runs.length;
    for (const e of [altered, refused]) {
      expect((await receiver.replay(e.id, { force: true })).outcome).toBe('unauthorized');
      const [retry] = await retryDeadLetters(receiver, { ids: [e.id] });
      expect(retry).toMatchObject({ closed: false, report: { outcome: 'unauthorized' } });
    }
    expect((await receiver.replay(refused.id)).error).toMatchObject({
      message: expect.stringMatching(/was not replayed: its signature was invalid/),
    });
    expect(runs.length).toBe(before);
  });
});

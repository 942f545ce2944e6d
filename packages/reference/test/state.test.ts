import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClock } from '@payhook/reference';
import { afterEach, describe, expect, it } from 'vitest';
import { liveLogLine } from '../src/delivery/live-log.js';
import { createStateSaver, readStateFile, StateFileError } from '../src/state/state-file.js';
import { merchants, receiver, start, validInput, type Started } from '@payhook/test-support/apps/reference-service';

const MINUTE = 60_000;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

async function started(url: string, options: Parameters<typeof start>[0] = {}): Promise<Started> {
  const s = await start({ allowHttpCallbacks: true, merchants: merchants(url), ...options });
  cleanup.push(s.close);
  return s;
}

describe('state kept across a restart (serve --state)', () => {
  it('a retrying delivery is retried by the restarted service; transactions list in order, new ones after', async () => {
    let down = true;
    const r = await receiver((_n, _req, res) => {
      res.writeHead(down ? 503 : 200).end(down ? 'busy' : 'ok');
    });
    cleanup.push(r.close);
    const startAt = Date.parse('2026-08-13T10:00:00.000Z');
    const first = await started(r.url, { clock: createClock({ mode: 'manual', startAt }) });
    const lines: string[] = [];
    const init = await first.call('POST', '/v1/transactions/initialize', { body: validInput({ customerPhone: '0900000010' }) });
    const reference = init.json.reference as string;
    await first.service.clock.advance(0);
    const [failed] = first.service.deliveries();
    expect(failed).toMatchObject({ state: 'retrying', nextAttemptAt: '2026-08-13T10:01:00.000Z' });
    expect(failed!.attempts[0]).toMatchObject({ status: 503, responseBody: 'busy' });
    expect(liveLogLine(failed!, failed!.attempts[0]!)).toBe(
      `2026-08-13T10:00:00.000Z payment.success ${reference} dlv_1 attempt 1/5 → 503 in 0 ms, answered 503, not 2xx; retry 2/5 at 2026-08-13T10:01:00.000Z (60 s after this attempt started)`,
    );

    // What the state file holds, as JSON, read back by a new service.
    const saved = JSON.parse(JSON.stringify(first.service.snapshot()));
    await first.close();
    down = false;
    const second = await started(r.url, {
      clock: createClock({ mode: 'manual', startAt }),
      state: saved,
      onDeliveryAttempt: (d, a) => lines.push(liveLogLine(d, a)),
    });
    expect((await second.call('GET', `/v1/transactions/${reference}`)).json).toMatchObject({ reference, status: 'completed' });
    await second.service.clock.advance(MINUTE);
    expect(second.service.deliveries().map((d) => [d.id, d.state, d.attempts.map((a) => a.status)])).toEqual([
      ['dlv_1', 'delivered', [503, 200]],
    ]);
    expect(lines).toEqual([
      expect.stringMatching(/^2026-08-13T10:01:00\.000Z payment\.success \S+ dlv_1 attempt 2\/5 → 200 in \d+ ms, delivered$/),
    ]);

    const later = await second.call('POST', '/v1/transactions/initialize', { body: validInput({ merchantReference: 'after-restart' }) });
    const list = await second.call('GET', '/v1/transactions');
    expect(list.json.data.map((t: { reference: string }) => t.reference)).toEqual([later.json.reference, reference]);
  });

  it('the saver writes atomically and only on change; the reader refuses what it cannot use', () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-state-'));
    const file = join(dir, 'state.json');
    const state = {
      merchants: [{ id: 'm', apiKeys: [{ sha256: 'a'.repeat(64), mode: 'sandbox' as const }], webhookSecret: 'whsec_x' }],
      clockOffsetMs: 0,
      transactions: [],
      deliveries: [],
    };
    const errors: string[] = [];
    const saver = createStateSaver(
      file,
      () => state,
      (m) => errors.push(m),
    );
    expect(saver.flush()).toBeNull();
    expect(readStateFile(file)).toEqual(state);
    writeFileSync(file, 'changed by hand');
    // Nothing changed in memory: no write, the hand edit stays.
    expect(saver.flush()).toBeNull();
    expect(readFileSync(file, 'utf8')).toBe('changed by hand');
    expect(() => readStateFile(file)).toThrow(StateFileError);
    expect(() => readStateFile(file)).toThrow(/not valid JSON .*move it away/);
    expect(readStateFile(join(dir, 'absent.json'))).toBeNull();
    const bad = createStateSaver(
      join(dir, 'missing', 'state.json'),
      () => state,
      (m) => errors.push(m),
    );
    expect(bad.flush()).toMatch(/cannot write the state file .*check the directory exists/);
  });
});

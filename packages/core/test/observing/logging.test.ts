import { Writable } from 'node:stream';
import pino from 'pino';
import winston from 'winston';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEvent, manualClock, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type DeliveryOutcome, type LoggerOption, type LogLevel } from '../../src/index.js';
import { LEVEL } from '../../src/observing/report.js';
import { everyOutcome, LATE_OUTCOMES, secret } from '../every-outcome.js';

/** One line as a logger wrote it: its level, its message, and the fields it carried. */
interface Line {
  level: LogLevel;
  message: string;
  fields: Record<string, unknown>;
}

/** A stream that keeps each JSON line written to it. */
function jsonLines(parse: (entry: Record<string, unknown>) => Line) {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(parse(JSON.parse(text) as Record<string, unknown>));
      done();
    },
  });
  return { lines, stream };
}

const PINO_LEVELS: Record<number, LogLevel> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

/** Each kind of logger, made as its own docs show, and a way to read back what it wrote. */
const LOGGERS: Record<string, () => { logger: LoggerOption; lines: Line[]; flush?: () => Promise<void> }> = {
  pino() {
    const { lines, stream } = jsonLines(({ level, msg, ...fields }) => ({
      level: PINO_LEVELS[level as number]!,
      message: String(msg),
      fields,
    }));
    return { logger: pino({ level: 'debug' }, stream), lines };
  },
  'a pino child logger'() {
    const { lines, stream } = jsonLines(({ level, msg, ...fields }) => ({
      level: PINO_LEVELS[level as number]!,
      message: String(msg),
      fields,
    }));
    return { logger: pino({ level: 'debug' }, stream).child({ component: 'webhooks' }), lines };
  },
  winston() {
    const { lines, stream } = jsonLines(({ level, message, ...fields }) => ({
      level: level as LogLevel,
      message: String(message),
      fields,
    }));
    const logger = winston.createLogger({
      level: 'debug',
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    });
    return { logger, lines, flush: () => new Promise((resolve) => setImmediate(resolve)) };
  },
  console() {
    const lines: Line[] = [];
    for (const level of ['debug', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((message: unknown, fields: unknown) => {
        lines.push({ level, message: String(message), fields: fields as Record<string, unknown> });
      });
    }
    return { logger: console, lines };
  },
  'a function'() {
    const lines: Line[] = [];
    return { logger: (level, fields, message) => void lines.push({ level, message, fields: fields as Record<string, unknown> }), lines };
  },
};

afterEach(() => vi.restoreAllMocks());

describe.each(Object.keys(LOGGERS))('logging through %s', (kind) => {
  it('logs every outcome of the status table once, at its level, with its fields first and errors under err', async () => {
    const { logger, lines, flush } = LOGGERS[kind]!();
    const answers = await everyOutcome(logger);
    await flush?.();
    const reports = lines.filter((l) => 'outcome' in l.fields);
    const expected: [DeliveryOutcome, boolean][] = [
      ...answers.map((a) => [a.expected, false] as [DeliveryOutcome, boolean]),
      ...LATE_OUTCOMES.map((o) => [o, true] as [DeliveryOutcome, boolean]),
    ];
    expect(reports.map((l) => [l.fields.outcome, l.fields.late === true]).sort()).toEqual(expected.sort());
    for (const line of reports) {
      const outcome = line.fields.outcome as DeliveryOutcome;
      expect(line.level, `${outcome} logged at its level`).toBe(line.fields.late ? 'info' : LEVEL[outcome]);
      expect(line.message).toMatch(/^\[@payhook\/core\] /);
      expect(line.fields).not.toHaveProperty('error');
      expect(typeof line.fields.durationMs).toBe('number');
    }
    const fields = (outcome: string) => reports.find((l) => l.fields.outcome === outcome && !l.fields.late)!.fields;
    expect(fields('processed')).toMatchObject({ status: 200, attempt: 1, secretIndex: 0, event: 'payment.success' });
    expect(fields('processed').dedupeKey).toBe(`sandbox:${String(fields('processed').reference)}:payment.success`);
    expect(fields('failed')).toHaveProperty('err');
    expect(fields('rejected')).toHaveProperty('err');
    expect(fields('unauthorized')).toMatchObject({ status: 401, reason: 'mismatch' });
    // A healthy delivery logs nothing above info.
    expect(['processed', 'duplicate', 'ignored', 'in-progress', 'accepted'].map((o) => LEVEL[o as DeliveryOutcome])).not.toContain('warn');
    if (kind === 'a pino child logger') expect(fields('processed')).toMatchObject({ component: 'webhooks' });
    if (kind.startsWith('pino') || kind.startsWith('a pino'))
      expect(fields('failed').err).toMatchObject({ type: 'Error', message: 'the warehouse is unreachable' });
  });
});

describe('a logger never changes an answer', () => {
  const statuses = async (logger: LoggerOption) => (await everyOutcome(logger)).map((a) => [a.expected, a.status, a.body]);

  it.each([
    ['every method throws', { debug: boom, info: boom, warn: boom, error: boom }],
    ['isLevelEnabled throws', { isLevelEnabled: boom, info: boom, warn: boom, error: boom }],
    ['a function that throws', boom],
    ['pino whose destination throws', pino({ level: 'debug' }, { write: boom })],
  ])('%s: the same statuses and bodies as with a silent logger', async (_, logger) => {
    const silent = await statuses({});
    expect(await statuses(logger as LoggerOption)).toEqual(silent);
  });

  it('the status table is answered as the README says, whatever logs it', async () => {
    const answers = await everyOutcome({});
    expect(answers.map((a) => [a.expected, a.status])).toEqual([
      ['method-not-allowed', 405],
      ['too-large', 413],
      ['too-slow', 408],
      ['body-unavailable', 500],
      ['unauthorized', 401],
      ['malformed', 400],
      ['invalid', 400],
      ['ignored', 200],
      ['store-unavailable', 503],
      ['processed', 200],
      ['duplicate', 200],
      ['failed', 500],
      ['rejected', 200],
      ['accepted', 202],
      ['in-progress', 409],
      ['deferred', 503],
      ['held', 409],
    ]);
    for (const a of answers) expect(a.body).toBe(`{"outcome":"${a.expected}"}`);
  });
});

function boom(): never {
  throw new Error('the log sink is down');
}

describe('a handler that fails after its 202', () => {
  it('is logged once at error, as late, saying the service will not redeliver and what recovers it', async () => {
    const clock = manualClock(0);
    const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
    const receiver = createReceiver({
      secret,
      clock,
      budgetMs: 200,
      store: memoryStore({ now: clock.now }),
      logger: (level, fields, message) => void lines.push({ level, fields: fields as Record<string, unknown>, message }),
    }).on('payment.success', async () => {
      await clock.sleep(500);
      throw new Error('the warehouse is unreachable');
    });
    const answer = receiver.handle(signedRequest(createEvent('payment.success'), { secret }));
    await clock.advance(200);
    expect((await answer).status).toBe(202);
    await clock.advance(300);
    expect(lines.map((l) => [l.level, l.fields.outcome, l.fields.late ?? false])).toEqual([
      ['info', 'accepted', false],
      ['error', 'failed', true],
    ]);
    expect(lines[1]!.message).toBe(
      '[@payhook/core] a handler failed after the service was answered 202, so the service will not redeliver the event: createReconciler recovers it.',
    );
    expect(lines[1]!.fields).toMatchObject({ status: 500, durationMs: 500 });
    expect(lines[1]!.fields.err).toBeInstanceOf(Error);
  });
});

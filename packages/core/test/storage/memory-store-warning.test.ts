import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createEvent, signedRequest } from '@payhook/testing';
import { createReceiver, memoryStore, type LogLevel } from '../../src/index.js';
import { createJobRunner } from '../../src/queue.js';
import { asFreshProcess } from '../fresh-process.js';

type Core = typeof import('../../src/index.js');
type Queue = typeof import('../../src/queue.js');

const secret = 'whsec_memory_store_warning';

/** A logger that keeps every line, as a function logger gets it. */
function recorder() {
  const lines: { level: LogLevel; fields: Record<string, unknown>; message: string }[] = [];
  const logger = (level: LogLevel, fields: object, message: string) =>
    void lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 'warn') };
}

/**
 * Another copy of core's modules in this process, as a second bundle or a `next dev` reload
 * makes one: the module registry emptied, then core imported again from its sources.
 */
async function anotherCopy(): Promise<{ core: Core; queue: Queue }> {
  vi.resetModules();
  const core = (await import('../../src/index.js')) as Core;
  const queue = (await import('../../src/queue.js')) as Queue;
  expect(core.createReceiver).not.toBe(createReceiver);
  return { core, queue };
}

asFreshProcess();

describe('the memory store on a serverless platform', () => {
  const PLATFORMS: [string, string][] = [
    ['VERCEL', 'Vercel'],
    ['NETLIFY', 'Netlify'],
    ['FUNCTION_TARGET', 'Google Cloud Functions'],
    ['K_SERVICE', 'Google Cloud Run'],
    ['AWS_LAMBDA_FUNCTION_NAME', 'AWS Lambda'],
  ];
  it.each(PLATFORMS)("%s set: one warning through the receiver's logger, naming %s and the shared stores", (name, platform) => {
    vi.stubEnv(name, '1');
    const first = recorder();
    createReceiver({ secret, logger: first.logger });
    expect(first.warnings()).toHaveLength(1);
    const [line] = first.warnings();
    expect(line!.fields).toEqual({ cause: 'serverless', platform });
    expect(line!.message).toMatch(/^\[@payhook\/core\] the memory store cannot deduplicate on /);
    expect(line!.message).toContain(platform);
    expect(line!.message).toContain('redisStore from @payhook/store-redis');
    expect(line!.message).toContain('postgresStore from @payhook/store-postgres');
    expect(line!.message).toContain('upstashStore from @payhook/store-upstash');
    expect(line!.message.includes('dynamoStore from @payhook/store-dynamodb')).toBe(platform === 'AWS Lambda');
    expect(line!.message).toContain('memoryStore({ warn: false })');
    // Once per process: the next receiver, with the default or an explicit memory store, is not warned again.
    const second = recorder();
    createReceiver({ secret, logger: second.logger, store: memoryStore() });
    createReceiver({ secret, logger: second.logger });
    expect(second.warnings()).toEqual([]);
  });

  it('the Edge runtime (globalThis.EdgeRuntime): says to receive in a Node.js route', () => {
    vi.stubGlobal('EdgeRuntime', 'edge-runtime');
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'serverless', platform: 'the Edge runtime' }]);
    expect(log.warnings()[0]!.message).toContain("export const runtime = 'nodejs'");
    expect(log.warnings()[0]!.message).toContain('redisStore from @payhook/store-redis');
    expect(log.warnings()[0]!.message).toContain('upstashStore from @payhook/store-upstash');
  });

  it('Cloudflare Workers (navigator.userAgent): names the Durable Object store, and Upstash', () => {
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'serverless', platform: 'Cloudflare Workers' }]);
    expect(log.warnings()[0]!.message).toContain('durableObjectStore from @payhook/store-durable-object');
    expect(log.warnings()[0]!.message).toContain('upstashStore from @payhook/store-upstash');
  });

  it('a queue worker with the default store is warned too', () => {
    vi.stubEnv('K_SERVICE', 'payhook-worker');
    const log = recorder();
    createJobRunner({ logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'serverless', platform: 'Google Cloud Run' }]);
  });

  it('memoryStore({ warn: false }) is not warned of, and leaves the warning to the next memory store that may warn', () => {
    vi.stubEnv('VERCEL', '1');
    const log = recorder();
    createReceiver({ secret, logger: log.logger, store: memoryStore({ warn: false }) });
    createJobRunner({ logger: log.logger, store: memoryStore({ warn: false }) });
    expect(log.warnings()).toEqual([]);
    createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'serverless', platform: 'Vercel' }]);
  });

  it("a store of your own (here one built from a memory store's methods) is not warned of", () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'webhooks');
    const log = recorder();
    createReceiver({ secret, logger: log.logger, store: { ...memoryStore() } });
    expect(log.warnings()).toEqual([]);
  });

  it('on a long-lived process nothing is logged', () => {
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    createReceiver({ secret, logger: log.logger, store: memoryStore() });
    expect(log.lines).toEqual([]);
  });
});

describe('the memory store with several copies of core in one process', () => {
  beforeEach(() => {
    // Outside a test runner, where a second copy means two bundles or a reload.
    vi.stubEnv('NODE_ENV', 'production');
  });

  it('several memory stores of one copy are not warned of', () => {
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    createReceiver({ secret, logger: log.logger, store: memoryStore() });
    createJobRunner({ logger: log.logger });
    expect(log.lines).toEqual([]);
  });

  it("a receiver of a second copy is warned, once, through its own logger; the copies' stores do not share records", async () => {
    const first = recorder();
    let runs = 0;
    const receiver = createReceiver({ secret, logger: first.logger }).on('payment.success', () => void runs++);
    const { core } = await anotherCopy();
    const second = recorder();
    const other = core.createReceiver({ secret, logger: second.logger }).on('payment.success', () => void runs++);
    expect(first.warnings()).toEqual([]);
    expect(second.warnings().map((l) => l.fields)).toEqual([{ cause: 'several-copies', copies: 2 }]);
    const { message } = second.warnings()[0]!;
    expect(message).toMatch(
      /^\[@payhook\/core\] the memory store cannot deduplicate here: @payhook\/core is loaded 2 times in this process/,
    );
    expect(message).toContain('App Router and Pages Router');
    expect(message).toContain('next dev');
    expect(message).toContain('redisStore from @payhook/store-redis or postgresStore from @payhook/store-postgres');
    expect(message).toContain('memoryStore({ warn: false })');
    // What the warning is about: one event, delivered once to each copy's receiver, runs twice.
    const event = createEvent('payment.success');
    expect((await receiver.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect((await other.handle(signedRequest(event, { secret }))).status).toBe(200);
    expect(runs).toBe(2);
    // Once per process: a third copy is not warned of again.
    const third = recorder();
    (await anotherCopy()).core.createReceiver({ secret, logger: third.logger });
    expect(third.warnings()).toEqual([]);
  });

  it('one memory store shared by both copies (through globalThis) deduplicates, and is not warned of', async () => {
    const shared = memoryStore();
    const log = recorder();
    createReceiver({ secret, logger: log.logger, store: shared });
    const { core } = await anotherCopy();
    core.createReceiver({ secret, logger: log.logger, store: shared });
    expect(log.warnings()).toEqual([]);
  });

  it('receivers are compared with receivers, workers with workers: a worker of another copy beside a receiver is not warned of', async () => {
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    const { core, queue } = await anotherCopy();
    queue.createJobRunner({ logger: log.logger });
    expect(log.warnings()).toEqual([]);
    core.createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'several-copies', copies: 2 }]);
  });

  it('memoryStore({ warn: false }) in the second copy is not warned of', async () => {
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    const { core } = await anotherCopy();
    core.createReceiver({ secret, logger: log.logger, store: core.memoryStore({ warn: false }) });
    expect(log.warnings()).toEqual([]);
  });

  it('under NODE_ENV=test a second copy is not warned of (test runners load modules afresh per file); once it is not test, it is', async () => {
    vi.stubEnv('NODE_ENV', 'test');
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    const { core } = await anotherCopy();
    core.createReceiver({ secret, logger: log.logger });
    expect(log.warnings()).toEqual([]);
    vi.stubEnv('NODE_ENV', 'development');
    core.createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields)).toEqual([{ cause: 'several-copies', copies: 2 }]);
  });

  it('serverless and several copies are two causes: each warned of once', async () => {
    vi.stubEnv('NETLIFY', 'true');
    const log = recorder();
    createReceiver({ secret, logger: log.logger });
    const { core } = await anotherCopy();
    core.createReceiver({ secret, logger: log.logger });
    core.createReceiver({ secret, logger: log.logger });
    expect(log.warnings().map((l) => l.fields.cause)).toEqual(['serverless', 'several-copies']);
  });
});

import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEvent, signedBody } from '@payhook/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { adapterConformance } from './adapter-conformance.js';
import { SCENARIO, type LogLine } from './next-app/lib/scenario.js';
import { buildNextApp, startNextApp } from './next-server.js';

// One `next build` of next-app/ for both routers; each suite then runs `next start` on it.
beforeAll(buildNextApp, 240_000);

adapterConformance('next app router', {
  start: (logFile, signatureHeader) => startNextApp(logFile, '/api/webhooks', undefined, signatureHeader),
  platform: (logFile) => startNextApp(logFile, '/api/platform'),
  parserFirst: {
    // The App Router has no body parser; the same mistake is reading the request before payhook.
    start: (logFile) => startNextApp(logFile, '/api/read-first', '/api/echo'),
    expect: { fix: /^\[@payhook\/next\] the request stream was already read.*App Router, do not read the request/ },
  },
});

adapterConformance('next pages router', {
  start: (logFile, signatureHeader) => startNextApp(logFile, '/api/pages-webhooks', undefined, signatureHeader),
  platform: (logFile) => startNextApp(logFile, '/api/pages-platform'),
  parserFirst: {
    start: (logFile) => startNextApp(logFile, '/api/pages-parsed', '/api/pages-echo'),
    expect: { fix: /^\[@payhook\/next\] a body parser already parsed the request.*bodyParser: false/ },
  },
});

// The first-hour report: in one `next start` process the App Router and the Pages Router routes
// each bundle their own copy of @payhook/core, so their default memory stores do not share
// records. payhook cannot join them; it says so, once, through the receiver's logger.
describe('one next start process, both routers, on the default memory store', () => {
  it('runs one event in each router (the copies share nothing) and warns once: several-copies', async () => {
    const logFile = join(mkdtempSync(join(tmpdir(), 'payhook-next-copies-')), 'log.jsonl');
    // As in production: test runners' NODE_ENV=test turns this warning off on purpose.
    const app = await startNextApp(logFile, '/api/webhooks', undefined, '', { NODE_ENV: 'production' });
    try {
      const event = createEvent('payment.success');
      const body = JSON.stringify(event);
      const { headers } = signedBody(body, { secret: SCENARIO.secrets[0] });
      for (const route of ['/api/webhooks', '/api/pages-webhooks']) {
        const res = await fetch(new URL(route, app.url), { method: 'POST', headers, body });
        expect(res.status, route).toBe(200);
      }
      const lines = readFileSync(logFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LogLine);
      expect(lines.filter((l) => l.kind === 'run' && l.reference === event.reference)).toHaveLength(2);
      const warnings = lines.filter((l) => l.kind === 'warn');
      expect(warnings).toEqual([expect.objectContaining({ cause: 'several-copies' })]);
      expect(warnings[0]).toMatchObject({
        message: expect.stringMatching(/^\[@payhook\/core\] the memory store cannot deduplicate.*redisStore.*postgresStore/),
      });
    } finally {
      await app.close();
    }
  }, 60_000);
});

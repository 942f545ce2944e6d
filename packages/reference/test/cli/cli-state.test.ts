// `serve --state` through the real CLI: a hostile file is refused with the package's message, the
// file is private, and the signature header survives a restart.
import { mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { finish as finishBuilt, killLeftovers, run as runBuilt, signatureOf, SOURCE, stop, urlOf } from './cli-helpers.js';
import { receiver } from '@payhook/test-support/apps/reference-service';

// The CLI's source, in a child process as a user runs the bin: cli.test.ts builds dist/ meanwhile.
const run = (args: string[]) => runBuilt(args, {}, SOURCE);
const finish = (args: string[]) => finishBuilt(args, {}, SOURCE);
afterEach(killLeftovers);

const DEEP = 100_000;
const deep = `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`;
const saved = {
  format: 'payhook-reference-state',
  version: 1,
  merchants: [{ id: 'm', apiKeys: [{ sha256: 'a'.repeat(64), mode: 'sandbox' }], webhookSecret: 'whsec_the_secret' }],
  transactions: [],
  deliveries: [],
};

describe('serve --state with a hostile file', () => {
  it('refuses a deeply nested, oversized-looking or linked file with the package message, no stack, and leaves it as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'payhook-state-'));
    const victim = join(mkdtempSync(join(tmpdir(), 'payhook-victim-')), 'victim.txt');
    writeFileSync(victim, 'the victim');
    const cases: [string, string | null, RegExp][] = [
      ['deep.json', deep, /nests arrays or objects deeper than 32 levels/],
      // Nesting where zod passes it through and only the save would recurse into it (the RangeError of the report).
      ['merchant.json', JSON.stringify(saved).replace('"webhookSecret"', `"x": ${deep}, "webhookSecret"`), /deeper than 32 levels/],
      ['array.json', '[1, 2, 3]', /is not a payhook-reference state file \(Invalid input: expected object, received array\)/],
      ['link.json', null, /is a symbolic link to .*victim\.txt: .*Pass the file itself with --state, or remove the link/],
    ];
    for (const [name, content, says] of cases) {
      const file = join(dir, name);
      if (content === null) symlinkSync(victim, file);
      else writeFileSync(file, content);
      const p = await finish(['serve', '--port', '0', '--state', file]);
      expect({ name, code: p.code }).toEqual({ name, code: 2 });
      expect(p.output).toMatch(/^\[@payhook\/reference\] the state file /);
      expect(p.output).toMatch(says);
      expect(p.output).not.toMatch(/RangeError|unexpected error|\n\s+at /);
      expect(p.output.trim().split('\n')).toHaveLength(1);
      if (content !== null) expect(readFileSync(file, 'utf8')).toBe(content);
    }
    expect(readFileSync(victim, 'utf8')).toBe('the victim');
  }, 60_000);
});

describe('serve --state keeps the signature header', () => {
  it('a restart without --signature-header signs in the saved header; a flag given later wins and is saved', async () => {
    const hook = await receiver();
    const state = join(mkdtempSync(join(tmpdir(), 'payhook-state-')), 'state.json');
    const first = run([
      'serve',
      '--port',
      '0',
      '--allow-http-callbacks',
      '--quiet',
      '--callback-url',
      hook.url,
      '--state',
      state,
      '--signature-header',
      'X-Epay-Signature',
    ]);
    // An answer means serve() has run on past the banner, so its SIGTERM handler is installed (see stop).
    expect((await fetch(`${await urlOf(first)}/v1/transactions`)).status).toBe(401);
    const key = /sandbox key\s+(sk_test_\S+)/.exec(first.output())![1]!;
    const secret = /webhook secret\s+(whsec_\S+)/.exec(first.output())![1]!;
    await stop(first);
    expect(statSync(state).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ signatureHeader: 'X-Epay-Signature' });

    const second = run(['serve', '--port', '0', '--allow-http-callbacks', '--quiet', '--state', state]);
    const url = await urlOf(second);
    expect(second.output()).toContain('signed in       X-Epay-Signature (kept in the state file)');
    const t = await finish(['trigger', 'payment.success', '--url', url, '--api-key', key]);
    expect(t.code, t.output).toBe(0);
    const [request] = hook.requests;
    expect(request!.headers['x-epay-signature']).toBe(signatureOf(request!.body, secret));
    expect(request!.headers['x-service-signature']).toBeUndefined();
    await stop(second);

    const third = run([
      'serve',
      '--port',
      '0',
      '--allow-http-callbacks',
      '--quiet',
      '--state',
      state,
      '--signature-header',
      'X-Service-Signature',
    ]);
    expect((await fetch(`${await urlOf(third)}/v1/transactions`)).status).toBe(401);
    expect(third.output()).toContain(
      'signed in       X-Service-Signature (--signature-header; the state file said X-Epay-Signature, now saved)',
    );
    await stop(third);
    expect(JSON.parse(readFileSync(state, 'utf8'))).toMatchObject({ signatureHeader: 'X-Service-Signature' });
    expect(statSync(state).mode & 0o777).toBe(0o600);
    await hook.close();
  }, 60_000);
});

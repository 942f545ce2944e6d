import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

it('docs/testing.md shows retry-storm.test.ts exactly, so the guide cannot rot', () => {
  const guide = read('../../../docs/testing.md');
  const block = /<!-- begin: packages\/testing\/test\/retry-storm\.test\.ts -->\n```ts\n([\s\S]*?)```\n<!-- end: packages\/testing\/test\/retry-storm\.test\.ts -->/.exec(guide);
  expect(block, 'docs/testing.md lost its retry-storm block: restore the begin/end markers around the code').not.toBeNull();
  expect(block![1], 'docs/testing.md differs from retry-storm.test.ts: copy the test file into the guide').toBe(read('./retry-storm.test.ts'));
});

it('the guide names only helpers the package exports', async () => {
  const api = await import('@payhook/testing');
  const guide = read('../../../docs/testing.md');
  for (const name of ['createEvent', 'createEvents', 'signedBody', 'signedRequest', 'deliver', 'startReferenceService', 'recordRuns', 'payhookMatchers', 'connect']) {
    expect(guide).toContain(`${name}(`.replace('payhookMatchers(', 'payhookMatchers'));
    expect(typeof (api as Record<string, unknown>)[name], name).not.toBe('undefined');
  }
});

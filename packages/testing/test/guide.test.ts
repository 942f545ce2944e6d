import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8');

it.each([
  ['packages/testing/test/retry-storm.test.ts', 'ts', './retry-storm.test.ts'],
  ['docs/snippets/testing-reference.mjs', 'js', '../../../docs/snippets/testing-reference.mjs'],
])('docs/guides/testing/README.md shows %s exactly, so the guide cannot rot', (path, lang, file) => {
  const guide = read('../../../docs/guides/testing/README.md');
  const marker = (word: string) => `<!-- ${word}: ${path} -->`;
  const start = guide.indexOf(`${marker('begin')}\n\`\`\`${lang}\n`);
  const end = guide.indexOf(`\`\`\`\n${marker('end')}`);
  expect(
    start >= 0 && end > start,
    `docs/guides/testing/README.md lost its ${path} block: restore the begin/end markers around the code`,
  ).toBe(true);
  const block = guide.slice(start + marker('begin').length + lang.length + 5, end);
  expect(block, `docs/guides/testing/README.md differs from ${path}: copy the file into the guide`).toBe(read(file));
});

it('the guide names only helpers the package exports', async () => {
  const api = await import('@payhook/testing');
  const guide = read('../../../docs/guides/testing/README.md');
  for (const name of [
    'createEvent',
    'createEvents',
    'signedBody',
    'signedRequest',
    'deliver',
    'startReferenceService',
    'recordRuns',
    'payhookMatchers',
    'connect',
  ]) {
    expect(guide).toContain(`${name}(`.replace('payhookMatchers(', 'payhookMatchers'));
    expect(typeof (api as Record<string, unknown>)[name], name).not.toBe('undefined');
  }
});

import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const snippets = readdirSync(`${root}docs/snippets`).filter((f) => f.endsWith('.ts'));

/** What each snippet must print: the docs promise these outcomes. */
const expected: Record<string, RegExp[]> = {
  'client-and-reconcile.ts': [
    /fulfil order-1001: the service says completed/,
    /scanned 1, recovered payment\.success P[0-9A-F]{8}\d{8}/,
    /second run recovered 0/,
  ],
};

describe('docs snippets run as written', () => {
  it('has expectations for every snippet', () => {
    expect(snippets.sort()).toEqual(Object.keys(expected).sort());
  });
  it.each(snippets)('%s', async (file) => {
    const { stdout } = await promisify(execFile)(`${root}node_modules/.bin/tsx`, [`docs/snippets/${file}`], { cwd: root, timeout: 30_000 });
    for (const line of expected[file]!) expect(stdout).toMatch(line);
  });
});

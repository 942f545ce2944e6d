// Every relative link in the repository's Markdown points at a file or folder inside the
// repository that exists. Anchors are not checked (only the file); http(s), mailto and other
// URLs with a scheme, and links to an anchor of the same page, are skipped.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Folders that hold no documentation of the repository's own: installs, builds, caches. */
const SKIP = new Set(['node_modules', '.git', 'dist', '.next', 'coverage', 'tmp', '.turbo', '.stryker-tmp', 'reports']);

function markdownFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP.has(entry.name)) found.push(...markdownFiles(resolve(dir, entry.name)));
    } else if (entry.name.endsWith('.md')) {
      found.push(resolve(dir, entry.name));
    }
  }
  return found;
}

/** The text without fenced code blocks and inline code, keeping line numbers. */
function prose(text: string): string {
  const lines = text.split('\n');
  let fence: string | null = null;
  return lines
    .map((line) => {
      const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
      if (fence !== null) {
        if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
        return '';
      }
      if (marker) {
        fence = marker;
        return '';
      }
      return line.replace(/(`+)[^`]*?\1/g, '');
    })
    .join('\n');
}

interface Link {
  line: number;
  target: string;
}

/** Inline links and images `[text](target "title")`, and reference definitions `[id]: target`. */
function linksOf(text: string): Link[] {
  const links: Link[] = [];
  prose(text)
    .split('\n')
    .forEach((line, i) => {
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+["'(][^)]*)?\)/g)) {
        links.push({ line: i + 1, target: m[1]!.replace(/^<|>$/g, '') });
      }
      const definition = /^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(line);
      if (definition) links.push({ line: i + 1, target: definition[1]!.replace(/^<|>$/g, '') });
    });
  return links;
}

/** Why a link is broken, or null when it is fine or not a file link. */
function problemOf(file: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // a URL: https:, mailto:…
  const path = target.split('#')[0]!.split('?')[0]!;
  if (path === '') return null; // an anchor of this page
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return 'is not a valid URL path';
  }
  // GitHub reads a leading slash as the repository's root.
  const absolute = decoded.startsWith('/') ? resolve(root, `.${decoded}`) : resolve(dirname(file), decoded);
  const inside = relative(root, absolute);
  if (inside === '..' || inside.startsWith(`..${sep}`) || resolve(root, inside) !== absolute) return 'points outside the repository';
  if (!existsSync(absolute)) return `points at ${inside.split(sep).join('/')}, which does not exist`;
  return null;
}

describe('Markdown links', () => {
  const files = markdownFiles(root);

  it('finds the Markdown files', () => {
    const names = files.map((f) => relative(root, f).split(sep).join('/'));
    expect(names).toContain('README.md');
    expect(names).toContain('docs/service.md');
    expect(names.some((n) => n.includes('node_modules'))).toBe(false);
  });

  it('recognises links, and only outside code', () => {
    const text = 'See [a](docs/a.md#x) and ![b](<b c.png> "t").\n`[no](code.md)`\n```\n[no](fenced.md)\n```\n[id]: ref.md\n';
    expect(linksOf(text)).toEqual([
      { line: 1, target: 'docs/a.md#x' },
      { line: 1, target: 'b c.png' },
      { line: 6, target: 'ref.md' },
    ]);
    const readme = resolve(root, 'README.md');
    expect(problemOf(readme, 'https://example.com/x')).toBeNull();
    expect(problemOf(readme, '#options')).toBeNull();
    expect(problemOf(readme, 'docs/guides/testing/README.md#matchers-vitest-and-jest')).toBeNull();
    expect(problemOf(readme, '../shared/payment-service-interface.md')).toBe('points outside the repository');
    expect(problemOf(readme, 'docs/missing.md')).toMatch(/does not exist/);
  });

  it.each(files.map((f) => relative(root, f).split(sep).join('/')))('%s links only to files in the repository', (name) => {
    const file = resolve(root, name);
    const broken = linksOf(readFileSync(file, 'utf8'))
      .map(({ line, target }) => ({ line, target, problem: problemOf(file, target) }))
      .filter((l) => l.problem !== null)
      .map((l) => `${name}:${l.line}: (${l.target}) ${l.problem}`);
    expect(broken, broken.join('\n')).toEqual([]);
  });
});

// The site's sidebar, read from docs/ at build time: a page's title is its first `# heading`, a
// folder's README.md is the folder's own page, and a guide added under docs/guides/ appears with no
// edit here. Pages sort by an optional `order: <number>` in their front matter, then by file name.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { DefaultTheme } from 'vitepress';

type Item = DefaultTheme.SidebarItem;

/** The first `# heading` of a markdown file, its inline code and emphasis marks dropped; else its name. */
export function titleOf(file: string): string {
  const text = readFileSync(file, 'utf8');
  const heading = /^# (.+)$/m.exec(text.replace(/^```[\s\S]*?^```/gm, ''));
  return heading ? heading[1]!.replace(/[`*_]/g, '').trim() : file.replace(/^.*\//, '').replace(/\.md$/, '');
}

/** The page's `order:` from its front matter, else Infinity. */
function orderOf(file: string): number {
  const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(file, 'utf8'));
  const order = front && /^order:\s*(-?\d+(?:\.\d+)?)\s*$/m.exec(front[1]!);
  return order ? Number(order[1]) : Number.POSITIVE_INFINITY;
}

/** The site path of a markdown file under `root`: README.md and index.md are their folder's page. */
export function linkOf(root: string, file: string): string {
  const path = relative(root, file).split('\\').join('/');
  return `/${path.replace(/(^|\/)(README|index)\.md$/, '$1').replace(/\.md$/, '')}`;
}

/** The page and sub-folder items of one folder, in order; its own README.md is left to the caller. */
export function itemsOf(root: string, dir: string): Item[] {
  const entries: { item: Item; order: number; name: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      const index = ['README.md', 'index.md'].map((n) => join(full, n)).find((f) => existsSync(f));
      const items = itemsOf(root, full);
      if (!index && items.length === 0) continue;
      const item: Item = { text: index ? titleOf(index) : name, items, collapsed: true };
      if (index) item.link = linkOf(root, index);
      entries.push({ item, order: index ? orderOf(index) : Number.POSITIVE_INFINITY, name });
    } else if (name.endsWith('.md') && name !== 'README.md' && name !== 'index.md') {
      entries.push({ item: { text: titleOf(full), link: linkOf(root, full) }, order: orderOf(full), name });
    }
  }
  return entries.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name)).map((e) => e.item);
}

/** One sidebar section per folder of docs/ that has pages, and the top-level pages under `Reference`. */
export function sidebarOf(root: string): Item[] {
  const section = (text: string, dir: string): Item[] => {
    const full = join(root, dir);
    if (!existsSync(full)) return [];
    const index = join(full, 'README.md');
    const items = itemsOf(root, full);
    return [{ text, ...(existsSync(index) ? { link: linkOf(root, index) } : {}), items }];
  };
  const top = readdirSync(root)
    .filter((n) => n.endsWith('.md') && n !== 'index.md' && n !== 'README.md')
    .sort()
    .map((n) => ({ text: titleOf(join(root, n)), link: linkOf(root, join(root, n)) }));
  return [
    ...section('Guides', 'guides'),
    { text: 'The service and its reference', items: top },
    ...section('Decisions', 'decisions'),
    { text: 'API reference', items: [{ text: 'Every package, from its TSDoc', link: '/api/', target: '_self' }] },
  ];
}

// The site's sidebar, read from docs/ at build time: a page's title is its first `# heading`, a
// folder's README.md is the folder's own page, and a guide added under docs/guides/ appears with no
// edit here. A folder's pages come in the order its README.md (or, without one, the nearest one
// above it) first links to them, as the reader of that index meets them; the rest after, by name.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { DefaultTheme } from 'vitepress';

type Item = DefaultTheme.SidebarItem;

/** The first `# heading` of a markdown file, its inline code and emphasis marks dropped; else its name. */
export function titleOf(file: string): string {
  const text = readFileSync(file, 'utf8');
  const heading = /^# (.+)$/m.exec(text.replace(/^```[\s\S]*?^```/gm, ''));
  return heading ? heading[1]!.replace(/[`*_]/g, '').trim() : file.replace(/^.*\//, '').replace(/\.md$/, '');
}

/** The files and folders the README.md (or index.md) in or nearest above `dir` links to, in its order (up to `root`). */
function indexOrder(root: string, dir: string): string[] {
  for (let at = dir; ; at = dirname(at)) {
    const readme = ['README.md', 'index.md'].map((n) => join(at, n)).find((f) => existsSync(f));
    if (readme) {
      const text = readFileSync(readme, 'utf8');
      return [...text.matchAll(/\]\(([^)#\s]+)/g)].map(([, href]) => resolve(at, decodeURI(href!)));
    }
    if (at === root || dirname(at) === at) return [];
  }
}

/** The site path of a markdown file under `root`: README.md and index.md are their folder's page. */
export function linkOf(root: string, file: string): string {
  const path = relative(root, file).split('\\').join('/');
  return `/${path.replace(/(^|\/)(README|index)\.md$/, '$1').replace(/\.md$/, '')}`;
}

/** The page and sub-folder items of one folder, in order; its own README.md is left to the caller. */
export function itemsOf(root: string, dir: string): Item[] {
  const order = indexOrder(root, dir);
  /** Where the index first links to this file or into this folder. */
  const rankOf = (full: string) => {
    const at = order.findIndex((target) => target === full || target.startsWith(full + sep));
    return at < 0 ? Number.POSITIVE_INFINITY : at;
  };
  const entries: { item: Item; order: number; name: string }[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      const index = ['README.md', 'index.md'].map((n) => join(full, n)).find((f) => existsSync(f));
      const items = itemsOf(root, full);
      if (!index && items.length === 0) continue;
      const item: Item = {
        text: index ? titleOf(index) : name[0]!.toUpperCase() + name.slice(1).replace(/-/g, ' '),
        items,
        collapsed: true,
      };
      if (index) item.link = linkOf(root, index);
      entries.push({ item, order: rankOf(full), name });
    } else if (name.endsWith('.md') && name !== 'README.md' && name !== 'index.md') {
      entries.push({ item: { text: titleOf(full), link: linkOf(root, full) }, order: rankOf(full), name });
    }
  }
  return entries.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name)).map((e) => e.item);
}

/** The guides, the pages at the top of docs/, the decisions, and the API reference (TypeDoc's, beside the site). */
export function sidebarOf(root: string): Item[] {
  const section = (text: string, dir: string): Item[] => {
    const full = join(root, dir);
    if (!existsSync(full)) return [];
    const index = join(full, 'README.md');
    const items = itemsOf(root, full);
    return [{ text, ...(existsSync(index) ? { link: linkOf(root, index) } : {}), items }];
  };
  const top = itemsOf(root, root).filter((item) => !item.items);
  return [
    ...section('Guides', 'guides'),
    { text: 'The service and its reference', items: top },
    ...section('Decisions', 'decisions'),
    { text: 'API reference', items: [{ text: 'Every package, from its TSDoc', link: '/api/', target: '_self' }] },
  ];
}

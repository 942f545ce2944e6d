// The docs site (issue 56): VitePress over docs/ as it stands, with offline search (minisearch,
// built into the site), the sidebar read from the folders (sidebar.mts) and docs/'s links made to
// work on the site (links.mts). `pnpm docs:build` builds it and adds TypeDoc's API reference at
// api/ (scripts/docs-build.mjs); scripts/docs-links.mjs checks every link and anchor of the result.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import { GITHUB, linksPlugin, slugify } from './links.mjs';
import { sidebarOf } from './sidebar.mjs';

const docs = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** Where the site is served: `/` locally, `/payhook/` on GitHub Pages (DOCS_BASE). */
const base = process.env.DOCS_BASE ?? '/';
/** Folders of docs/ that hold no pages: code the guides and tests include. */
const EXCLUDED = ['snippets'];

/** Every README.md under docs/ is its folder's index page, as on GitHub. */
function readmes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (name.startsWith('.') || name === 'node_modules' || EXCLUDED.includes(relative(docs, full))) continue;
    if (statSync(full).isDirectory()) Object.assign(out, readmes(full));
    else if (name === 'README.md' && !existsSync(join(dir, 'index.md'))) {
      const path = relative(docs, full).split('\\').join('/');
      out[path] = path.replace(/README\.md$/, 'index.md');
    }
  }
  return out;
}

const sidebar = sidebarOf(docs);
/** The guides' own page (guides/README.md), else their first page. */
const guides = sidebar.find((s) => s.text === 'Guides');
const firstGuide = guides?.link ?? guides?.items?.find((i) => i.link)?.link ?? '/';

export default defineConfig({
  title: 'payhook',
  description: 'Webhooks from ePay, verified, recorded once and handled in order, on the store and framework you run.',
  lang: 'en',
  base,
  outDir: process.env.DOCS_OUT ?? join(docs, '.vitepress/dist'),
  srcExclude: EXCLUDED.map((dir) => `${dir}/**`),
  rewrites: readmes(docs),
  lastUpdated: false,
  // VitePress checks every link between pages as it builds; the API reference is TypeDoc's,
  // checked with everything else by scripts/docs-links.mjs once it is in place.
  ignoreDeadLinks: [/^\/api(?:[/#?]|$)/],
  markdown: {
    anchor: { slugify },
    config: (md) => linksPlugin(docs, EXCLUDED, base)(md),
  },
  themeConfig: {
    search: { provider: 'local' },
    nav: [
      { text: 'Guides', link: firstGuide },
      { text: 'Decisions', link: '/decisions/' },
      { text: 'The service', link: '/service' },
      { text: 'API reference', link: '/api/', target: '_self' },
    ],
    sidebar,
    socialLinks: [{ icon: 'github', link: GITHUB }],
    outline: { level: [2, 3] },
  },
});

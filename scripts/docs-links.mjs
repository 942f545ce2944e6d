#!/usr/bin/env node
// Checks every internal link of the built docs site (issue 56): each href and src of every HTML
// file under the site's folder, the API reference's included, must name a file the build wrote, and
// each `#anchor` must be the id (or an <a>'s name) of an element in the page it points to. Parsed
// with parse5, as a browser would; nothing is fetched, so it runs offline. A link to this
// repository's own files on GitHub (what the site makes of a link that leaves docs/) must name a
// file or folder of the checkout, and its `#anchor` a heading of that markdown file; other origins
// are not followed. Prints each broken link with the page it is on and exits 1.
//
//   node scripts/docs-links.mjs [site folder, default docs/.vitepress/dist] [--base /payhook/]
//
// Why not linkinator (its --check-fragments): it checks a page's anchors only for the links found
// before it crawled that page, so `b.html#missing` met after b.html passes (7.6.1, tried).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'parse5';

/** Attributes that name a URL the page loads or links to, by element. */
const URL_ATTRS = {
  a: 'href',
  area: 'href',
  link: 'href',
  img: 'src',
  script: 'src',
  iframe: 'src',
  source: 'src',
  audio: 'src',
  video: 'src',
  embed: 'src',
};
const ORIGIN = 'http://site.invalid';
const GITHUB = /^https:\/\/github\.com\/payhook\/payhook\/(blob|tree)\/main\/([^?#]*)(?:\?[^#]*)?(?:#(.*))?$/;
const repo = fileURLToPath(new URL('..', import.meta.url));

/** GitHub's heading ids (github-slugger), as docs/.vitepress/links.mts gives the site's headings. */
const slugify = (text) =>
  text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');

/** The anchors GitHub gives a markdown file: its headings' ids (numbered when repeated) and its HTML ids and names. */
function markdownAnchors(file, cache) {
  let ids = cache.get(file);
  if (ids) return ids;
  ids = new Set();
  const seen = new Map();
  const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[\s\S]*?^\1/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const plain = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]|\b_+|_+\b/g, '');
    const slug = slugify(plain);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    ids.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const [, id] of text.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) ids.add(id);
  cache.set(file, ids);
  return ids;
}

/** What is wrong with a link to this repository's files on GitHub, or undefined. */
function githubProblem(href, cache) {
  const [, kind, path, fragment] = GITHUB.exec(href) ?? [];
  if (kind === undefined) return undefined;
  const file = join(repo, decodeURIComponent(path));
  if (!existsSync(file) || statSync(file).isDirectory() !== (kind === 'tree'))
    return `no such ${kind === 'tree' ? 'folder' : 'file'} in the repository`;
  if (fragment && file.endsWith('.md') && !markdownAnchors(file, cache).has(decodeURIComponent(fragment)))
    return `no heading "${decodeURIComponent(fragment)}" in ${relative(repo, file)}`;
  return undefined;
}

function htmlFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    return e.isDirectory() ? htmlFiles(full) : e.name.endsWith('.html') ? [full] : [];
  });
}

/** Every element of a parsed document, templates' contents included. */
function* elements(node) {
  for (const child of node.childNodes ?? []) {
    if (child.tagName) yield child;
    yield* elements(child);
    if (child.content) yield* elements(child.content);
  }
}

/** A page's anchors (ids, and <a name>) and the URLs it names, read once. */
function readPage(file, cache) {
  let page = cache.get(file);
  if (page) return page;
  page = { ids: new Set(), urls: [] };
  for (const el of elements(parse(readFileSync(file, 'utf8')))) {
    for (const { name, value } of el.attrs) {
      if (name === 'id' || (name === 'name' && el.tagName === 'a')) page.ids.add(value);
      if (name === URL_ATTRS[el.tagName]) page.urls.push(value);
    }
  }
  cache.set(file, page);
  return page;
}

/** The file a site path names: itself, its .html, or its folder's index.html. */
function fileFor(site, path) {
  const candidates = path === '' || path.endsWith('/') ? [`${path}index.html`] : [path, `${path}.html`, `${path}/index.html`];
  for (const candidate of candidates) {
    const file = join(site, candidate);
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

/** Every broken internal link and anchor of the site at `site`, served under `base`, as lines to print. */
export function checkSite(site, base = '/') {
  const cache = new Map();
  const broken = new Set();
  const files = htmlFiles(site);
  if (files.length === 0) return [`${site}: no HTML files (is the site built?)`];
  for (const file of files) {
    const at = `${base}${relative(site, file).split(sep).join('/')}`;
    for (const href of readPage(file, cache).urls) {
      const url = URL.canParse(href, ORIGIN + at) ? new URL(href, ORIGIN + at) : undefined;
      const where = `${relative(site, file)}: ${href}`;
      if (url === undefined) {
        broken.add(`${where} (not a URL)`);
        continue;
      }
      if (url.origin !== ORIGIN) {
        const problem = githubProblem(href, cache);
        if (problem) broken.add(`${where} (${problem})`);
        continue;
      }
      if (!url.pathname.startsWith(base)) {
        broken.add(`${where} (outside the site's base ${base})`);
        continue;
      }
      const target = fileFor(site, decodeURIComponent(url.pathname.slice(base.length)));
      if (target === undefined) {
        broken.add(`${where} (no such file)`);
        continue;
      }
      const fragment = decodeURIComponent(url.hash.slice(1));
      if (fragment !== '' && extname(target) === '.html' && !readPage(target, cache).ids.has(fragment))
        broken.add(`${where} (no id "${fragment}" in ${relative(site, target)})`);
    }
  }
  return [...broken].sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const baseAt = args.indexOf('--base');
  const base = baseAt >= 0 ? args.splice(baseAt, 2)[1] : '/';
  const site = args[0] ?? fileURLToPath(new URL('../docs/.vitepress/dist', import.meta.url));
  const broken = checkSite(site, base.endsWith('/') ? base : `${base}/`);
  if (broken.length > 0) {
    const shown = broken.slice(0, 200).join('\n  ') + (broken.length > 200 ? `\n  … and ${broken.length - 200} more` : '');
    console.error(`[payhook] ${broken.length} broken links in the docs site (scripts/docs-links.mjs):\n  ${shown}`);
    process.exit(1);
  }
  console.log(`docs site: every internal link and anchor of ${htmlFiles(site).length} pages resolves`);
}

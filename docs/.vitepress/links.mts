// How docs/ reads on the site as it reads on GitHub: headings get GitHub's ids, so the `#anchors`
// written for GitHub hold; a README.md is its folder's page; a relative link that leaves docs/ (the
// README, a package's source, a test) or names a file that is no page (a snippet, an image) becomes
// a link to that file on GitHub; a link into the API reference (/api/, TypeDoc's pages, not
// VitePress's; written as the published site's URL, so that it works on GitHub too) is loaded by
// the browser, not by the site's router.
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { MarkdownRenderer } from 'vitepress';

export const GITHUB = 'https://github.com/payhook/payhook';
/** The published site: a link to its API pages, written so that it works on GitHub too, stays on the built site. */
export const SITE = 'https://payhook.github.io/payhook/';

/** GitHub's heading ids (github-slugger): lower case, punctuation dropped, each space a hyphen. */
export function slugify(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const EXTERNAL = /^(?:[a-z][a-z\d+.-]*:|\/\/)/i;

/**
 * The href a relative link in `from` (a markdown file's path) should have on the site, or
 * undefined to leave it to VitePress: a page inside `docs` stays internal (a README.md named as its
 * folder's index.md), and anything else that exists goes to GitHub, `tree/` for a folder.
 */
export function siteHref(href: string, from: string, docsDir: string, excluded: string[]): string | undefined {
  const docs = resolve(docsDir);
  if (href.startsWith(`${SITE}api/`)) return `/${href.slice(SITE.length)}`;
  if (href === '' || href.startsWith('#') || href.startsWith('/') || EXTERNAL.test(href)) return undefined;
  const [, path = '', rest = ''] = /^([^?#]*)(.*)$/.exec(href)!;
  const target = resolve(dirname(from), decodeURI(path));
  const repo = dirname(docs);
  const inside = (dir: string) => target === dir || target.startsWith(dir + sep);
  const page = inside(docs) && !excluded.some((dir) => inside(join(docs, dir)));
  if (page && inside(join(docs, 'api'))) return `/${relative(docs, target).split(sep).join('/')}${path.endsWith('/') ? '/' : ''}${rest}`;
  if (page) {
    if (target.endsWith(`${sep}README.md`)) return `${path.replace(/README\.md$/, 'index.md')}${rest}`;
    if (target.endsWith('.md')) return undefined;
    if (existsSync(target) && statSync(target).isDirectory()) {
      if (existsSync(join(target, 'README.md')) || existsSync(join(target, 'index.md')))
        return `${path.replace(/\/?$/, '/')}index.md${rest}`;
    }
  }
  if (!existsSync(target) || !inside(repo)) return undefined;
  const kind = statSync(target).isDirectory() ? 'tree' : 'blob';
  return `${GITHUB}/${kind}/main/${relative(repo, target).split(sep).join('/')}${rest}`;
}

/** Rewrites the links of every page as siteHref says, before VitePress's own link rule runs. */
export function linksPlugin(docs: string, excluded: string[], base: string) {
  return (md: MarkdownRenderer) => {
    const next = md.renderer.rules.link_open!;
    md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
      const token = tokens[idx]!;
      const href = token.attrGet('href');
      const from: string | undefined = env.realPath ?? env.path;
      if (href !== null && from) {
        const rewritten = siteHref(href, from, docs, excluded) ?? href;
        if (/^\/api(?:[/#?]|$)/.test(rewritten)) {
          // TypeDoc's pages are plain HTML beside the site: the router must not load them.
          token.attrSet('href', `${base.replace(/\/$/, '')}${rewritten}`);
          token.attrSet('target', '_self');
        } else if (rewritten !== href) token.attrSet('href', rewritten);
      }
      return next(tokens, idx, options, env, self);
    };
  };
}

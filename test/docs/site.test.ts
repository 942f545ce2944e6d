// The docs site (issue 56) as CI builds it: `pnpm docs:build` into a temporary folder (VitePress
// over docs/, TypeDoc's API reference at api/), every internal link and anchor of the result checked
// (scripts/docs-links.mjs, shown to fail on a planted break), and the built site's offline search
// used in headless Chromium as a reader would: search "signature", follow a result.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, runBrowserTests } from '@payhook/test-support/browser';
import { serveSite } from './serve.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'payhook-docs-'));
const site = join(work, 'site');

/** A script of scripts/ on Node, its exit code and output (stdout and stderr together). */
async function script(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(root, 'scripts', name), ...args], {
      cwd: root,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('the docs site', () => {
  beforeAll(async () => {
    // As CI builds it, served at `/` (DOCS_BASE is Pages' business).
    const { DOCS_BASE: _, DOCS_OUT: __, ...env } = process.env;
    const started = Date.now();
    const build = await script('docs-build.mjs', [site], env);
    if (build.code !== 0) throw new Error(`pnpm docs:build failed (exit ${build.code}):\n${build.output.slice(-6000)}`);
    console.log(`[docs] pnpm docs:build took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 300_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('builds every page of docs/, README.md as its folder’s page, and the API reference', () => {
    for (const page of ['index.html', '404.html', 'service.html', 'decisions/index.html', 'guides/index.html', 'api/index.html'])
      expect(existsSync(join(site, page)), page).toBe(true);
    // A guide's link to the published API reference stays on the built site, under its base.
    expect(readFileSync(join(site, 'index.html'), 'utf8')).toMatch(/href="\/api\/"[^>]*target="_self"|target="_self"[^>]*href="\/api\/"/);
    // A link that leaves docs/ goes to the file on GitHub; one between pages stays on the site.
    const decisions = readFileSync(join(site, 'decisions/index.html'), 'utf8');
    expect(decisions).toContain('href="./receiver.html#signatures"');
    expect(decisions).not.toContain('blob/main/docs/');
  });

  it('has no broken internal link or anchor, the API reference’s included', async () => {
    const check = await script('docs-links.mjs', [site]);
    expect(check.output).toMatch(/every internal link and anchor of \d+ pages resolves/);
    expect(check.code).toBe(0);
  });

  it('the link check fails on a missing page and on a missing anchor, in a guide, in the API reference or on GitHub', async () => {
    const broken = join(work, 'broken');
    cpSync(site, broken, { recursive: true });
    const plant = (page: string, html: string) => {
      const file = join(broken, page);
      writeFileSync(file, readFileSync(file, 'utf8').replace('</body>', `${html}</body>`));
    };
    const readme = 'https://github.com/payhook/payhook/blob/main/README.md#no-such-section';
    plant(
      'index.html',
      `<a href="/guides/no-such-guide.html">gone</a><a href="./service.html#no-such-heading">moved</a><a href="${readme}">out</a>`,
    );
    // service.html is checked before index.html links into it: the anchor is still checked.
    plant('decisions/receiver.html', '<a href="../service.html#nor-this-one">moved</a>');
    plant('api/index.html', '<a href="../decisions/index.html#no-such-decision">gone</a><a href="missing.html">gone</a>');
    const check = await script('docs-links.mjs', [broken]);
    expect(check.code).toBe(1);
    expect(check.output).toContain('index.html: /guides/no-such-guide.html (no such file)');
    expect(check.output).toContain('index.html: ./service.html#no-such-heading (no id "no-such-heading" in service.html)');
    expect(check.output).toContain('decisions/receiver.html: ../service.html#nor-this-one (no id "nor-this-one" in service.html)');
    // A link that left docs/ for the file on GitHub: its anchor is checked against the checkout's markdown.
    expect(check.output).toContain(`index.html: ${readme} (no heading "no-such-section" in README.md)`);
    expect(check.output).toContain('api/index.html: ../decisions/index.html#no-such-decision (no id "no-such-decision"');
    expect(check.output).toContain('api/index.html: missing.html (no such file)');
    expect(check.output.match(/^ {2}\S/gm)).toHaveLength(6);
  });

  it.skipIf(!runBrowserTests)(
    'searches offline for "signature" in Chromium and follows a result to its page',
    async () => {
      const server = await serveSite(site);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const elsewhere: string[] = [];
        page.on('request', (r) => {
          if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) elsewhere.push(r.url());
        });
        await page.goto(`${server.url}/`);
        await page.click('#local-search button');
        await page.fill('#localsearch-input', 'signature');
        const result = page.locator('.VPLocalSearchBox .results a.result').first();
        await result.waitFor({ timeout: 15_000 });
        const href = (await result.getAttribute('href'))!;
        expect(await result.textContent()).toMatch(/signature/i);
        await result.click();
        const target = new URL(href, server.url).pathname;
        await page.waitForURL((url) => url.pathname === target, { timeout: 15_000 });
        expect(target).not.toBe('/');
        await expect.poll(() => page.textContent('.vp-doc'), { timeout: 10_000 }).toMatch(/signature/i);
        // Offline: the page, its search index and its fonts all came from the site itself.
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
        await server.close();
      }
    },
    60_000,
  );
});

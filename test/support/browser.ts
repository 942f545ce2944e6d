// Debian's Chromium for the browser tests, driven by playwright-core: one place for where it is,
// when its absence skips or fails, and the flags it needs on this machine's closed network.
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { warnSkipped } from './run/skipped.js';

export const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
/** Without chromium the browser tests are skipped, except when services are required: then they fail. */
export const runBrowserTests = present || process.env.PAYHOOK_REQUIRE_SERVICES === '1';
if (!runBrowserTests)
  warnSkipped(
    'Chromium',
    'the browser tests',
    `${CHROMIUM} is missing: scripts/prepare-machine.sh installs it as root, or apt-get install -y chromium.`,
  );

/** Headless Chromium; `args` are added to the flags every test needs (no background networking: its connections are refused here). */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  if (!present)
    throw new Error(`[@payhook/reference] ${CHROMIUM} is missing: install it with apt-get update && apt-get install -y chromium.`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
}

// One way a suite says it skips because a service is missing, so that the run's last lines can
// count it (test/support/run/skipped-reporter.ts reads these lines) instead of a green line hiding it.

/** What a suite may find missing. */
export type Service = 'Redis' | 'PostgreSQL' | 'Chromium';

/** The line's shape: `!! SKIPPING <what> (<service> unavailable): <why and what to do>`. */
export const SKIP_LINE = /^!! SKIPPING (.+?) \((Redis|PostgreSQL|Chromium) unavailable\): (.*)$/m;

/** Say, loudly, that `what` skips for want of `service`; `message` says why and how to bring it up. */
export function warnSkipped(service: Service, what: string, message: string): void {
  const bar = '!'.repeat(78);
  console.warn(
    `\n${bar}\n!! SKIPPING ${what} (${service} unavailable): ${message}\n!! Set PAYHOOK_REQUIRE_SERVICES=1 to make this a failure.\n${bar}\n`,
  );
}

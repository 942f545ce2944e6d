import { errorIs, said, Skip, unknownReference, type Check } from './contract.js';
import type { Diff } from './shapes.js';
import { retryAfterSeconds, type Answer } from './wire.js';

/** Interface section 8: 100 requests per 60-second window per key. */
const LIMIT = 100;
const WINDOW_S = 60;
/** The probe stops here if no 429 came (the run's own earlier requests count too). */
const MAX_PROBES = LIMIT + 50;

/** The count headers some services send (`X-RateLimit-Limit`, `RateLimit-Remaining`…): non-negative integers when present. */
const COUNT_HEADER = /^(?:x-)?ratelimit-(?:limit|remaining|reset)$/i;

/** A 429 as the interface says (section 7): the error envelope and a standard Retry-After. */
function tooManyDiffs(a: Answer): Diff[] {
  const diffs = errorIs(a, 429);
  const value = a.headers.get('retry-after');
  const seconds = retryAfterSeconds(value);
  if (seconds === null) diffs.push({ at: 'header Retry-After', expected: 'delta-seconds or an HTTP date', got: value ?? 'absent' });
  else if (seconds > WINDOW_S) diffs.push({ at: 'header Retry-After', expected: `at most ${WINDOW_S} s (the window)`, got: value! });
  return diffs;
}

export const RATE_CHECKS: Check[] = [
  {
    name: 'rate limit: headers on every answer so far',
    async run({ wire }) {
      const diffs: Diff[] = [];
      const names = new Set<string>();
      for (const a of wire.answers) {
        for (const [name, value] of a.headers) {
          if (!/ratelimit/i.test(name)) continue;
          names.add(name);
          if (COUNT_HEADER.test(name) && !/^\d+$/.test(value.trim()) && diffs.length < 5) {
            diffs.push({ at: `${a.request} header ${name}`, expected: 'a non-negative integer', got: JSON.stringify(value) });
          }
        }
      }
      const limited = wire.answers.filter((a) => a.status === 429);
      for (const a of limited.slice(0, 3)) diffs.push(...tooManyDiffs(a).map((d) => ({ ...d, at: `${a.request} ${d.at}` })));
      const sent = names.size > 0 ? [...names].join(', ') : 'no RateLimit headers (the interface names none but Retry-After)';
      return { detail: `${wire.answers.length} answers: ${sent}; ${limited.length} were 429`, diffs };
    },
  },
  {
    name: `rate limit: over ${LIMIT} requests in ${WINDOW_S} s → 429 with Retry-After`,
    async run({ wire, rateLimit }) {
      if (!rateLimit)
        throw new Skip(
          `pass --rate-limit to spend the key's ${LIMIT} requests per ${WINDOW_S} s and check the 429 (the key then waits up to a minute)`,
        );
      const path = `/v1/transactions/${unknownReference()}`;
      for (let n = 1; n <= MAX_PROBES; n++) {
        const a = await wire.send('GET', path, { keep429: true });
        if (a.status === 429)
          return {
            detail: `429 after ${n} more requests, Retry-After: ${a.headers.get('retry-after') ?? 'absent'}; ${said(a)}`,
            diffs: tooManyDiffs(a),
          };
      }
      return {
        detail: `${MAX_PROBES} requests, none 429`,
        diffs: [
          { at: 'HTTP status', expected: `429 once over ${LIMIT} requests in ${WINDOW_S} s`, got: `no 429 in ${MAX_PROBES} requests` },
        ],
      };
    },
  },
];

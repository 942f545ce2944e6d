import { MAX_BODY } from '@payhook/test-support/hostile-bodies';
import { expect } from 'vitest';
import type { Case } from './cases.js';

/**
 * The receiver fuzz's oracle (test/security/fuzz/): whatever arrives, no crash, no 5xx except the
 * documented 500 of a handler that threw, no handler run without a valid signature over the exact
 * bytes, and Object.prototype untouched.
 */

/** What came back: no status when the connection closed without an answer. */
export interface Answer {
  status: number | null;
  text: string;
}

const ALLOWED = new Set([200, 202, 400, 401, 405, 409, 413]);

/** Check one answer against the rules; `via` names the adapter for the failure message. */
export function check(via: string, c: Case, answer: Answer, ran: number, thrown: number, socket = false, maxBody = MAX_BODY): void {
  const where = `${via}: ${c.method} ${c.headers.map(([n, v]) => `${n}: ${v.slice(0, 24)}`).join(' | ')} body ${c.body.length} B ${JSON.stringify(c.body.subarray(0, 60).toString('latin1'))}`;
  // Over a socket, a lying Content-Length or an oversized upload may end in a closed connection instead of an answer.
  if (answer.status === null) {
    if (socket && (c.lie !== 'none' || c.body.length > maxBody)) {
      expect(ran, `${where}: a handler ran for a delivery that got no answer`).toBe(0);
      return;
    }
    throw new Error(`${where}: no answer`);
  }
  if (answer.status === 500) {
    expect([answer.text, thrown], `${where}: a 500 that is not a handler error`).toEqual(['{"outcome":"failed"}', 1]);
  } else if (!(socket && answer.status === 400 && c.lie !== 'none')) {
    expect(ALLOWED.has(answer.status), `${where}: answered ${answer.status} ${answer.text}`).toBe(true);
  }
  if (ran > 0)
    expect(c.validSignature && c.method.toUpperCase() === 'POST', `${where}: a handler ran without a valid signature`).toBe(true);
  expect(ran, `${where}: more than one handler run for one delivery`).toBeLessThanOrEqual(1);
  if (c.lie !== 'none' && socket) return;
  // Fastify checks its bodyLimit before the route runs: an oversized body gets 413 whatever the method.
  if (c.method.toUpperCase() !== 'POST')
    return void expect(c.body.length > maxBody && via.startsWith('fastify') ? [405, 413] : [405], where).toContain(answer.status);
  if (c.body.length > maxBody) return void expect(answer.status, where).toBe(413);
  if (!c.validSignature) return void expect(answer.status, where).toBe(401);
  if (c.pollutes || c.badUtf8) expect(answer.status, where).toBe(400);
}

/** Object.prototype's own names and whether `{}` inherits a `polluted`: each test file compares it after its cases. */
export function prototypeSnapshot(): [string, unknown] {
  return [Object.getOwnPropertyNames(Object.prototype).sort().join(','), ({} as { polluted?: unknown }).polluted];
}

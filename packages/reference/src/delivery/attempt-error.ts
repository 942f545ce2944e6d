/**
 * How a webhook delivery attempt went, as far as its error wording needs: the receiver answered
 * with a status, no answer came in time, the connection failed, the callback address was refused
 * before connecting, or a sandbox `fail` fault failed it without sending.
 */
export type AttemptOutcome =
  | { kind: 'answered'; status: number }
  | { kind: 'timeout'; ms: number }
  | { kind: 'connection-error'; error: unknown }
  | { kind: 'refused'; problem: string }
  | { kind: 'injected'; faultId: string };

/**
 * The `error` recorded for a delivery attempt: why it failed, in the words the reference service's
 * deliveries and `@payhook/testing`'s `deliver` reports both use; null for a 2xx answer.
 *
 * @example
 * attemptError({ kind: 'answered', status: 500 }); // 'answered 500, not 2xx'
 * attemptError({ kind: 'answered', status: 307 }); // 'redirect 307 not followed'
 * attemptError({ kind: 'timeout', ms: 10_000 }); // 'timed out: no answer within 10 s'
 * attemptError({ kind: 'answered', status: 200 }); // null
 */
export function attemptError(outcome: AttemptOutcome): string | null {
  switch (outcome.kind) {
    case 'answered': {
      const { status } = outcome;
      if (status >= 200 && status <= 299) return null;
      return status >= 300 && status < 400 ? `redirect ${status} not followed` : `answered ${status}, not 2xx`;
    }
    case 'timeout':
      return `timed out: no answer within ${duration(outcome.ms)}`;
    case 'connection-error':
      return `connection error: ${connectionProblem(outcome.error)}`;
    case 'refused':
      return `refused: ${outcome.problem}`;
    case 'injected':
      return `injected failure (sandbox fault ${outcome.faultId})`;
  }
}

/** Whole seconds as `10 s`, anything else in milliseconds (`50 ms`). */
const duration = (ms: number): string => (ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`);

/** The most telling part of a connection failure: the system's code (ECONNREFUSED), else the message. */
function connectionProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code) return code;
  const cause = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

import { publishReport, timersOutliveRequests } from '#platform';
import { createDeadlines, ownTimers } from './deadlines.js';
import { createRouter } from './event-router.js';
import type { resolveRunOptions } from './options.js';
import type { RunSettings } from './pipeline/claim-and-run.js';
import { createLoopWatch } from './pipeline/loop-watch.js';
import type { ErrorHandler } from './pipeline/outcome.js';
import { createReporter } from './pipeline/report.js';
import { storeOps } from './store.js';

export interface RunCoreOptions extends ReturnType<typeof resolveRunOptions> {
  afterBudget: RunSettings['afterBudget'];
  onInProgress: RunSettings['onInProgress'];
  /** For the fix a refused signature's log names; a worker has none to refuse. */
  signatureHeader: string;
  mode: string | undefined;
}

/**
 * What a receiver and a queue worker build alike from their options: the typed router (timed by
 * the loop watch), the reporter and its `onError` handlers, and the settings of claim-and-run.
 */
export function createRunCore(o: RunCoreOptions) {
  const watch = createLoopWatch(o.clock, (message, blocked) => o.log.write('warn', blocked, message));
  const { router, planFor, run } = createRouter(watch);
  const errorHandlers: ErrorHandler[] = [];
  const report = createReporter({ ...o, errorHandlers, publish: publishReport });
  const doneRecord = { ok: { outcome: 'ok', ttlMs: o.retentionMs }, failed: { outcome: 'failed', ttlMs: o.retentionMs } } as const;
  const deadlines = (timersOutliveRequests ? createDeadlines : ownTimers)(o.clock);
  const settings: RunSettings = { ...o, ops: storeOps(o.store), planFor, run, deadlines, report, doneRecord, doneOutcome: 'processed' };
  return { watch, router, errorHandlers, report, settings };
}

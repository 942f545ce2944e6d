import { every, systemClock } from '../base/clock.js';
import { toLog } from '../base/logger.js';
import type { Reconciler, ReconcilerOptions, ReconcileRun } from './reconcile-types.js';

export type { ReconcileClient, Reconciler, ReconcilerOptions, ReconcileRun } from './reconcile-types.js';

/**
 * Recover what the webhooks missed: walk the service's list and dispatch, through the same
 * receiver and store, every event whose handlers have not run to the end. Each still runs once,
 * whether its webhook arrives later or never. The run's code is loaded at the first run
 * (./reconcile-run.ts, issue 54); the options are checked here, at once.
 *
 * @example
 * const background = createClient({ apiKey, baseUrl, limiter, priority: 'background' });
 * const reconciler = createReconciler({ client: background, receiver });
 * const stop = reconciler.start({ everyMs: 5 * 60_000 });
 */
export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { clock = systemClock } = options;
  const log = toLog(options.logger);
  let loaded: Promise<(range: { from: Date | string; to: Date | string }) => Promise<ReconcileRun>> | undefined;
  const run = async (range: { from: Date | string; to: Date | string }): Promise<ReconcileRun> => {
    loaded ??= import('./reconcile-run.js').then((m) => m.reconcileRun(options, log));
    return (await loaded)(range);
  };

  return {
    run,
    start({ everyMs, lookbackMs = 24 * 60 * 60 * 1000, onRun }) {
      let running = false;
      const tick = async () => {
        if (running) return;
        running = true;
        try {
          const to = new Date(clock.now());
          // Not `onRun?.(await run(…))`: an optional call skips its arguments, and the run with them.
          const result = await run({ from: new Date(to.getTime() - lookbackMs), to });
          onRun?.(result);
        } catch (error) {
          log.write('error', { err: error }, '[@payhook/core] a reconcile run failed; the next one will try again');
        } finally {
          running = false;
        }
      };
      const stop = every(clock, everyMs, () => void tick());
      void tick();
      return stop;
    },
  };
}

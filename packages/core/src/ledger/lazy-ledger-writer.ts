import type { Log } from '../base/logger.js';
import type { Ledger } from '../storage/ledger.js';
import type { LedgerWriter } from './ledger-writer.js';

/** A call made before the writer was loaded, with the time it was made at. */
interface Waiting {
  at: number;
  call: (writer: LedgerWriter) => void;
}

/**
 * The ledger writer, loaded the first time a delivery is recorded (issue 54: a receiver whose
 * store keeps no ledger never loads it). Until it is loaded, each call waits in order with the
 * time it was made at; once loaded, they are handed over in that order, the writer's clock
 * reading each one's own time, so the records, the minute's share of refusals and the dead
 * letters' times are what they would have been had it been there from the start. `idle` waits
 * for the load and then for every write.
 */
export function lazyLedgerWriter(ledger: Ledger, log: Log, now: () => number): LedgerWriter {
  let writer: LedgerWriter | undefined;
  let loading: Promise<void> | undefined;
  let waiting: Waiting[] = [];
  // The time of the call being handed over; the writer's clock otherwise.
  let at: number | undefined;
  const load = () =>
    (loading ??= import('./ledger-writer.js').then(
      ({ createLedgerWriter }) => {
        const loaded = createLedgerWriter(ledger, log, () => at ?? now());
        for (const w of waiting) {
          at = w.at;
          try {
            w.call(loaded);
          } finally {
            at = undefined;
          }
        }
        waiting = [];
        writer = loaded;
      },
      (error: unknown) => {
        log.write(
          'error',
          { err: error, records: waiting.length },
          `[@payhook/core] the ledger writer could not be loaded, so ${waiting.length} deliveries are missing from the ledger (they were answered as usual). Check that @payhook/core's dist/ files are all deployed.`,
        );
        waiting = [];
        loading = undefined;
      },
    ));
  const later = (call: Waiting['call']) => {
    waiting.push({ at: now(), call });
    void load();
  };
  return {
    answered(trace, r) {
      if (writer) writer.answered(trace, r);
      else later((w) => w.answered(trace, r));
    },
    late(r) {
      if (writer) writer.late(r);
      else later((w) => w.late(r));
    },
    idle: () => (writer ? writer.idle() : loading ? loading.then(() => writer?.idle()) : Promise.resolve()),
  };
}

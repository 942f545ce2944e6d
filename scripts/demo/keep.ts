// The end of `pnpm demo`: without --keep, a hint; with --keep, what to open and what to run against
// the servers that stay up, and a clean stop on Ctrl-C (SIGINT) or SIGTERM: exit code 0, so pnpm
// reports no failure. The root package.json runs this as `exec node --import tsx scripts/demo.ts`:
// `exec`, because sh (dash) would die of the terminal's SIGINT itself and pnpm would report that;
// `node --import tsx`, not the tsx command, whose signal relay can turn a clean exit into 130.

/** How the README runs the demo: npx fetches the pinned pnpm. */
const KEEP_COMMAND = 'npx -y pnpm@10.34.8 demo --keep';

export interface Kept {
  serviceUrl: string;
  shopUrl: string;
  apiKey: string;
  webhookSecret: string;
  /** The shop's board at /admin/payments, user `admin`. */
  boardPassword: string;
  /** How far the story moved the service's clock ahead of the wall clock (step 3's retries). */
  aheadMs: number;
  /** Close both servers and the shop. */
  stop(): Promise<void>;
}

export function keepHint(say: (text?: string) => void) {
  say(`\nTo look around afterwards, run \`${KEEP_COMMAND}\` (\`pnpm demo --keep\` with pnpm installed):`);
  say('both servers then stay up, with the dashboard of every transaction, its timeline and every delivery attempt.');
}

/** Shell-quote for the copy-pasteable commands (POSIX sh). */
const q = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

export function keepServing(kept: Kept, say: (text?: string) => void) {
  const { serviceUrl, shopUrl, apiKey, webhookSecret } = kept;
  const order = { amount: '250.00', currencyCode: 'ETB', customerPhone: '0911234567', merchantReference: 'order-2001' };
  say('\nBoth servers stay up (--keep):');
  say(`   service         ${serviceUrl}`);
  say(`   dashboard       ${serviceUrl}/_dashboard`);
  say(`   shop            ${shopUrl}`);
  say(`   board           ${shopUrl}/admin/payments   (user admin, password ${kept.boardPassword}: every delivery, replay, dead letters)`);
  say(`   API key         ${apiKey}   (sandbox, the demo's own)`);
  say(`   webhook secret  ${webhookSecret}`);
  say('\nStart another checkout (a new merchantReference for each order); the answer has a checkoutUrl to open in a browser and pay:');
  say(`   curl -X POST ${shopUrl}/checkout -H 'content-type: application/json' -d ${q(JSON.stringify(order))}`);
  say("Or pay it without a browser, with the answer's reference:");
  say(`   curl -X POST ${serviceUrl}/_sandbox/transactions/<reference>/pay -H 'authorization: Bearer ${apiKey}'`);
  say('Then the order, with the events its handlers ran for:');
  say(`   curl ${shopUrl}/orders/${order.merchantReference}`);
  say(
    `\nThe service's clock runs on real time from here (${Math.round(kept.aheadMs / 60_000)} minutes ahead of yours, after step 3's retries): ` +
      'each webhook is delivered as its payment moves and shown below; a failed delivery is retried at intervals of 1, 2, 4 and 8 minutes.',
  );
  let stopping = false;
  const stop = async () => {
    // The terminal sends SIGINT to the whole process group and pnpm relays it once more: one stop.
    if (stopping) return;
    stopping = true;
    let code = 0;
    try {
      await kept.stop();
      say(process.stdout.isTTY ? '\nstopped.' : 'stopped.');
    } catch (error) {
      console.error('[payhook demo] could not stop cleanly:', error);
      code = 1;
    }
    // process.exit, not an emptied event loop: on a natural exit Node closes its signal handlers
    // first, and a relayed SIGINT arriving then would kill the process, which pnpm reports as a failure.
    process.exit(code);
  };
  // `on`, not `once`: a second SIGINT while stopping must not end the process with the default action.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  // Printed once the handlers are in place, so a Ctrl-C the moment it shows finds them.
  say('Press Ctrl-C to stop.\n');
}

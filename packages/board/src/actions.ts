import { eraseDeliveries, retryDeadLetters } from '@payhook/core';
import { writeAudit, type BoardAuditRecord } from './base/options.js';
import { html } from '@payhook/core/api';
import { link, noSuchDelivery, page, problem, who, type View } from './views/page.js';
import { accountLedger } from '@payhook/core/store';
import { isAccountName } from './base/scope.js';
import { tallyOf } from './views/retried.js';
import { deliverySubject, paymentSubject } from './views/subject.js';

/** The actions, each confirmed on a page of its own before its post does anything. */
export const ACTIONS = {
  replay: {
    needs: 'id',
    verb: 'Replay',
    what: 'Run this delivery again through the receiver. A done event answers duplicate and runs nothing.',
  },
  force: {
    needs: 'id',
    verb: 'Force replay',
    what: "Run this event's handlers again even though it is done, under a key of the replay's own. It is recorded as forced.",
  },
  retry: {
    needs: 'id',
    verb: 'Retry',
    what: 'Retry this dead letter: replayed, forced only when its event was rejected. It closes when the replay settles.',
  },
  'retry-all': { needs: 'nothing', verb: 'Retry all', what: 'Retry every open dead letter, oldest first, as a single retry does.' },
  erase: {
    needs: 'reference',
    verb: 'Erase',
    what: 'Delete every ledger record of this payment, open dead letters too. This cannot be undone.',
  },
  'erase-customer': {
    needs: 'customer',
    verb: 'Erase',
    what: 'Delete every ledger record whose kept body names this customer (email, case aside; or phone, digits only), open dead letters too. Reads the whole ledger. This cannot be undone.',
  },
} as const;
export type Action = keyof typeof ACTIONS;
export const isAction = (name: string): name is Action => Object.hasOwn(ACTIONS, name);

/**
 * The account an action is held to: the viewer's own; in the platform view the one the page
 * named (a filter, or the record's account on its erase link), or none for every account. `null`
 * when the platform's page named one that is no account's name.
 */
function actingAccount(view: View, params: URLSearchParams): string | undefined | null {
  if (view.viewer.account !== undefined || !view.platform) return view.viewer.account;
  const named = params.get('account') ?? '';
  return named === '' ? undefined : isAccountName(named) ? named : null;
}

/** How a confirmation names the accounts an action reaches, on a board with accounts. */
const reach = (view: View, account: string | undefined) =>
  !view.settings.accounts ? '' : account === undefined ? ' in every account' : html` of account <code>${account}</code>`;

/** The confirmation: what the action will do, and the one form that does it. */
export async function confirmView(view: View, action: Action): Promise<Response> {
  const a = ACTIONS[action];
  const params = view.url.searchParams;
  const id = params.get('id') ?? '';
  const reference = params.get('reference') ?? '';
  const email = (params.get('email') ?? '').trim();
  const phone = email === '' ? (params.get('phone') ?? '').trim() : '';
  const missing = { id: id === '', reference: reference === '', customer: email === '' && phone === '', nothing: false }[a.needs];
  if (missing) {
    const what = { id: 'a delivery', reference: 'a reference', customer: 'an email or a phone', nothing: '' }[a.needs];
    return problem(view, 400, 'Nothing to act on', `${a.verb} needs ${what}: start from the board's pages.`);
  }
  // A delivery this viewer cannot see (another account's) is confirmed as one that never was.
  const entry = a.needs === 'id' ? await view.ledger.get(id) : undefined;
  if (a.needs === 'id' && entry === undefined) return noSuchDelivery(view, id);
  const account = actingAccount(view, params);
  if (account === null) return notAnAccount(view);
  // The payment is named (reference, order id, amount), not only the ledger's id.
  const subject = entry && deliverySubject(entry);
  const target = subject
    ? subject.target
    : a.needs === 'reference'
      ? await paymentSubject(view, reference, account, reach(view, account))
      : a.needs === 'customer'
        ? html`customer <code class="value">${email || phone}</code>${reach(view, account)}`
        : html`every open dead letter${reach(view, account)}`;
  const back =
    a.needs === 'id'
      ? link(view, `/deliveries/${encodeURIComponent(id)}`)
      : link(view, '/', a.needs === 'nothing' ? { dead: 'open', account: view.platform ? account : undefined } : { reference });
  // The platform's form says which account it is held to; an account's viewer is held to theirs whatever a form says.
  const held = view.platform && a.needs !== 'id' ? account : undefined;
  const body = html`<h2>${a.verb}: ${target}?</h2>${subject?.facts}<p>${a.what}</p>
<form method="post" action="${link(view, `/actions/${action}`)}" class="actions">
<input type="hidden" name="csrf" value="${view.token}">${id && html`<input type="hidden" name="id" value="${id}">`}${reference && html`<input type="hidden" name="reference" value="${reference}">`}${email && html`<input type="hidden" name="email" value="${email}">`}${phone && html`<input type="hidden" name="phone" value="${phone}">`}${held && html`<input type="hidden" name="account" value="${held}">`}
<button type="submit"${action !== 'replay' && action !== 'retry' && action !== 'retry-all' ? html` class="danger"` : html` class="primary"`}>${a.verb}</button> <a href="${back}">Cancel</a>
</form>`;
  return page(view, `${a.verb}?`, body);
}

type AuditTarget = BoardAuditRecord['target'];

/** Do a confirmed action, write who did it to the receiver's logger, and send the browser to what it changed. */
export async function act(view: View, action: Action, form: URLSearchParams): Promise<Response> {
  const { receiver } = view.settings;
  const ledger = receiver.store.ledger!;
  const id = form.get('id') ?? '';
  const reference = form.get('reference') ?? '';
  const user = { user: view.viewer.user, account: view.viewer.account, action };
  // The logger's line (`fields` under `board`), and the `audit` hook's record (audit.ts).
  const audit = (fields: object, what: string, target: AuditTarget, result: BoardAuditRecord['result'], err?: unknown) =>
    writeAudit(receiver, view.settings.audit, { ...user, target, result, message: `${who(view)}: ${what}` }, fields, err);
  // A delivery this viewer cannot see: a forged form naming another account's id is answered as a missing one.
  const entry = ACTIONS[action].needs === 'id' ? await view.ledger.get(id) : undefined;
  if (ACTIONS[action].needs === 'id' && entry === undefined) {
    await audit(
      { id, refused: 'no such delivery' },
      `${action} of ${id} refused: no such delivery for this viewer`,
      { id },
      { kind: 'refused', why: 'no such delivery' },
    );
    return noSuchDelivery(view, id);
  }
  const account = entry ? entry.account : actingAccount(view, form);
  if (account === null) return notAnAccount(view);
  // What the action may reach: this account's records only, or every record (the platform, or a single-account app).
  const reachable = accountLedger(ledger, account, '[@payhook/board]');
  const listed = view.platform ? account : undefined;
  try {
    if (action === 'replay' || action === 'force') {
      const r = await receiver.replay(id, { force: action === 'force' });
      await audit(
        { id, scope: account, replay: r.deliveryId, outcome: r.outcome },
        `${ACTIONS[action].verb.toLowerCase()} of ${id}: ${r.outcome} (${r.status})`,
        { id, scope: account },
        { kind: 'done', outcome: r.outcome, replay: r.deliveryId },
      );
      return seeOther(
        r.deliveryId === undefined
          ? link(view, `/deliveries/${encodeURIComponent(id)}`)
          : link(view, `/deliveries/${encodeURIComponent(r.deliveryId)}`, { after: action }),
      );
    }
    if (action === 'retry' || action === 'retry-all') {
      // Every open dead letter (retryDeadLetters' own list), or this account's, oldest first as it takes them.
      const ids =
        action === 'retry'
          ? [id]
          : account === undefined
            ? undefined
            : (await reachable.list({ deadLetters: 'open', limit: 1000 })).reverse().map((e) => e.id);
      const results = await retryDeadLetters(receiver, ids === undefined ? {} : { ids });
      const closed = results.filter((x) => x.closed).length;
      const retried = results.map((x) => x.id);
      await audit(
        { scope: account, ids: retried, closed },
        `retried ${results.length} dead letters, ${closed} closed`,
        action === 'retry' ? { id, scope: account } : { deadLetters: 'open', scope: account },
        { kind: 'done', retried, closed },
      );
      return seeOther(
        action === 'retry'
          ? link(view, `/deliveries/${encodeURIComponent(id)}`, { after: 'retry', replay: results[0]?.report.deliveryId })
          : link(view, '/', {
              dead: 'open',
              account: listed,
              retried: results.length,
              closed,
              ...tallyOf(results.map((x) => x.report.outcome)),
            }),
      );
    }
    if (action === 'erase-customer') {
      const email = form.get('email') || undefined;
      const phone = email === undefined ? form.get('phone') || undefined : undefined;
      const { erased } = await eraseDeliveries(reachable, { email, phone });
      // The audit line says that a customer was erased, not who: the log would keep what was erased.
      const by = email !== undefined ? 'email' : 'phone';
      await audit(
        { scope: account, erased, by },
        `erased ${erased} records of a customer, by ${by}`,
        { customer: by, scope: account },
        { kind: 'done', erased },
      );
      return seeOther(link(view, '/', { account: listed, erased }));
    }
    const { erased } = await eraseDeliveries(reachable, { reference });
    await audit(
      { scope: account, reference, erased },
      `erased ${erased} records of reference ${JSON.stringify(reference)}`,
      { reference, scope: account },
      { kind: 'done', erased },
    );
    return seeOther(link(view, '/', { account: listed, erased }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await audit(
      { id, reference },
      `${action} failed: ${message}`,
      { id: id || undefined, reference: reference || undefined },
      { kind: 'failed', error: message },
      error,
    );
    // payhook's own errors say what to do; anything else (a driver's) stays in the logs.
    const shown = message.startsWith('[@payhook/') ? message : 'It failed; the receiver’s log says why.';
    return problem(view, 409, `${ACTIONS[action].verb} did not happen`, shown);
  }
}

const notAnAccount = (view: View) =>
  problem(view, 400, 'No such account', 'An account is named by 1 to 64 letters, digits, _ or -: start from the board’s pages.');

const seeOther = (location: string): Response => new Response(null, { status: 303, headers: { location } });

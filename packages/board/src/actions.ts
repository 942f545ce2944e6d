import { eraseDeliveries, retryDeadLetters } from '@payhook/core';
import { adapterOf } from '@payhook/core/adapter';
import { html } from './html.js';
import { link, page, problem, type View } from './page.js';

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

/** The confirmation: what the action will do, and the one form that does it. */
export function confirmView(view: View, action: Action): Response {
  const a = ACTIONS[action];
  const id = view.url.searchParams.get('id') ?? '';
  const reference = view.url.searchParams.get('reference') ?? '';
  const email = (view.url.searchParams.get('email') ?? '').trim();
  const phone = email === '' ? (view.url.searchParams.get('phone') ?? '').trim() : '';
  const missing = { id: id === '', reference: reference === '', customer: email === '' && phone === '', nothing: false }[a.needs];
  if (missing) {
    const what = { id: 'a delivery', reference: 'a reference', customer: 'an email or a phone', nothing: '' }[a.needs];
    return problem(view, 400, 'Nothing to act on', `${a.verb} needs ${what}: start from the board's pages.`);
  }
  const target =
    a.needs === 'id'
      ? html`delivery <code class="value">${id}</code>`
      : a.needs === 'reference'
        ? html`payment <code class="value">${reference}</code>`
        : a.needs === 'customer'
          ? html`customer <code class="value">${email || phone}</code>`
          : 'every open dead letter';
  const back =
    a.needs === 'id'
      ? link(view, `/deliveries/${encodeURIComponent(id)}`)
      : link(view, '/', a.needs === 'nothing' ? { dead: 'open' } : { reference });
  const body = html`<h2>${a.verb}: ${target}?</h2><p>${a.what}</p>
<form method="post" action="${link(view, `/actions/${action}`)}" class="actions">
<input type="hidden" name="csrf" value="${view.token}">${id && html`<input type="hidden" name="id" value="${id}">`}${reference && html`<input type="hidden" name="reference" value="${reference}">`}${email && html`<input type="hidden" name="email" value="${email}">`}${phone && html`<input type="hidden" name="phone" value="${phone}">`}
<button type="submit"${action !== 'replay' && action !== 'retry' && action !== 'retry-all' ? html` class="danger"` : html` class="primary"`}>${a.verb}</button> <a href="${back}">Cancel</a>
</form>`;
  return page(view, `${a.verb}?`, body);
}

/** Do a confirmed action, write who did it to the receiver's logger, and send the browser to what it changed. */
export async function act(view: View, action: Action, form: URLSearchParams): Promise<Response> {
  const { receiver } = view.settings;
  const id = form.get('id') ?? '';
  const reference = form.get('reference') ?? '';
  const audit = (fields: object, what: string) =>
    adapterOf(receiver).log(
      'info',
      { board: { user: view.viewer.user, action, ...fields } },
      `[@payhook/board] ${view.viewer.user}: ${what}`,
    );
  try {
    if (action === 'replay' || action === 'force') {
      const r = await receiver.replay(id, { force: action === 'force' });
      audit({ id, replay: r.deliveryId, outcome: r.outcome }, `${ACTIONS[action].verb.toLowerCase()} of ${id}: ${r.outcome} (${r.status})`);
      return seeOther(
        r.deliveryId === undefined
          ? link(view, `/deliveries/${encodeURIComponent(id)}`)
          : link(view, `/deliveries/${encodeURIComponent(r.deliveryId)}`, { after: action }),
      );
    }
    if (action === 'retry' || action === 'retry-all') {
      const results = await retryDeadLetters(receiver, action === 'retry' ? { ids: [id] } : {});
      const closed = results.filter((x) => x.closed).length;
      audit({ ids: results.map((x) => x.id), closed }, `retried ${results.length} dead letters, ${closed} closed`);
      return seeOther(
        action === 'retry'
          ? link(view, `/deliveries/${encodeURIComponent(id)}`, { after: 'retry' })
          : link(view, '/', { dead: 'open', retried: results.length, closed }),
      );
    }
    if (action === 'erase-customer') {
      const email = form.get('email') || undefined;
      const phone = email === undefined ? form.get('phone') || undefined : undefined;
      const { erased } = await eraseDeliveries(receiver.store.ledger!, { email, phone });
      // The audit line says that a customer was erased, not who: the log would keep what was erased.
      audit(
        { erased, by: email !== undefined ? 'email' : 'phone' },
        `erased ${erased} records of a customer, by ${email !== undefined ? 'email' : 'phone'}`,
      );
      return seeOther(link(view, '/', { erased }));
    }
    const { erased } = await eraseDeliveries(receiver.store.ledger!, { reference });
    audit({ reference, erased }, `erased ${erased} records of reference ${JSON.stringify(reference)}`);
    return seeOther(link(view, '/', { erased }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    adapterOf(receiver).log(
      'warn',
      { board: { user: view.viewer.user, action, id, reference }, err: error },
      `[@payhook/board] ${view.viewer.user}: ${action} failed: ${message}`,
    );
    // payhook's own errors say what to do; anything else (a driver's) stays in the logs.
    const shown = message.startsWith('[@payhook/') ? message : 'It failed; the receiver’s log says why.';
    return problem(view, 409, `${ACTIONS[action].verb} did not happen`, shown);
  }
}

const seeOther = (location: string): Response => new Response(null, { status: 303, headers: { location } });

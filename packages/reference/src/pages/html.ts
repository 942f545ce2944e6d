import { Html, html } from '@payhook/core/api';

export { escapeHtml, Html, html } from '@payhook/core/api';

const STYLE = `body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .5rem;text-align:left;font-size:.9rem}
.status{font-weight:bold}.box{border:1px solid #ccc;border-radius:.5rem;padding:1.5rem;max-width:28rem}
button{font-size:1rem;padding:.5rem 1.2rem;margin:.3rem .3rem 0 0}code{font-size:.85rem}
.error{color:#a00;font-weight:bold}.hint{color:#666;font-size:.85rem}input{font-size:1rem;padding:.3rem}
form.inline{display:inline;margin:0}form.inline button{font-size:.8rem;padding:.2rem .6rem;margin:.1rem}
pre.response{white-space:pre-wrap;word-break:break-all;max-height:8rem;overflow:auto;margin:0;font-size:.8rem}`;

/**
 * A whole page, with a Content-Security-Policy that allows no script and forms to this origin only.
 * `refreshSeconds` makes it reload itself after that many seconds (a meta refresh, no script).
 */
export function page(title: string, body: Html, status = 200, refreshSeconds?: number): Response {
  const refresh =
    refreshSeconds === undefined ? '' : html`<meta http-equiv="refresh" content="${Math.max(1, Math.round(refreshSeconds))}">`;
  const doc = html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}<title>${title}</title><style>${new Html(STYLE)}</style></head><body>${body}</body></html>`;
  return new Response(doc.value, {
    status,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    },
  });
}

/** Redirect after a form post, so reloading the page does not post again. */
export const seeOther = (location: string): Response => new Response(null, { status: 303, headers: { location } });

/**
 * A readable HTML error page (never JSON): for people who followed a link.
 *
 * @example
 * return errorPage(404, 'Checkout not found', html`No transaction ${reference}: check the checkout link.`);
 */
export function errorPage(status: number, title: string, message: Html): Response {
  return page(title, html`<div class="box"><h1>${title}</h1><p id="message">${message}</p></div>`, status);
}

/**
 * `@payhook/core/api`: the service's wire contract for the tools that speak it (`@payhook/client`,
 * the reference service, `@payhook/testing`): the REST shapes (section 4), the signature header's
 * name as configured, the escaping of what the service sent before a terminal prints it, and the
 * `html` tag the board's and the reference's pages escape it with. A
 * merchant's webhook code never needs it, so the root entry does not carry it.
 *
 * @module
 */
export * from './protocol/api-schema.js';
export { signatureHeaderName } from './settings/options.js';
export { escapeText } from './base/escape-text.js';
export { escapeHtml, Html, html, lines } from './base/html.js';

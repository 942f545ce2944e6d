/**
 * `@payhook/core/api`: the REST contract of the service (section 4), for `@payhook/client` and the
 * reference service. A merchant's webhook code never needs it, so the root entry does not carry it.
 */
export * from './protocol/api-schema.js';

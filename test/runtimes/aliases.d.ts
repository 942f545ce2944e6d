// The lowest versions the adapters' peer ranges allow, installed under other names beside the newest.
declare module 'hono-4.0' {
  export { Hono } from 'hono';
}
declare module '@hono/node-server-1' {
  export { getRequestListener } from '@hono/node-server';
}

import { shopContract } from '../../shop/test/contract.js';
import * as board from '../app/admin/payments/[[...path]]/route.js';
import * as checkout from '../app/checkout/route.js';
import * as orders from '../app/orders/[merchantReference]/route.js';
import * as webhooks from '../app/webhooks/route.js';

// The example's own route handlers, routed as `next start` routes them (test/examples.test.ts runs the built app).
shopContract('next (App Router handlers)', (shop) => {
  (globalThis as { payhookShop?: unknown }).payhookShop = shop;
  return {
    async fetch(request: Request): Promise<Response> {
      const { pathname } = new URL(request.url);
      if (pathname === '/webhooks') return request.method === 'POST' ? webhooks.POST(request as never) : webhooks.GET(request as never);
      if (pathname === '/checkout' && request.method === 'POST') return checkout.POST(request);
      if (pathname === '/admin/payments' || pathname.startsWith('/admin/payments/')) {
        if (request.method === 'POST') return board.POST(request);
        if (request.method === 'HEAD') return board.HEAD(request);
        return request.method === 'GET' ? board.GET(request) : new Response(null, { status: 405 });
      }
      const order = /^\/orders\/([^/]+)$/.exec(pathname);
      if (order) return orders.GET(request, { params: Promise.resolve({ merchantReference: decodeURIComponent(order[1]!) }) });
      return Response.json({ error: 'not found' }, { status: 404 });
    },
  };
});

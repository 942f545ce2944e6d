import { createShop, type Shop } from '@payhook/example-shop';

const holder = globalThis as { payhookShop?: Shop };

/** One shop per server process, made on first use so `next build` needs no environment. */
export const shop = (): Shop => (holder.payhookShop ??= createShop());

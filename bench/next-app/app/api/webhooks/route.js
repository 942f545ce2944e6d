import { payhookNext } from '@payhook/next';
import { receiver } from '../../../lib.js';

export const dynamic = 'force-dynamic';
export const { POST } = payhookNext(receiver);

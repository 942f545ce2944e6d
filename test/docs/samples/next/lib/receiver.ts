// What the Next samples import as `@/lib/receiver`: the app's own module that makes its receiver.
import { createReceiver } from '@payhook/core';

export const makeReceiver = () => createReceiver({ secret: process.env.PAYHOOK_WEBHOOK_SECRET! });

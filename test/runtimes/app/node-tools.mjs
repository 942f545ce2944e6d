// @payhook/testing and the reference service on the Node under test: a sandbox payment, delivered
// over HTTP to a receiver behind the Node bridge. Prints what happened as one JSON line.
import http from 'node:http';
import { createReceiver } from '@payhook/core';
import { toNodeListener } from '@payhook/core/node';
import { startReferenceService } from '@payhook/testing';

const ref = await startReferenceService();
const paid = [];
const receiver = createReceiver({ secret: ref.webhookSecret }).on('payment.success', (event) => void paid.push(event.reference));
const server = http.createServer(toNodeListener(receiver));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
await ref.deliverTo(`http://127.0.0.1:${server.address().port}/webhooks`);
const { reference } = await ref.createTransaction();
await ref.pay(reference);
const statuses = ref.deliveries({ reference }).flatMap((d) => d.attempts.map((a) => a.status));
console.log(JSON.stringify({ node: process.version, paid: paid.filter((r) => r === reference).length, statuses }));
server.close();
await ref.close();

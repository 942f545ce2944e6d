/**
 * `@payhook/board`: a board for a receiver's delivery ledger, mounted in your own app: every delivery,
 * why it was refused, replay and dead letters, in the browser. `@payhook/board/node` mounts it on Node.
 *
 * @module
 */
export { createBoard, type Board } from './board.js';
export type { Authorization, BoardAction, BoardAuditRecord, BoardOptions, BoardViewer } from './base/options.js';

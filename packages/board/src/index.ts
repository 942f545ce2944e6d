export { createBoard, type Board } from './board.js';
export type { Authorization, BoardAction, BoardAuditRecord, BoardOptions, BoardViewer } from './base/options.js';

export { createBoard, type Board } from './board.js';
export type { Authorization, BoardOptions, BoardViewer } from './options.js';

// The types live in types/, the leaf room; this path re-exports them for its importers.
export type * from './types/toolCall.js';

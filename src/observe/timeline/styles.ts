import type { TimelineStatus, TimelineWaitKind } from './model.js';

/** The fill of each status's bars (distinct in hue and lightness, readable with white text). */
export const STATUS_COLORS: Readonly<Record<TimelineStatus, string>> = {
  ok: '#2f9e44',
  error: '#e03131',
  denied: '#7048e8',
  cancelled: '#868e96',
  timeout: '#f08c00',
  suspended: '#1c7ed6',
};

/** How each kind of wait is drawn: a thin strip above the body, never in a status colour. */
export const WAIT_STYLES: Readonly<Record<TimelineWaitKind, { readonly fill: string; readonly label: string }>> = {
  policy: { fill: '#a5b4c8', label: 'policy' },
  approval: { fill: 'url(#toolstream-timeline-hatch)', label: 'waiting for approval' },
  queue: { fill: '#ced4da', label: 'queued for a slot' },
  limit: { fill: '#4c6ef5', label: 'waiting for a limit or rate limit' },
};

/** The hatch that marks approval waits (a pattern, so it reads without colour). */
export const HATCH =
  '<pattern id="toolstream-timeline-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
  '<rect width="6" height="6" fill="#ffe8a3"/><rect width="3" height="6" fill="#e0a800"/></pattern>';

export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
/** An estimate of a character's width at 11px, to size labels without measuring text (deterministic). */
export const CHAR_WIDTH = 6.4;

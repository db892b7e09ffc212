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

/** The heading's font (the only text not measured: the picture is at least as wide as its estimate). */
export const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
/**
 * Every other text is monospace at 11px, so its width is known without measuring it: each `<text>`
 * also carries `textLength` (`lengthAdjust="spacingAndGlyphs"`), so a browser draws it exactly as wide
 * as computed here whatever font it picks, and labels placed by that width never overlap.
 */
export const MONO = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', 'Liberation Mono', monospace";
/** A monospace cell at 11px: the common fonts' advance is 0.6em (DejaVu Sans Mono's 0.602em). */
export const CELL = 6.62;
/** The heading's size, and an upper estimate of its characters' width in px. */
export const HEADING_SIZE = 13;
export const HEADING_CHAR = 8;

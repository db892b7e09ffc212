/**
 * Tick positions for an axis from 0 to `span` milliseconds: a round step (1, 2 or 5 times a power of
 * ten) that gives about `target` ticks, and labels in ms (or s from a step of a second).
 */
export function axisTicks(span: number, target = 8): { readonly at: number; readonly label: string }[] {
  if (!(span > 0)) return [{ at: 0, label: '0 ms' }];
  const rough = span / target;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough)!;
  const ticks: { at: number; label: string }[] = [];
  for (let i = 0; i * step <= span + step * 1e-9; i++) {
    const at = i * step;
    ticks.push({ at, label: step >= 1000 ? `${round(at / 1000)} s` : `${round(at)} ms` });
  }
  return ticks;
}

/** A number for SVG text and attributes: at most two decimals, no `-0`. */
export function round(value: number): string {
  const rounded = Math.round(value * 100) / 100;
  return String(rounded === 0 ? 0 : rounded);
}

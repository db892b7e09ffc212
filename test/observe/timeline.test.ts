import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, renderTimeline } from '../../src/index.js';
import { callsFromEvents } from '../../src/observe/timeline/fromEvents.js';
import type { PipelineEvent } from '../../src/index.js';
import { scheduleScenario, scheduleScenarioEvents } from './timelineScenario.js';

const attrs = (svg: string, selector: RegExp) =>
  [...svg.matchAll(/<rect ([^>]*)\/>/g)]
    .map((m) => Object.fromEntries([...m[1]!.matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!])))
    .filter((a) => Object.keys(a).some((k) => selector.test(k)));

describe('renderTimeline', () => {
  it('draws every call of a real run where its timing says, each on its own row with its label', async () => {
    const { results, tools } = await scheduleScenario();
    const svg = renderTimeline(results, { tools });
    const t0 = Math.min(...results.map((r) => r.timing.receivedAt));
    const bodies = attrs(svg, /^data-part$/).filter((a) => a['data-part'] === 'body');
    const started = results.filter((r) => r.started);
    expect(bodies.map((b) => b['data-call-id']).sort()).toEqual(started.map((r) => r.id).sort());
    for (const r of started) {
      const body = bodies.find((b) => b['data-call-id'] === r.id)!;
      expect(Number(body['data-start'])).toBeCloseTo(r.timing.startedAt! - t0, 1);
      expect(Number(body['data-end'])).toBeCloseTo(r.timing.endedAt! - t0, 1);
      expect(body['data-status']).toBe(r.id === 'r4' ? 'timeout' : r.status);
    }
    // A row per call, in order of arrival: each call's bar or mark at its own y, and a label for each.
    const marks = attrs(svg, /^data-part$/);
    const ys = results.map((r) => Number(marks.find((m) => m['data-call-id'] === r.id)!['y']));
    expect(new Set(ys).size).toBe(results.length);
    expect([...ys].sort((a, b) => a - b)).toEqual(ys);
    for (const r of results) expect(svg).toMatch(new RegExp(`data-label-for="${r.id}"[^>]*>${r.name} ${r.id}`));
    // The denied call never started: an outcome mark in its own row, at least 6 px wide.
    const [outcome] = marks.filter((a) => a['data-part'] === 'outcome');
    expect(outcome).toMatchObject({ 'data-call-id': 'x1', 'data-status': 'denied' });
    expect(Number(outcome!['width'])).toBeGreaterThanOrEqual(6);
    // The exclusive write: outlined, a band across the rows, and no other body inside its time.
    const w1 = bodies.find((b) => b['data-call-id'] === 'w1')!;
    expect(w1['stroke']).toBeDefined();
    expect(attrs(svg, /^data-exclusive-band$/).map((a) => a['data-exclusive-band'])).toEqual(['w1']);
    for (const b of bodies.filter((b) => b['data-call-id'] !== 'w1')) {
      expect(Number(b['data-end']) <= Number(w1['data-start']) || Number(b['data-start']) >= Number(w1['data-end'])).toBe(true);
    }
    // Its approval wait is drawn (hatched), and the queue waits of calls behind the pool.
    const waits = attrs(svg, /^data-wait$/);
    expect(waits.filter((w) => w['data-wait'] === 'approval').map((w) => w['data-call-id'])).toEqual(['w1']);
    expect(waits.some((w) => w['data-wait'] === 'queue')).toBe(true);
    // Commits: one per result, in model order never earlier than an earlier index's.
    const commits = attrs(svg, /^data-commit-for$/);
    const at = (id: string) => Number(commits.find((c) => c['data-commit-for'] === id)!['data-at']);
    const inOrder = [...results].sort((a, b) => a.index - b.index);
    for (let i = 0; i < inOrder.length; i++) {
      expect(at(inOrder[i]!.id)).toBeGreaterThanOrEqual(inOrder[i]!.timing.finishedAt - t0 - 0.01);
      if (i > 0) expect(at(inOrder[i]!.id)).toBeGreaterThanOrEqual(at(inOrder[i - 1]!.id));
    }
    expect(at('r5')).toBeCloseTo(Math.max(...results.map((r) => r.timing.finishedAt)) - t0, 1); // r5 waits behind r4's timeout
  });

  it('draws from a run\'s events: bodies from started to finished, the approval as its own wait, commits at the result events', async () => {
    const { events, tools } = await scheduleScenarioEvents();
    const svg = renderTimeline(events, { tools });
    const at = (type: PipelineEvent['type'], id: string) => events.find((e) => e.type === type && e.id === id)!.at;
    const t0 = Math.min(...events.filter((e) => e.type === 'received').map((e) => e.at));
    const bodies = attrs(svg, /^data-part$/).filter((a) => a['data-part'] === 'body');
    expect(bodies.map((b) => b['data-call-id']).sort()).toEqual(['r1', 'r2', 'r3', 'r4', 'r5', 'w1']);
    for (const b of bodies) expect(Number(b['data-start'])).toBeCloseTo(at('started', b['data-call-id']!) - t0, 1);
    const approval = attrs(svg, /^data-wait$/).filter((w) => w['data-wait'] === 'approval');
    expect(approval.map((w) => w['data-call-id'])).toEqual(['w1']);
    const commits = attrs(svg, /^data-commit-for$/);
    for (const c of commits) expect(Number(c['data-at'])).toBeCloseTo(at('result', c['data-commit-for']!) - t0, 1);
    expect(svg).toContain('the schedule of 7 calls');
  });

  it('from events, each retry ends an attempt and the next begins after its delay', () => {
    const result = { id: 'f', name: 'fetch', index: 0, status: 'ok', error: undefined, timing: { receivedAt: 0, startedAt: 1, endedAt: 30, finishedAt: 31 } } as never;
    const base = { index: 0, id: 'f', name: 'fetch', turn: undefined };
    const events = [
      { ...base, type: 'received', at: 0, done: false },
      { ...base, type: 'decided', at: 0.5 },
      { ...base, type: 'started', at: 1 },
      { ...base, type: 'retry', at: 5, attempt: 1, delayMs: 10 },
      { ...base, type: 'finished', at: 31, result },
      { ...base, type: 'result', at: 32, result },
    ] as unknown as PipelineEvent[];
    const [call] = callsFromEvents(events, new Set());
    expect(call!.attempts).toEqual([{ from: 1, to: 5 }, { from: 15, to: 30 }]);
    expect(call!.waits).toEqual([{ kind: 'policy', from: 0, to: 0.5 }, { kind: 'queue', from: 0.5, to: 1 }]);
    expect(call!.committedAt).toBe(32);
  });

  it('is self-contained and deterministic', async () => {
    const { results, tools } = await scheduleScenario();
    const svg = renderTimeline(results, { tools });
    expect(renderTimeline(results, { tools })).toBe(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).not.toMatch(/<script|href=|@import|url\((?!#)/i);
    for (const status of ['ok', 'error', 'denied', 'cancelled', 'timeout', 'suspended']) expect(svg).toContain(`data-legend="${status}"`);
  });

  it('without tools marks nothing exclusive; with no results it still draws the axis', async () => {
    const { results } = await scheduleScenario();
    expect(renderTimeline(results)).not.toContain('data-exclusive-band');
    expect(renderTimeline([])).toContain('0 ms');
  });

  it('escapes ids and names', () => {
    const svg = renderTimeline([], { title: '<a & "b">' });
    expect(svg).toContain('&#60;a &#38; &#34;b&#34;&#62;');
    expect(svg).not.toContain('<a &');
  });

  it('rejects malformed options eagerly', () => {
    expect(() => renderTimeline([], { width: 10 })).toThrow(ConfigError);
    expect(() => renderTimeline([], { width: 10 })).toThrow('renderTimeline: `width` must be an integer from 320 to 10000; received 10');
    expect(() => renderTimeline([], { tools: [{ name: 'x', mode: 'sometimes' as 'parallel' }] })).toThrow('`tools[0].mode`');
    expect(() => renderTimeline('nope' as never)).toThrow('`results`');
  });
});

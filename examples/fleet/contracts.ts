// The tools of the fleet example, as contracts: imported by the agent (examples/fleet.ts) and by the
// workers (examples/fleet/worker.ts), so both validate with one schema and agree on the facts.
import { z } from 'zod';
import { toolContract } from 'toolstream';

/** A stand-in for a headless browser: at most 2 may run in the whole fleet (the queue's limit). */
export const renderPage = toolContract({
  name: 'render_page',
  description: 'Render a page in a headless browser and return its title',
  input: z.object({ url: z.url() }),
  mode: 'parallel',
  timeoutMs: 30_000,
  idempotent: true, // a re-render is harmless: a worker that dies mid-page is replaced by another
  render: (value) => (value as Rendered).title, // the model sees the title; the host keeps the rest
});

/** What a worker reports of one body: who ran it, and when (for the example's overlap check). */
export interface Rendered {
  readonly url: string;
  readonly title: string;
  readonly worker: number;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** The Redis of the example: `REDIS_URL`, else the default local one. */
export function redisConnection(): { host: string; port: number } {
  const url = new URL(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
  return { host: url.hostname, port: Number(url.port || 6379) };
}

import { map, timer, type Observable } from 'rxjs';
import { z } from 'zod';
import { createPipeline, defineTool, type PipelineOptions, type ToolCall, type ToolDefinition, type ToolMode } from '../../src/index.js';

/** The arguments of a virtual-time sleeper: its log key, how many frames it takes, a host to key limits by. */
export const sleeperInput = z.object({ key: z.string(), frames: z.number(), host: z.string().default('a') });
export type SleeperArgs = z.output<typeof sleeperInput>;

/** The scheduling facts a sleeper may declare. */
export type SleeperFacts = Pick<ToolDefinition<typeof sleeperInput>, 'limit' | 'rateLimit' | 'start' | 'timeoutMs'>;

/**
 * What the scheduling marble tests share: tools whose bodies are virtual-time Observables `frames` long,
 * each start logged with the time (`starts`); `reset` between tests points the clock at the test's scheduler.
 */
export class VirtualSleepers {
  starts: [string, number][] = [];
  #now: () => number = () => 0;

  reset(now: () => number): void {
    this.starts = [];
    this.#now = now;
  }

  tool(name: string, mode: ToolMode, facts: SleeperFacts = {}) {
    return defineTool({
      name,
      description: name,
      input: sleeperInput,
      mode,
      ...facts,
      execute: ({ key, frames }) => {
        this.starts.push([key, this.#now()]);
        return timer(frames).pipe(map(() => key));
      },
    });
  }
}

export const sleeperCall = (key: string, name: string, frames: number, host = 'a'): ToolCall => ({ id: key, name, args: { key, frames, host } });

/** A pipeline of `options` as an operator from calls to `id:status` lines, for marble expectations. */
export const statuses = (options: PipelineOptions) => {
  const pipeline = createPipeline(options);
  return (calls: Observable<ToolCall>) => calls.pipe(pipeline.operator(), map((r) => `${r.id}:${r.status}`));
};

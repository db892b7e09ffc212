// Type tests: checked by `tsc --noEmit` (tsconfig.json has `exactOptionalPropertyTypes`), run by vitest as a check
// that the calls also behave. A type regression here fails `npm run typecheck`, not the assertions.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { implementTool, toolContract, type Tool, type ToolContract } from '../src/index.js';

interface Weather {
  readonly city: string;
  readonly celsius: number;
}

const input = z.object({ city: z.string() });

describe('the types of toolContract and implementTool', () => {
  it("render's value is the contract's output, from render's parameter", () => {
    const weather = toolContract({
      name: 'weather',
      description: 'The weather in a city',
      input,
      render: (value: Weather) => `${value.city}: ${value.celsius} °C`,
    });
    expectTypeOf(weather).toEqualTypeOf<ToolContract<typeof input, Weather>>();
    const tool = implementTool(weather, ({ city }) => ({ city, celsius: 21 }));
    expectTypeOf(tool).toEqualTypeOf<Tool<typeof input, { city: string; celsius: number }>>();
    expectTypeOf(tool.render).toEqualTypeOf<((value: { city: string; celsius: number }) => string) | undefined>();
    expect(tool.render?.({ city: 'Oslo', celsius: 21 })).toBe('Oslo: 21 °C');
    // A body whose output is not the contract's is refused.
    // @ts-expect-error -- a string is not a Weather
    implementTool(weather, () => 'sunny');
    // @ts-expect-error -- nor is a Weather without its number
    implementTool(weather, async ({ city }) => ({ city }));
  });

  it("render's value is the contract's output, from the declared type", () => {
    const weather: ToolContract<typeof input, Weather> = toolContract({
      name: 'weather',
      description: 'The weather in a city',
      input,
      render: (value) => {
        expectTypeOf(value).toEqualTypeOf<Weather>();
        return `${value.city}: ${value.celsius} °C`;
      },
    });
    expect(weather.render?.({ city: 'Bergen', celsius: 9 })).toBe('Bergen: 9 °C');
  });

  it('a contract without render takes any body, and the tool keeps its output type', () => {
    const lookup = toolContract({ name: 'lookup', description: 'Look a key up', input: z.object({ key: z.string() }) });
    expectTypeOf(lookup.render).toEqualTypeOf<((value: unknown) => string) | undefined>();
    const tool = implementTool(lookup, ({ key }) => key.length);
    expectTypeOf(tool).toEqualTypeOf<Tool<typeof lookup.input, number>>();
  });

  it('a contract spread into another type-checks under exactOptionalPropertyTypes', () => {
    const base = toolContract({ name: 'slow', description: 'Slow', input, onError: 'continue', render: (value: Weather) => value.city });
    const quicker = toolContract({ ...base, timeoutMs: 5_000 });
    expectTypeOf(quicker).toEqualTypeOf<ToolContract<typeof input, Weather>>();
    expect(quicker).toMatchObject({ name: 'slow', timeoutMs: 5_000, onError: 'continue' });
    const bare = toolContract({ name: 'bare', description: 'Bare', input });
    expect(toolContract({ ...bare, timeoutMs: 5_000 })).toMatchObject({ name: 'bare', timeoutMs: 5_000, onError: undefined, retry: undefined });
  });

  it('remote contracts of different outputs share one list', () => {
    const weather = toolContract({ name: 'weather', description: 'w', input, render: (value: Weather) => value.city });
    const count = toolContract({ name: 'count', description: 'c', input, render: (value: number) => String(value) });
    const contracts: readonly ToolContract[] = [weather, count];
    expect(contracts).toHaveLength(2);
  });
});

import { expect } from 'vitest';
import type { CodeBinding, CodeRunResult, CodeRuntime, HostFunction } from '../../../src/ptc/types.js';
export { deferred } from '../../support/deferred.js';

export const MiB = 2 ** 20;

/**
 * The time limit of a runtime whose programs the test means to end some other way (memory, output, an
 * error, a value): far past what any of them takes, however busy the machine, so none ends by time.
 */
export const UNREACHED_LIMIT_MS = 60_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `program` and measures how long it took, in milliseconds. */
export async function timed(
  runtime: CodeRuntime,
  program: string,
  bindings: readonly CodeBinding[] = [],
  signal?: AbortSignal,
): Promise<{ result: CodeRunResult; ms: number }> {
  const started = performance.now();
  const result = await runtime.run(signal === undefined ? { program, bindings } : { program, bindings, signal });
  return { result, ms: performance.now() - started };
}

export function tools(functions: Record<string, HostFunction>): CodeBinding {
  return { global: 'tools', functions };
}

/** The host is healthy: a trivial program runs and returns its value. */
export async function expectHealthy(runtime: CodeRuntime): Promise<void> {
  expect(await runtime.run({ program: 'const x: number = 6; return x * 7', bindings: [] })).toEqual({ value: 42, logs: [] });
}

/** The failure of a run, asserting there is one of `kind` and no value. */
export function failureOf(result: CodeRunResult, kind: string): string {
  expect(result.failure?.kind, JSON.stringify(result).slice(0, 500)).toBe(kind);
  expect('value' in result).toBe(false);
  return result.failure!.message;
}

/** 1-based line and column of the first occurrence of `token` in `source` (optionally at `offset` in the token). */
export function positionOf(source: string, token: string, offset = 0): { line: number; column: number } {
  const at = source.indexOf(token);
  if (at === -1) throw new Error(`${token} is not in the source`);
  const before = source.slice(0, at + offset);
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}

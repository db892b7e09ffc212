/**
 * How long checking MCP arguments can block the event loop, at the default limits of `mcpTools`
 * (1 Mi characters, 8 Ki values, depth 64, each lowered for a schema that costs more): the worst
 * cases of what `compileInputSchema` admits, each input filling the tool's own limits, next to what
 * the same schemas cost when compiled as they were listed (zod's `fromJSONSchema` alone). Medians
 * of several runs, in milliseconds.
 */
import { safeParse } from 'zod/v4/core';
import * as z from 'zod';
import { compileInputSchema, type ArgsLimits } from '../src/mcp/inputSchema.js';
import { collectGarbage, fmt, median, printHeader } from './common.js';

function timeMs(run: () => unknown, rounds = 9): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    collectGarbage();
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return median(times);
}

interface Measured {
  readonly ms: number;
  readonly relaxed: readonly string[];
  readonly ok: boolean;
  readonly limits: ArgsLimits;
}

/**
 * The validation time of one argument object against a schema compiled by mcpTools: `args` builds it
 * from the tool's own limits, so that it just fits them.
 */
function compiled(schema: Record<string, unknown>, args: (limits: ArgsLimits) => unknown): Measured {
  const { schema: validator, relaxed, limits } = compileInputSchema(schema);
  const value = args(limits);
  const outcome = safeParse(validator, value);
  if (!outcome.success && /accepts|nested/.test(outcome.error.issues[0]?.message ?? '')) throw new Error(`the input does not fit: ${outcome.error.issues[0]!.message}`);
  return { ms: timeMs(() => safeParse(validator, value)), relaxed, ok: outcome.success, limits };
}

function note(result: Measured): string {
  const limits = `${result.limits.maxArgsLength} chars, ${result.limits.maxArgsValues} values`;
  return result.relaxed.length > 0 ? `relaxed ${result.relaxed.join(', ')}; ${limits}` : `checked; ${limits}`;
}

function row(label: string, ms: number, note = ''): void {
  console.log(`${label.padEnd(64)} ${fmt(ms, 2).padStart(9)} ms  ${note}`);
}

printHeader('MCP argument checks: worst cases at the default bounds');
console.log('\nAdmitted patterns, on one string as long as the tool accepts, built to make them work hardest:');
const fill = (unit: string, end: string) => (limits: ArgsLimits) => {
  const length = limits.maxArgsLength - 1 - end.length; // the key is `s`
  return { s: unit.repeat(Math.floor(length / unit.length)) + end };
};
const stringCases: [string, (limits: ArgsLimits) => unknown][] = [
  ['^[a-z]+$', fill('a', '!')],
  ['^(?:ab|cd)*$', fill('ab', 'a!')],
  ['^[a-z]+(?:-[a-z]+)*$', fill('abc-', 'abc-!')],
  [`^(?:${Array.from({ length: 50 }, (_, i) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[i] + 'x').join('|')})*$`, fill('xx', 'x!')],
  ['[ab]{16}', fill(`${'a'.repeat(15)}c`, '')], // unanchored: the longest span admitted
  ['\\.json$', fill('.jso', '')],
];
for (const [pattern, args] of stringCases) {
  const result = compiled({ type: 'object', properties: { s: { type: 'string', pattern } } }, args);
  row(`  ${pattern.length > 50 ? `${pattern.slice(0, 47)}...` : pattern}`, result.ms, note(result));
}

console.log('\nSchemas that evaluate a value many times, with as many values as the tool accepts:');
const seven = compiled({ type: 'object', properties: { s: { allOf: Array.from({ length: 7 }, () => ({ type: 'string', pattern: '^(?:a|b)*$' })) } } }, fill('ab', 'a!'));
row('  one long string checked by 7 anchored patterns (allOf)', seven.ms, note(seven));
const list = (item: unknown) => (limits: ArgsLimits) => ({ items: Array.from({ length: limits.maxArgsValues - 2 }, () => item) });
const failing = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
for (const members of [1, 14, 200]) {
  const union = compiled({ type: 'object', properties: { items: { type: 'array', items: { anyOf: Array.from({ length: members }, () => failing) } } } }, list({}));
  row(`  empty objects, each failing an anyOf of ${members} object schemas`, union.ms, note(union));
}
for (const size of [30, 1000]) {
  const literals = compiled({ type: 'object', properties: { items: { type: 'array', items: { enum: [...Array.from({ length: size - 1 }, (_, i) => i), 'x'] } } } }, list('y'));
  row(`  strings, each failing an enum of ${size} mixed values`, literals.ms, note(literals));
}
for (const count of [30, 300]) {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) properties[`p${i}`] = { type: 'string' };
  const wide = compiled({ type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties } } } }, list({}));
  row(`  empty objects against an object schema of ${count} properties`, wide.ms, note(wide));
}
const listSchema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string', pattern: '^item[0-9]+$' }, tags: { type: 'array', items: { type: 'string' } } } },
    },
  },
};
const records = compiled(listSchema, (limits) => ({
  items: Array.from({ length: Math.floor((limits.maxArgsValues - 2) / 6) }, (_, i) => ({ id: i, name: `item${i}`, tags: ['a', 'bb'] })),
}));
row('  records { id, name, tags: [2] }, each name checked by ^item[0-9]+$', records.ms, note(records));

console.log('\nWhat the fixes remove (the same schemas compiled by zod as listed):');
for (const letters of [20, 22, 24]) {
  const raw = new RegExp('^([a-z]+)+$');
  const value = `${'a'.repeat(letters)}!`;
  const before = timeMs(() => raw.test(value), 3);
  const after = compiled({ type: 'object', properties: { s: { type: 'string', pattern: '^([a-z]+)+$' } } }, () => ({ s: value }));
  row(`  ^([a-z]+)+$ on ${letters} letters and "!": as listed`, before);
  row('                                        with mcpTools', after.ms, `relaxed ${after.relaxed.join(', ')}`);
}
for (const levels of [14, 16, 18]) {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) $defs[`A${i}`] = { anyOf: [{ $ref: `#/$defs/A${i + 1}` }, { $ref: `#/$defs/A${i + 1}` }] };
  $defs[`A${levels}`] = { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] };
  const schema = { type: 'object', $defs, properties: { v: { $ref: `#/$defs/A0` } } };
  const raw = z.fromJSONSchema(schema as never);
  const before = timeMs(() => raw.safeParse({ v: {} }), 3);
  const after = compiled(schema, () => ({ v: {} }));
  row(`  anyOf chain of ${levels} shared $defs (${JSON.stringify(schema).length} bytes): as listed`, before);
  row('                                        with mcpTools', after.ms, `relaxed ${after.relaxed.join(', ')}`);
}

console.log('\nListing: compiling a schema (once per tool per listing), mcpTools against zod alone:');
function chains(count: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  const properties: Record<string, unknown> = {};
  for (let c = 0; c < count; c++) {
    for (let i = 0; i < 20; i++) $defs[`C${c}_${i}`] = { anyOf: [{ $ref: `#/$defs/C${c}_${i + 1}` }, { $ref: `#/$defs/C${c}_${i + 1}` }] };
    $defs[`C${c}_20`] = { type: 'object', properties: { x: { type: 'string' } } };
    properties[`p${c}`] = { $ref: `#/$defs/C${c}_0` };
  }
  return { type: 'object', $defs, properties };
}
const wideProperties: Record<string, unknown> = {};
for (let i = 0; i < 3000; i++) wideProperties[`p${i}`] = { type: 'object', properties: { a: { type: 'string' }, b: { anyOf: [{ type: 'string' }, { type: 'null' }] } } };
for (const [label, schema] of [
  ['50 amplifying anyOf chains', chains(50)],
  ['300 amplifying anyOf chains', chains(300)],
  ['3000 properties, each an object with an anyOf', { type: 'object', properties: wideProperties }],
] as const) {
  const ours = timeMs(() => compileInputSchema(schema), 3);
  const zodAlone = timeMs(() => z.fromJSONSchema(schema as never), 3);
  row(`  ${label} (${Math.round(JSON.stringify(schema).length / 1024)} KiB)`, ours, `zod alone ${fmt(zodAlone, 2)} ms`);
}

import { ConfigError } from '../../util/errors.js';
import type { CodeRunRequest } from '../types.js';

/** Globals the runtime installs itself. */
const RESERVED = new Set(['console', 'ToolCallError', 'globalThis']);

/**
 * Checks a request's shape: a malformed request is the host's bug, so it throws rather than resolving
 * as a program failure. Names are data: any string is a valid function name.
 *
 * @throws {ConfigError} naming the field at fault.
 */
export function checkRequest(request: CodeRunRequest): void {
  const fail = (option: string, expected: string, received: unknown): never => {
    throw new ConfigError('run', option, expected, received);
  };
  if (typeof request !== 'object' || request === null) fail('request', 'an object', request);
  if (typeof request.program !== 'string') fail('program', 'a string', request.program);
  if (request.signal !== undefined && !(request.signal instanceof AbortSignal)) fail('signal', 'an AbortSignal', request.signal);
  if (!Array.isArray(request.bindings)) fail('bindings', 'an array of { global, functions }', request.bindings);
  const globals = new Set<string>();
  request.bindings.forEach((binding, at) => {
    if (typeof binding !== 'object' || binding === null) fail(`bindings[${at}]`, 'an object', binding);
    const { global, functions } = binding;
    if (typeof global !== 'string' || global.length === 0 || RESERVED.has(global) || globals.has(global)) {
      fail(`bindings[${at}].global`, 'a non-empty string, unique, and not console, ToolCallError or globalThis', global);
    }
    globals.add(global);
    if (typeof functions !== 'object' || functions === null) fail(`bindings[${at}].functions`, 'an object of functions', functions);
    for (const name of Object.keys(functions)) {
      if (typeof functions[name] !== 'function') fail(`bindings[${at}].functions[${JSON.stringify(name)}]`, 'a function', functions[name]);
    }
  });
}

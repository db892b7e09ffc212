/**
 * Runs inside QuickJS before the program, as a function of the host's capabilities. It builds the
 * binding namespaces, `console` and `ToolCallError`, and returns `[serialize, describe]`: the function
 * that turns the program's completion value into JSON, and the one that describes a thrown value as
 * capped JSON. It captures every intrinsic it uses first, so a program that replaces
 * `JSON` or `Object.prototype` methods only breaks itself; the host checks whatever crosses anyway.
 *
 * - `hostCall(global, name, json, chars, resolve, reject)` starts a host call (`chars` is the length of
 *   `json`, which the host checks against its limits before copying the text out); the host settles it
 *   by calling `resolve` with the function's JSON result, or `reject` with `{ name, message, code }`.
 * - `hostLog(text)` records one line of console output.
 * - `shapesJson` is `[[global, [name, ...]], ...]` as JSON.
 * - `maxValueChars` bounds the completion value's JSON.
 * - `maxLogChars` bounds console output: a longer line is cut before it crosses (the host stops the run).
 */
export const PRELUDE = String.raw`(function (hostCall, hostLog, shapesJson, maxValueChars, maxLogChars) {
  'use strict';
  const { stringify, parse } = JSON;
  const { defineProperty, create, freeze } = Object;
  const apply = Reflect.apply;
  const slice = String.prototype.slice;
  const join = Array.prototype.join;
  const map = Array.prototype.map;
  const PromiseBase = Promise;
  const then = Promise.prototype.then;
  const ErrorBase = Error;
  const TypeErrorBase = TypeError;
  const StringBase = String;
  // A binding may be named like any global ('undefined', 'Infinity', 'Promise'…): only what is captured here is used.
  const UNDEFINED = void 0;
  const INFINITY = 1 / 0;

  class ToolCallError extends ErrorBase {
    constructor(message, code, tool) {
      super(message);
      defineProperty(this, 'name', { value: 'ToolCallError', writable: true, configurable: true });
      this.code = code;
      this.tool = tool;
    }
  }
  defineProperty(globalThis, 'ToolCallError', { value: ToolCallError });

  const constant = (value) => ({ value, enumerable: true });
  for (const [global, names] of parse(shapesJson)) {
    const namespace = create(null);
    for (const name of names) {
      const tool = global + '.' + name;
      const call = function (args) {
        let json;
        try {
          json = stringify(args === UNDEFINED ? {} : args, strict);
        } catch (error) {
          return PromiseBase.reject(new ToolCallError(tool + ': the arguments are not JSON (' + error.message + ')', 'invalid_arguments', tool));
        }
        if (json === UNDEFINED) {
          return PromiseBase.reject(new ToolCallError(tool + ': the arguments are not JSON', 'invalid_arguments', tool));
        }
        // Where the program made the call: the stack a failure reports, so the model sees its own line.
        const site = new ErrorBase();
        let settle;
        const settled = new PromiseBase((resolve, reject) => {
          settle = [resolve, reject];
        });
        // (Called outside the executor, which would turn an interrupt of the program into a rejection.)
        // (A primitive string's length is its own: no getter a program installs can change it.)
        if (settle !== UNDEFINED) hostCall(global, name, json, json.length, settle[0], settle[1]);
        return apply(then, settled, [
          (result) => (result === UNDEFINED ? UNDEFINED : parse(result)),
          (error) => {
            const failure = new ToolCallError(error.message, error.code === UNDEFINED ? error.name : error.code, tool);
            defineProperty(failure, 'stack', { value: site.stack, writable: true, configurable: true });
            throw failure;
          },
        ]);
      };
      defineProperty(call, 'name', { value: name });
      defineProperty(namespace, name, constant(freeze(call)));
    }
    defineProperty(globalThis, global, { value: freeze(namespace), configurable: false, writable: false });
  }

  const show = (value) => {
    if (typeof value === 'string') return value;
    // NaN and Infinity as themselves (JSON would print null), a symbol without throwing.
    if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'symbol') return StringBase(value);
    try {
      if (value instanceof ErrorBase) return StringBase(value); // 'TypeError: …', not its JSON '{}'
      const json = stringify(value);
      if (json !== UNDEFINED) return json;
    } catch {}
    try {
      return StringBase(value);
    } catch {
      return '[' + typeof value + ']';
    }
  };
  const logger = (prefix) => (...values) => {
    const line = prefix + apply(join, apply(map, values, [show]), [' ']);
    hostLog(line.length > maxLogChars ? apply(slice, line, [0, maxLogChars + 1]) : line);
  };
  defineProperty(globalThis, 'console', {
    value: freeze({
      log: logger(''), info: logger(''), debug: logger(''), warn: logger('[warn] '), error: logger('[error] '),
    }),
  });

  const strict = function (key, value) {
    switch (typeof value) {
      case 'function': case 'symbol': case 'bigint':
        throw new TypeErrorBase('a ' + typeof value + (key === '' ? '' : ' (at key ' + stringify(key) + ')') + ' has no JSON form');
      case 'number':
        if (value !== value || value === INFINITY || value === -INFINITY) {
          throw new TypeErrorBase((key === '' ? 'the number ' : 'the number at key ' + stringify(key) + ', ') + value + ', has no JSON form');
        }
    }
    return value;
  };
  // The completion value as JSON: undefined when there is none, null when it is too long.
  const serialize = (value) => {
    if (value === UNDEFINED) return UNDEFINED;
    const json = stringify(value, strict);
    return json.length > maxValueChars ? null : json;
  };

  // A thrown value, described as JSON for the host with every string in it capped: nothing the program
  // controls crosses at full size (a huge message copied out whole could exhaust the worker's heap).
  const maxMessageChars = maxValueChars < 10000 ? maxValueChars : 10000;
  const capped = (value, max) => {
    const text = StringBase(value);
    return text.length > max ? apply(slice, text, [0, max]) + '…' : text;
  };
  const describe = (thrown) => {
    try {
      if (typeof thrown === 'object' && thrown !== null && 'message' in thrown && ('name' in thrown || 'stack' in thrown)) {
        return stringify({
          name: capped(thrown.name, 200),
          message: capped(thrown.message, maxMessageChars),
          stack: typeof thrown.stack === 'string' ? capped(thrown.stack, 4000) : UNDEFINED,
          code: typeof thrown.code === 'string' ? capped(thrown.code, 100) : UNDEFINED,
          lineNumber: typeof thrown.lineNumber === 'number' ? thrown.lineNumber : UNDEFINED,
          fileName: typeof thrown.fileName === 'string' ? capped(thrown.fileName, 100) : UNDEFINED,
        });
      }
      return stringify({ value: typeof thrown === 'string' ? stringify(capped(thrown, maxMessageChars)) : capped(show(thrown), maxMessageChars) });
    } catch {
      return stringify({ value: '[a value that cannot be described]' });
    }
  };
  return [serialize, describe];
})`;

/**
 * Arguments as data the pipeline owns. A call's arguments are read once, into a deep-frozen copy, at
 * the moment they are decided — when intake takes the call in, and when a policy rewrites them — so
 * nothing the caller, a policy or an approver does with its own objects afterwards (the AI SDK keeps
 * the `input` it emitted in its history; a policy may keep a reference) changes what the body runs with.
 */

/**
 * The arguments as JSON data the pipeline owns, deep-frozen: a JSON string parsed (blank means `{}`,
 * as providers send for tools without parameters), anything else copied the way `JSON.stringify`
 * reads it (own enumerable string keys, `toJSON` honoured, `undefined` and functions dropped from
 * objects, non-finite numbers as `null`).
 *
 * @throws {SyntaxError} for a string that is not JSON.
 * @throws {TypeError} for a value without a JSON form (a BigInt, a cycle, a getter that throws).
 */
export function snapshotArgs(raw: unknown): unknown {
  if (typeof raw === 'string') return deepFreeze(raw.trim() === '' ? {} : JSON.parse(raw));
  return snapshotValue(raw);
}

/**
 * A value (not JSON text: a string stays a string) copied as JSON data and deep-frozen, as
 * {@link snapshotArgs} copies a non-string.
 *
 * @throws {TypeError} for a value without a JSON form.
 */
export function snapshotValue(value: unknown): unknown {
  const base = ancestors.length;
  try {
    return copyJson(value, '', base);
  } finally {
    if (ancestors.length !== base) ancestors.length = base; // a throw leaves its path behind (a write to `length` is no cheap store)
  }
}

/**
 * Freezes `value` and every plain object and array reachable from it (descending only into those not
 * frozen yet, so a snapshot's parts are not walked twice). Other objects — class instances a schema's
 * transform made — are left as they are: freezing a typed array throws, and a `Map` stays mutable anyway.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  if (Array.isArray(value)) {
    Object.freeze(value);
    for (const item of value) deepFreeze(item);
    return value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  Object.freeze(value);
  // for-in with an own check, not Object.keys: no array of keys per object (this runs once per call).
  for (const key in value) if (Object.hasOwn(value, key)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/**
 * The objects being copied, outermost first, to detect a cycle. One array for every copy — no array per
 * call, as this runs once per call: a copy is synchronous, so each one's path sits above the paths of
 * the copies it runs inside (a `toJSON` may snapshot a value of its own), from its `base`.
 */
const ancestors: object[] = [];

/** A copy's path: its base in `ancestors` while shallow; past `SHALLOW` levels, a set of the rest. */
type CopyPath = number | Set<object>;

const SHALLOW = 32;

function enter(path: CopyPath, value: object): CopyPath {
  if (typeof path === 'number') {
    if (ancestors.indexOf(value, path) !== -1) throw new TypeError('the arguments hold a cycle');
    if (ancestors.length - path < SHALLOW) {
      ancestors.push(value);
      return path;
    }
    path = new Set(ancestors.slice(path));
  }
  if (path.has(value)) throw new TypeError('the arguments hold a cycle');
  path.add(value);
  return path;
}

function leave(path: CopyPath, value: object): void {
  if (typeof path === 'number') ancestors.pop();
  else path.delete(value);
}

function copyJson(value: unknown, key: string, outer: CopyPath): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null; // -0 as JSON writes it: 0
    case 'bigint':
      throw new TypeError('a BigInt has no JSON form');
    case 'object':
      break;
    default:
      return undefined; // undefined, functions and symbols have no JSON form: dropped, or null in an array
  }
  if (value === null) return null;
  const toJSON: unknown = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return copyJson(toJSON.call(value, key), key, outer);
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  const path = enter(outer, value);
  let copy: unknown[] | Record<string, unknown>;
  if (Array.isArray(value)) {
    copy = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) copy[i] = copyJson(value[i], String(i), path) ?? null;
  } else {
    copy = {};
    for (const name in value) {
      if (!Object.hasOwn(value, name)) continue; // own enumerable keys, as JSON.stringify reads (for-in: no keys array)
      const item = copyJson((value as Record<string, unknown>)[name], name, path);
      if (item === undefined) continue;
      // A key named `__proto__` is data, as JSON.parse makes it, not the prototype.
      if (name === '__proto__') Object.defineProperty(copy, name, { value: item, enumerable: true, writable: true, configurable: true });
      else copy[name] = item;
    }
  }
  leave(path, value);
  return Object.freeze(copy);
}

/**
 * Makes `instanceof` of a toolstream class hold across copies of the library in one process: its ESM
 * and CJS builds (the dual-package hazard: an app importing `toolstream` while a dependency requires
 * `toolstream/anthropic` has two of each class), or two installed versions. Instances carry a
 * registered symbol (`Symbol.for`), and the class's `Symbol.hasInstance` looks for it. Reading the
 * brand never throws: a hostile value (a Proxy whose traps throw) is simply not an instance.
 * A subclass keeps ordinary `instanceof` semantics. Call it in the class's static block.
 *
 * @example
 * ```ts
 * export class IncompleteArguments {
 *   static {
 *     brand(this, 'IncompleteArguments');
 *   }
 * }
 * ```
 */
export function brand(target: abstract new (...args: never[]) => unknown, name: string): void {
  const mark = Symbol.for(`toolstream.${name}`);
  Object.defineProperty(target.prototype, mark, { value: true });
  Object.defineProperty(target, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (this !== target) return Function.prototype[Symbol.hasInstance].call(this, value);
      try {
        return (typeof value === 'object' || typeof value === 'function') && value !== null && (value as Record<symbol, unknown>)[mark] === true;
      } catch {
        return false;
      }
    },
  });
}

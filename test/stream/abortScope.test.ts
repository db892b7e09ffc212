import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Abort } from '../../src/stream/abortScope.js';

/** Counts the AbortControllers made while a test runs: the scope must make one only when asked. */
const RealController = globalThis.AbortController;
let controllersMade = 0;
beforeEach(() => {
  controllersMade = 0;
  globalThis.AbortController = class extends RealController {
    constructor() {
      super();
      controllersMade++;
    }
  };
});
afterEach(() => {
  globalThis.AbortController = RealController;
});

describe('Abort: one abort scope', () => {
  it('makes no AbortController for work that never reads its signal, aborted or not', () => {
    const never = new Abort();
    never.onAbort(() => undefined)();
    const aborted = new Abort();
    aborted.onAbort(() => undefined);
    aborted.abort('stop');
    expect(aborted.aborted).toBe(true);
    expect(controllersMade).toBe(0);
  });

  it('makes one signal, on first read, and keeps it', () => {
    const scope = new Abort();
    const signal = scope.signal;
    expect(scope.signal).toBe(signal);
    expect(controllersMade).toBe(1);
    expect(signal.aborted).toBe(false);
    scope.abort('why');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('why');
  });

  it('a signal first read after the abort is already aborted, with the same reason', () => {
    const scope = new Abort();
    const reason = new DOMException('no decision within 5 ms', 'TimeoutError');
    scope.abort(reason);
    expect(scope.signal.aborted).toBe(true);
    expect(scope.signal.reason).toBe(reason);
  });

  it('the first abort wins: its reason stays, later aborts do nothing and return false', () => {
    const scope = new Abort();
    let heard = 0;
    scope.onAbort(() => heard++);
    expect(scope.reason).toBeUndefined();
    expect(scope.abort('first')).toBe(true);
    expect(scope.abort('second')).toBe(false);
    expect(scope.reason).toBe('first');
    expect(scope.signal.reason).toBe('first');
    expect(heard).toBe(1);
  });

  it('aborts the signal first, then calls the listeners in the order they were added', () => {
    const scope = new Abort();
    const order: string[] = [];
    scope.signal.addEventListener('abort', () => order.push('signal'));
    scope.onAbort(() => order.push('a'));
    scope.onAbort(() => order.push('b'));
    scope.abort('x');
    expect(order).toEqual(['signal', 'a', 'b']);
  });

  it('a listener added after the abort is called at once; an unregistered one never', () => {
    const scope = new Abort();
    let unregistered = 0;
    scope.onAbort(() => unregistered++)();
    scope.abort('x');
    let late = 0;
    const unlisten = scope.onAbort(() => late++);
    expect(late).toBe(1);
    unlisten();
    expect(unregistered).toBe(0);
  });

  it('calls every listener registered when it aborted, even one an earlier listener removes', () => {
    const scope = new Abort();
    const heard: string[] = [];
    let unlistenB: () => void = () => undefined;
    scope.onAbort(() => {
      heard.push('a');
      unlistenB();
    });
    unlistenB = scope.onAbort(() => heard.push('b'));
    scope.abort('x');
    expect(heard).toEqual(['a', 'b']);
  });

  it('the same listener added twice is called once', () => {
    const scope = new Abort();
    let heard = 0;
    const listener = () => heard++;
    scope.onAbort(listener);
    scope.onAbort(listener);
    scope.abort('x');
    expect(heard).toBe(1);
  });
});

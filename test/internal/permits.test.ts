import { describe, expect, it } from 'vitest';
import { Permits } from '../../src/tool/schedule/permits.js';

describe('Permits', () => {
  it('hands a released permit to the oldest live waiter, skipping withdrawn ones, and frees it when none is left', () => {
    const permits = new Permits(1);
    const granted: string[] = [];
    expect(permits.tryAcquire('k')).toBe(true);
    const a = () => granted.push('a');
    const b = () => granted.push('b');
    const c = () => granted.push('c');
    permits.wait('k', a);
    permits.wait('k', b);
    permits.wait('k', c);
    expect(permits.withdraw('k', a)).toBe(true);
    expect(permits.withdraw('k', c)).toBe(true);
    expect(permits.withdraw('k', c)).toBe(false);
    expect(permits.waiting('k')).toBe(1);
    permits.release('k'); // to b, past withdrawn a; c behind it is withdrawn too
    expect(granted).toEqual(['b']);
    expect(permits.waiting('k')).toBe(0);
    permits.release('k'); // nobody waits: the permit is free
    expect(permits.active('k')).toBe(0);
    expect(permits.tryAcquire('k')).toBe(true);
  });

  it('keeps keys apart', () => {
    const permits = new Permits(1);
    expect(permits.tryAcquire('x')).toBe(true);
    expect(permits.tryAcquire('y')).toBe(true);
    expect(permits.tryAcquire('x')).toBe(false);
  });
});

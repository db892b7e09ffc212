import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { awaitEach } from '../../src/stream/awaitEach.js';
import { deferred } from '../support/deferred.js';
import { notifications } from '../support/notifications.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const record = <T>(source: Subject<T>, gate: (value: T) => PromiseLike<void> | void) => notifications(source.pipe(awaitEach(gate)));

describe('awaitEach', () => {
  it('passes values in the order their gates settle; completion waits for the last gate', async () => {
    const source = new Subject<number>();
    const gates = [deferred(), deferred()];
    const seen = record(source, (value) => gates[value]?.promise);
    source.next(0);
    source.next(1);
    source.next(2); // no gate: at once
    source.complete();
    gates[1]!.resolve();
    await tick();
    expect(seen).toEqual(['next 2', 'next 1']);
    gates[0]!.resolve();
    await tick();
    expect(seen).toEqual(['next 2', 'next 1', 'next 0', 'complete']);
  });

  it('a source error waits for the gates in flight, then errors', async () => {
    const source = new Subject<number>();
    const gate = deferred();
    const seen = record(source, () => gate.promise);
    source.next(0);
    source.error('boom');
    await tick();
    expect(seen).toEqual([]);
    gate.resolve();
    await tick();
    expect(seen).toEqual(['next 0', 'error boom']);
  });

  it('a rejected gate wins over the source end, after the other gates and the source end', async () => {
    const source = new Subject<number>();
    const gates = [deferred(), deferred()];
    const seen = record(source, (value) => gates[value]!.promise);
    source.next(0);
    source.next(1);
    gates[0]!.reject('gate failed');
    await tick();
    expect(seen).toEqual([]);
    source.error('boom');
    await tick();
    expect(seen).toEqual([]);
    gates[1]!.resolve(); // settles, but its value is not passed on once a gate failed
    await tick();
    expect(seen).toEqual(['error gate failed']);
  });

  it('a gate that throws counts as a failed gate', async () => {
    const source = new Subject<number>();
    const seen = record(source, () => {
      throw 'thrown';
    });
    source.next(0);
    expect(seen).toEqual([]);
    source.complete();
    expect(seen).toEqual(['error thrown']);
  });
});

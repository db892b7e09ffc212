import { Observable, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SourceReader, type Source, type SourceHandlers, type SourceReaderOptions } from '../../src/stream/sourceReader.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A reader whose handlers log what they get; `onNext` may act on the reader from inside a handler. */
function read<T>(source: Source<T>, options?: SourceReaderOptions, onNext?: (item: T, reader: SourceReader<T>) => void) {
  const log: unknown[] = [];
  const handlers: SourceHandlers<T> = {
    next: (item) => {
      log.push(item);
      onNext?.(item, reader);
    },
    complete: () => log.push('complete'),
    error: (error) => log.push({ error }),
  };
  const reader: SourceReader<T> = new SourceReader(source, handlers, options);
  return { reader, log };
}

/** An async iterable whose steps are settled by hand, counting next() and return() calls. */
function manualIterable<T>() {
  const calls = { next: 0, return: 0 };
  const pending: ((step: IteratorResult<T>) => void)[] = [];
  const failing: ((error: unknown) => void)[] = [];
  const iterable: AsyncIterable<T> = {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        calls.next++;
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          pending.push(resolve);
          failing.push(reject);
        });
      },
      return: async () => (calls.return++, { value: undefined, done: true }),
    }),
  };
  const settle = (step: IteratorResult<T>) => (failing.shift(), pending.shift()!(step));
  return {
    iterable,
    calls,
    push: (value: T) => settle({ value, done: false }),
    end: () => settle({ value: undefined, done: true }),
    fail: (error: unknown) => (pending.shift(), failing.shift()!(error)),
  };
}

function iterableOf<T>(items: readonly T[], counts = { next: 0, return: 0 }): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => {
      let i = 0;
      return {
        next: async () => (counts.next++, i < items.length ? { value: items[i++]!, done: false } : { value: undefined, done: true }),
        return: async () => (counts.return++, { value: undefined, done: true }),
      };
    },
  };
}

describe('SourceReader: Observable', () => {
  it('delivers items, then the end', () => {
    const source = new Subject<number>();
    const { reader, log } = read(source);
    reader.start();
    source.next(1);
    source.next(2);
    source.complete();
    expect(log).toEqual([1, 2, 'complete']);
  });

  it('delivers a failure', () => {
    const source = new Subject<number>();
    const { reader, log } = read(source);
    reader.start();
    source.error('boom');
    expect(log).toEqual([{ error: 'boom' }]);
  });

  it('stop() unsubscribes; nothing is delivered afterwards', () => {
    const source = new Subject<number>();
    const { reader, log } = read(source);
    reader.start();
    source.next(1);
    reader.stop();
    expect(source.observed).toBe(false);
    source.next(2);
    source.complete();
    expect(log).toEqual([1]);
  });

  it('detach() unsubscribes too', () => {
    const source = new Subject<number>();
    const { reader, log } = read(source);
    reader.start();
    reader.detach();
    expect(source.observed).toBe(false);
    source.next(1);
    expect(log).toEqual([]);
  });

  it.each(['stop', 'detach'] as const)('%s() from a handler while a synchronous source is being subscribed unsubscribes it at once', (how) => {
    let emitted = 0;
    let tornDown = false;
    const source = new Observable<number>((subscriber) => {
      for (let i = 1; i <= 3; i++) {
        emitted++;
        subscriber.next(i);
      }
      return () => (tornDown = true); // never completes: only unsubscribing tears it down
    });
    const { reader, log } = read(source, undefined, (item, r) => item === 1 && r[how]());
    reader.start();
    expect(log).toEqual([1]); // 2 and 3 are dropped
    expect(emitted).toBe(3);
    expect(tornDown).toBe(true);
  });
});

describe('SourceReader: async iterable', () => {
  it('delivers items in order, then the end, and does not call return() on an iterator that finished', async () => {
    const counts = { next: 0, return: 0 };
    const { reader, log } = read(iterableOf([1, 2, 3], counts));
    reader.start();
    await tick();
    expect(log).toEqual([1, 2, 3, 'complete']);
    reader.stop();
    await tick();
    expect(counts).toEqual({ next: 4, return: 0 });
  });

  it('delivers a failure, and does not call return() on an iterator that failed', async () => {
    const source = manualIterable<number>();
    const { reader, log } = read(source.iterable);
    reader.start();
    source.push(1);
    await tick();
    source.fail('boom');
    await tick();
    reader.stop();
    await tick();
    expect(log).toEqual([1, { error: 'boom' }]);
    expect(source.calls.return).toBe(0);
  });

  it('stop() calls return() (a microtask later), pulls no more, and drops the late item', async () => {
    const source = manualIterable<number>();
    const { reader, log } = read(source.iterable);
    reader.start();
    expect(source.calls.next).toBe(1); // the first read starts at once
    reader.stop();
    expect(source.calls.return).toBe(0); // deferred
    await Promise.resolve();
    expect(source.calls.return).toBe(1);
    source.push(1); // the read that was pending
    await tick();
    expect(log).toEqual([]);
    expect(source.calls.next).toBe(1);
    reader.stop();
    await tick();
    expect(source.calls.return).toBe(1); // once
  });

  it('with stopSynchronously, stop() calls return() within itself', () => {
    const source = manualIterable<number>();
    const { reader } = read(source.iterable, { stopSynchronously: true });
    reader.start();
    reader.stop();
    expect(source.calls.return).toBe(1);
  });

  it('a handler that stops the reader ends the pulling at once', async () => {
    const counts = { next: 0, return: 0 };
    const { reader, log } = read(iterableOf([1, 2, 3], counts), undefined, (item, r) => item === 1 && r.stop());
    reader.start();
    await tick();
    expect(log).toEqual([1]);
    expect(counts).toEqual({ next: 1, return: 1 });
  });

  it('detach() delivers nothing more, pulls no more (the pending pull is let settle), and never calls return()', async () => {
    const source = manualIterable<number>();
    const { reader, log } = read(source.iterable);
    reader.start();
    source.push(1);
    await tick();
    reader.detach();
    source.push(2); // settles the pull pending at detach(); its item is dropped
    await tick();
    reader.stop(); // the adapter's teardown, after detaching: still no return()
    await tick();
    expect(log).toEqual([1]);
    expect(source.calls).toEqual({ next: 2, return: 0 }); // no pull after the pending one
  });

  it('detach() ignores a later failure of the iterable', async () => {
    const source = manualIterable<number>();
    const { reader, log } = read(source.iterable);
    reader.start();
    reader.detach();
    source.fail('boom');
    await tick();
    expect(log).toEqual([]);
    expect(source.calls.return).toBe(0);
  });

  it('an iterable whose [Symbol.asyncIterator]() throws fails the source', async () => {
    const failure = new Error('no iterator');
    const source: AsyncIterable<number> = {
      [Symbol.asyncIterator]: () => {
        throw failure;
      },
    };
    const { reader, log } = read(source);
    reader.start();
    expect(log).toEqual([{ error: failure }]);
    expect(() => reader.stop()).not.toThrow();
    await tick();
  });

  it('a handler that throws fails the source; the source is still open, so stop() calls its return()', async () => {
    const counts = { next: 0, return: 0 };
    const failure = new Error('hostile item');
    const { reader, log } = read(iterableOf([1, 2], counts), undefined, () => {
      throw failure;
    });
    reader.start();
    await tick();
    expect(log).toEqual([1, { error: failure }]);
    reader.stop();
    await tick();
    expect(counts).toEqual({ next: 1, return: 1 });
  });

  it.each([false, true])('a return() that throws or rejects is ignored (stopSynchronously: %s)', async (stopSynchronously) => {
    for (const misbehave of [
      () => {
        throw new Error('sync');
      },
      () => Promise.reject(new Error('async')),
    ]) {
      const iterable: AsyncIterable<number> = {
        [Symbol.asyncIterator]: () => ({ next: () => new Promise<never>(() => undefined), return: misbehave }),
      };
      const { reader, log } = read(iterable, { stopSynchronously });
      reader.start();
      expect(() => reader.stop()).not.toThrow();
      await tick();
      expect(log).toEqual([]);
    }
  });

  it('start() reads at most once, and not at all after stop()', async () => {
    const counts = { next: 0, return: 0 };
    const { reader, log } = read(iterableOf([1], counts));
    reader.stop();
    reader.start();
    await tick();
    expect(log).toEqual([]);
    expect(counts).toEqual({ next: 0, return: 0 });
  });
});

describe('SourceReader: ReadableStream', () => {
  it('delivers chunks, then the end', async () => {
    const stream = new ReadableStream<number>({
      start(controller) {
        controller.enqueue(1);
        controller.enqueue(2);
        controller.close();
      },
    });
    const { reader, log } = read(stream);
    reader.start();
    await tick();
    expect(log).toEqual([1, 2, 'complete']);
  });

  it('delivers a failure', async () => {
    let controller!: ReadableStreamDefaultController<number>;
    const stream = new ReadableStream<number>({
      start(c) {
        controller = c;
      },
    });
    const { reader, log } = read(stream);
    reader.start();
    controller.enqueue(1);
    await tick();
    controller.error('boom');
    await tick();
    expect(log).toEqual([1, { error: 'boom' }]);
  });

  it.each([false, true])(
    'stop() cancels the stream through its reader at once, even while a read is pending (stopSynchronously: %s)',
    async (stopSynchronously) => {
      let cancelled: unknown = 'not cancelled';
      let enqueue!: (chunk: number) => void;
      const stream = new ReadableStream<number>({
        start(controller) {
          enqueue = (chunk) => controller.enqueue(chunk);
        },
        cancel(reason) {
          cancelled = reason;
        },
      });
      const { reader, log } = read(stream, { stopSynchronously });
      reader.start();
      await tick(); // the read is pending: the stream has nothing yet
      reader.stop();
      await tick();
      expect(cancelled).toBeUndefined();
      expect(() => enqueue(1)).toThrow(); // the stream is closed
      expect(log).toEqual([]);
    },
  );

  it('is read through its reader, not its async iterator', async () => {
    const stream = new ReadableStream<number>({
      start(controller) {
        controller.enqueue(1);
        controller.close();
      },
    });
    Object.defineProperty(stream, Symbol.asyncIterator, {
      value: () => {
        throw new Error('the async iterator was used');
      },
    });
    const { reader, log } = read(stream);
    reader.start();
    await tick();
    expect(log).toEqual([1, 'complete']);
  });

  it('a locked stream fails the source', () => {
    const stream = new ReadableStream<number>();
    stream.getReader();
    const { reader, log } = read(stream);
    reader.start();
    expect(log).toEqual([{ error: expect.any(TypeError) }]);
    expect(() => reader.stop()).not.toThrow();
  });

  it('detach() reads the stream on to its end without cancelling it', async () => {
    let cancelled = false;
    let controller!: ReadableStreamDefaultController<number>;
    const stream = new ReadableStream<number>({
      start(c) {
        controller = c;
      },
      cancel() {
        cancelled = true;
      },
    });
    const { reader, log } = read(stream);
    reader.start();
    controller.enqueue(1);
    await tick();
    reader.detach();
    controller.enqueue(2);
    controller.enqueue(3);
    await tick();
    reader.stop();
    controller.close();
    await tick();
    expect(log).toEqual([1]);
    expect(cancelled).toBe(false);
    expect(controller.desiredSize).toBe(0); // closed, and everything was read
  });
});

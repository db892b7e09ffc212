import { Subscriber, type Observable, type Observer, type Subscription } from 'rxjs';

/**
 * Subscribe `observer` to `source` as a child of `parent`: when `parent` unsubscribes, the child's
 * `closed` flag flips at once, so even a synchronous source (`from(array)`, a generator) stops in the
 * middle of its loop.
 *
 * `source.subscribe(observer)` would not do this: the subscription it returns only exists after a
 * synchronous source has already emitted everything. RxJS's own operators chain a `Subscriber` the same
 * way (`createOperatorSubscriber`, internal in v7); the `Subscriber` constructor is marked deprecated
 * only because v8 makes it internal.
 */
export function subscribeAsChild<T>(
  parent: Subscription,
  source: Observable<T>,
  observer: Observer<T>,
): Subscription {
  const child = new Subscriber<T>(observer);
  parent.add(child);
  source.subscribe(child);
  return child;
}

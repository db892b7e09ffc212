import type { Observable } from 'rxjs';

/**
 * Subscribes and writes each notification as a line (`next 1`, `error boom`, `complete`) into the
 * returned array, which fills as the observable emits: for ordering checks outside virtual time.
 */
export function notifications(observable: Observable<unknown>): string[] {
  const seen: string[] = [];
  observable.subscribe({
    next: (value) => seen.push(`next ${String(value)}`),
    error: (error: unknown) => seen.push(`error ${String(error)}`),
    complete: () => seen.push('complete'),
  });
  return seen;
}

// Something work can be stopped by. (A leaf: imports only from types/.)

/** Something work can be stopped by: whether it was, why, and a way to hear when it is. */
export interface AbortScope {
  readonly aborted: boolean;
  readonly reason: unknown;
  /** Calls `listener` when the scope aborts (now, if it has); returns the function that unregisters it. */
  onAbort(listener: () => void): () => void;
}

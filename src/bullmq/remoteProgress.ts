import type { RedisClient } from './fleetRedis.js';
import type { JsonValue } from '../types/json.js';
import type { OutcomeSigner } from './outcomeSigner.js';

/** The most progress reports one job sends; later ones are dropped (the agent's budget bounds them again). */
export const MAX_PROGRESS_REPORTS = 1000;

/** A progress notice on the items channel: `p:<job id>` (job ids have no `:`), apart from item notices. */
export const progressNotice = (jobId: string): string => `p:${jobId}`;

/** The job id of a progress notice, or `undefined` for an item notice. */
export function progressNoticeOf(message: string): string | undefined {
  return message.startsWith('p:') ? message.slice(2) : undefined;
}

/**
 * A worker body's `ctx.progress`, sent to the agent: each report is an entry of the job's progress
 * stream (kept as long as the job), signed with its sequence number, and a notice, written in order on
 * one connection. `flushed()` resolves once every report is in Redis — before the job completes, so the
 * agent's last read finds them.
 */
export class ProgressSender {
  readonly #writes: Promise<unknown>[] = [];
  #sent = 0;

  constructor(
    private readonly commands: RedisClient,
    private readonly key: string,
    private readonly channel: string,
    private readonly signer: OutcomeSigner,
    private readonly keepMs: number,
  ) {}

  readonly report = (value: JsonValue): void => {
    if (this.#sent >= MAX_PROGRESS_REPORTS) return;
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch {
      return; // no JSON form (a cycle, a BigInt): nothing to send, as the agent's own budget would note
    }
    if (text === undefined) return;
    const mac = this.signer.entry('progress', this.#sent++, text);
    this.#writes.push(
      this.commands.multi().xadd(this.key, '*', 'v', text, 'm', mac).pexpire(this.key, this.keepMs).publish(this.channel, progressNotice(this.signer.jobId)).exec().catch(() => undefined),
    );
  };

  /** How many reports were sent. */
  get sent(): number {
    return this.#sent;
  }

  async flushed(): Promise<void> {
    await Promise.all(this.#writes);
  }
}

/**
 * The agent's side: reads the job's progress stream after the last entry it saw (so a report is passed
 * on once however often it is woken) and hands each to the call's own `ctx.progress`, in order. Woken by
 * notices; `drain()` reads once more, for whatever the notices missed, before the call's result. A
 * report is passed on only when it is signed for the job as the next in sequence: one that does not
 * verify (written by something without the secret, replayed, or duplicated) is dropped.
 */
export class ProgressRelay {
  #last = '-';
  /** How many reports were passed on: the sequence number the next one must carry. */
  #accepted = 0;
  #reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly commands: RedisClient,
    private readonly key: string,
    private readonly signer: OutcomeSigner,
    private readonly report: (value: JsonValue) => void,
  ) {}

  /** A notice came: read what is new. */
  wake(): void {
    this.#reading = this.#reading.then(() => this.#read()).catch(() => undefined);
  }

  /** Reads everything sent so far; resolves once it is passed on. */
  drain(): Promise<void> {
    this.wake();
    return this.#reading;
  }

  async #read(): Promise<void> {
    for (;;) {
      const entries = await this.commands.xrange(this.key, this.#last === '-' ? '-' : `(${this.#last}`, '+', 'COUNT', 500);
      for (const [id, fields] of entries) {
        this.#last = id;
        const [, text, , mac] = fields;
        if (text === undefined || !this.signer.verifiesEntry('progress', this.#accepted, text, mac)) continue;
        this.#accepted++;
        this.report(JSON.parse(text) as JsonValue);
      }
      if (entries.length < 500) return;
    }
  }
}

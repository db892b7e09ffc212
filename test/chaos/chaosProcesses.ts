/**
 * The chaos suite's child processes — agents and workers, bundled once (`buildChild`) and run with
 * plain node — and the pools that keep a number of them alive while faults are injected: a killed one
 * is replaced after a while, a stalled one (SIGSTOP) is continued (SIGCONT) when its stall is over.
 * An agent takes commands as JSON lines on stdin and answers each with a JSON line on stdout; a command
 * whose process dies ends `killed`, and one in flight when the process is stopped is told so at once
 * (its driver takes the turn over elsewhere; its reply, if it ever comes, still counts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentCommand } from './agentChild.js';
import type { Random } from './chaosRandom.js';
import type { ResultOutline } from './chaosTools.js';

/** What an agent answered a command. */
export interface AgentReply {
  readonly id: number;
  readonly results?: readonly ResultOutline[];
  /** The error's code (`turn_leased`, `lease_lost`, …), when the command failed. */
  readonly error?: string;
}

/** How a command ended: its reply, or its process died first. */
export type CommandEnd = { readonly kind: 'reply'; readonly reply: AgentReply } | { readonly kind: 'killed' };

/** A command sent: how it ends, and a promise that resolves if its process is stopped before that. */
export interface SentCommand {
  readonly end: Promise<CommandEnd>;
  readonly stalled: Promise<void>;
}

/** How long a child may take to say it is ready (node's start on a loaded 2-core machine is well under). */
const READY_MS = 30_000;

/** One child process of a pool. */
export class ChaosProcess {
  state: 'starting' | 'ready' | 'stopped' | 'dead' = 'starting';
  /** Set when the test killed it: any other exit is unexpected. */
  killedByTest = false;
  readonly ready: Promise<void>;
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, { readonly end: (end: CommandEnd) => void; readonly stalled: () => void }>();
  #stderr = '';

  constructor(script: string, config: object) {
    this.#child = spawn(process.execPath, [script, JSON.stringify(config)], { stdio: 'pipe' });
    this.#child.stdin.on('error', () => undefined); // a write to a process that just died
    this.#child.stderr.on('data', (chunk: Buffer) => (this.#stderr = (this.#stderr + chunk.toString()).slice(-4000)));
    this.exited = new Promise((resolve) =>
      this.#child.on('close', (code, signal) => {
        this.state = 'dead';
        for (const { end } of this.#pending.values()) end({ kind: 'killed' });
        this.#pending.clear();
        resolve({ code, signal });
      }),
    );
    this.ready = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`a chaos child did not get ready in ${READY_MS} ms`)), READY_MS);
      void this.exited.then(({ code, signal }) => (clearTimeout(timer), reject(new Error(`a chaos child exited (${signal ?? code}) before it was ready: ${this.#stderr}`))));
      createInterface({ input: this.#child.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as AgentReply & { readonly ready?: true };
        if (message.ready === true) {
          clearTimeout(timer);
          if (this.state === 'starting') this.state = 'ready';
          resolve();
          return;
        }
        const waiter = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        waiter?.end({ kind: 'reply', reply: message });
      });
    });
    this.ready.catch(() => undefined);
  }

  get pid(): number {
    return this.#child.pid!;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** Whether a command is in flight. */
  get busy(): boolean {
    return this.#pending.size > 0;
  }

  send(command: AgentCommand): SentCommand {
    let stalled!: () => void;
    const stalledPromise = new Promise<void>((resolve) => (stalled = resolve));
    const end = new Promise<CommandEnd>((resolve) => {
      if (this.state === 'dead') return resolve({ kind: 'killed' });
      this.#pending.set(command.id, { end: resolve, stalled });
      this.#child.stdin.write(`${JSON.stringify(command)}\n`);
      if (this.state === 'stopped') stalled();
    });
    return { end, stalled: stalledPromise };
  }

  kill(): void {
    this.killedByTest = true;
    this.#child.kill('SIGKILL');
  }

  stop(): void {
    if (this.state !== 'ready') return;
    this.#child.kill('SIGSTOP');
    this.state = 'stopped';
    for (const { stalled } of this.#pending.values()) stalled();
  }

  cont(): void {
    if (this.state !== 'stopped') return;
    this.#child.kill('SIGCONT');
    this.state = 'ready';
  }
}

/** A number of processes of one script and config, kept alive through the faults the test injects. */
export class ProcessPool {
  readonly members = new Set<ChaosProcess>();
  /** Processes that died without the test killing them (a crash is a finding). */
  readonly unexpected: string[] = [];
  /** Every process it started, dead or alive: stopped at the end, whatever happened. */
  readonly #all = new Set<ChaosProcess>();

  constructor(
    readonly name: string,
    private readonly script: string,
    private readonly config: object,
    private readonly size: number,
    private readonly stopping: AbortSignal,
  ) {}

  /** Starts the pool's processes; resolves once they are ready. */
  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.size }, () => this.#spawn()));
  }

  async #spawn(): Promise<void> {
    if (this.stopping.aborted) return;
    const member = new ChaosProcess(this.script, this.config);
    this.members.add(member);
    this.#all.add(member);
    void member.exited.then(({ code, signal }) => {
      this.members.delete(member);
      if (!member.killedByTest && !this.stopping.aborted) {
        this.unexpected.push(`${this.name} ${member.pid} exited by itself (${signal ?? code}): ${member.stderr}`);
        void this.#spawn().catch(() => undefined);
      }
    });
    await member.ready;
  }

  /** The members ready for work (not starting, stopped or dead). */
  ready(): ChaosProcess[] {
    return [...this.members].filter((member) => member.state === 'ready');
  }

  /** A member ready for work, chosen by `random`; waits while none is. */
  async pick(random: Random): Promise<ChaosProcess> {
    for (;;) {
      if (this.stopping.aborted) throw new Error(`${this.name}: the test is stopping`);
      const ready = this.ready();
      if (ready.length > 0) return random.pick(ready);
      await sleep(20);
    }
  }

  /** SIGKILLs `member`; a replacement starts `respawnAfterMs` after it died. */
  kill(member: ChaosProcess, respawnAfterMs: number): void {
    member.kill();
    void member.exited
      .then(() => sleep(respawnAfterMs))
      .then(() => this.#spawn())
      .catch(() => undefined);
  }

  /** SIGSTOPs `member` for `ms`, then SIGCONTs it (unless it died meanwhile). */
  stall(member: ChaosProcess, ms: number): void {
    member.stop();
    setTimeout(() => member.cont(), ms);
  }

  /** SIGKILLs every process it ever started that still runs, and waits for them to be gone. */
  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.#all].map((member) => {
        if (member.state !== 'dead') member.kill();
        return member.exited;
      }),
    );
  }
}

/**
 * An agent process of the chaos suite, bundled once and run with plain node (`chaosProcesses.ts`).
 * `node child.js <config JSON>` ({@link AgentConfig}) opens the journal — a SQLite file (phase 1: local
 * tools), Redis (phase 2: the tools are remote, their bodies run on worker processes) or PostgreSQL
 * (phase 3: local tools) — prints
 * `{"ready":true}`, then takes commands, one JSON line each on stdin, and runs them at once:
 * - `{ id, op: 'run', turn, calls }`: runs the calls as durable turn `turn`;
 * - `{ id, op: 'resume', turn, answers }`: resumes the turn with those answers.
 * For each it prints `{ id, results }` (outlines, in order) or `{ id, error, results? }` (the error's code;
 * for `lease_lost`, what the run had given out). It exits when its stdin closes: the test is gone.
 */
import { createInterface } from 'node:readline';
import { redisJournal, remoteTools } from '../../src/bullmq/index.js';
import { sqliteJournal } from '../../src/durable/sqlite/index.js';
import { postgresJournal } from '../../src/durable/postgres/index.js';
import type { ApprovalResponse, JournalStore, ToolCall, ToolResult } from '../../src/index.js';
import { chaosPipeline, contracts, FLEET_SECRET, localTools, outline } from './chaosTools.js';

/** Where an agent finds its journal, and (phase 2) its fleet. */
export type AgentConfig =
  | { readonly kind: 'sqlite'; readonly path: string; readonly logDir: string }
  | { readonly kind: 'redis'; readonly url: string; readonly journalPrefix: string; readonly fleetPrefix: string; readonly queue: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string; readonly logDir: string };

/** A command of the controller. */
export type AgentCommand =
  | { readonly id: number; readonly op: 'run'; readonly turn: string; readonly calls: readonly ToolCall[] }
  | { readonly id: number; readonly op: 'resume'; readonly turn: string; readonly answers: readonly ApprovalResponse[] };

const config = JSON.parse(process.argv[2]!) as AgentConfig;
/** The journal of the agent's phase. */
function journalOf(where: AgentConfig): JournalStore {
  switch (where.kind) {
    case 'sqlite':
      return sqliteJournal({ path: where.path });
    case 'redis':
      return redisJournal({ connection: where.url, prefix: where.journalPrefix });
    case 'postgres':
      return postgresJournal({ connectionString: where.url }, { schema: where.schema });
  }
}
const journal = journalOf(config);
const remote = config.kind === 'redis' ? remoteTools(contracts, { connection: { url: config.url }, queue: config.queue, prefix: config.fleetPrefix, secret: FLEET_SECRET, reconcileMs: 200 }) : undefined;
const pipeline = chaosPipeline(journal, remote?.tools ?? localTools((config as { logDir: string }).logDir));
const print = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function handle(command: AgentCommand): Promise<void> {
  try {
    const results = command.op === 'run' ? await pipeline.run(command.calls, { turn: command.turn }) : await pipeline.resume(command.turn, { answers: command.answers });
    print({ id: command.id, results: results.map(outline) });
  } catch (error) {
    const { code, results } = error as { code?: unknown; results?: readonly ToolResult[] };
    print({ id: command.id, error: typeof code === 'string' ? code : String(error), ...(results === undefined ? {} : { results: results.map(outline) }) });
  }
}

await journal.read('chaos: connected'); // connected (the file open, the schema made) before the first command
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => void handle(JSON.parse(line) as AgentCommand));
lines.on('close', () => process.exit(0));
print({ ready: true });

// Run as a child process by the no-Redis test: an agent's remote tools, a worker and setFleetLimits,
// all pointed at a closed port (argv[2]). Prints one JSON line per outcome, each with how long it
// took, then closes what it made — and must exit by itself: no ioredis retry loop is left behind.
import { createToolWorker, RemoteToolError, remoteTools, setFleetLimits, type FleetWarning } from '../../../src/bullmq/index.js';
import { createPipeline, implementTool } from '../../../src/index.js';
import { echo } from './contracts.js';

const url = process.argv[2]!;
const secret = 'a secret for the no-Redis test, 32+ bytes';
const connection = { url };
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);
const timed = async (what: string, run: () => Promise<unknown>) => {
  const startedAt = performance.now();
  try {
    const value = await run();
    print({ what, ms: performance.now() - startedAt, value });
  } catch (error) {
    const { code, address, message } = error as RemoteToolError;
    print({ what, ms: performance.now() - startedAt, error: { code, address, message, remote: error instanceof RemoteToolError } });
  }
};

const warnings: FleetWarning[] = [];
const processWarnings: string[] = [];
process.on('warning', (warning) => void processWarnings.push(`${warning.name}: ${warning.message}`));
const worker = createToolWorker({ connection, queue: 'q', secret, tools: [implementTool(echo, ({ text }) => text)] });
// Never asked whether it is ready: it closes all the same, and a process warning says why.
const unasked = createToolWorker({ connection, queue: 'unasked', secret, tools: [] });
const remote = remoteTools([echo], { connection, queue: 'q', secret, onWarning: (warning) => void warnings.push(warning) });
await Promise.all([
  timed('worker.ready', () => worker.ready()),
  timed('call', async () => {
    const [result] = await createPipeline({ tools: remote.tools }).run([{ id: 'a', name: 'echo', args: { text: 'hi' } }]);
    const cause = (result!.error as { cause?: unknown } | undefined)?.cause;
    if (cause instanceof Error) throw cause;
    return result;
  }),
  timed('setFleetLimits', () => setFleetLimits({ connection, queue: 'q', concurrency: 1 })),
]);
await remote.close();
await worker.close();
await unasked.close();
print({ what: 'warnings', value: warnings });
print({ what: 'processWarnings', value: processWarnings });
print({ what: 'closed' });

// Run as a child process by the lifecycle test: a worker and an agent in one process, one call each
// way, then close() on both. The process must then exit by itself: close() leaves no timer, socket
// or listener behind. Prints the call's status.
import { randomUUID } from 'node:crypto';
import { createToolWorker, remoteTools } from '../../../src/bullmq/index.js';
import { createPipeline, implementTool } from '../../../src/index.js';
import { echo, items } from './contracts.js';

const url = process.argv[2]!;
const secret = 'a secret for the exit test, 32+ bytes long';
const prefix = `tsexit-${randomUUID()}`;
const queue = 'exit';
const worker = createToolWorker({
  connection: { url },
  queue,
  prefix,
  secret,
  tools: [
    implementTool(echo, ({ text }) => text),
    implementTool(items, async function* ({ count }) {
      for (let i = 0; i < count; i++) yield i;
    }),
  ],
});
await worker.ready();
const remote = remoteTools([echo, items], { connection: { url }, queue, prefix, secret });
const results = await createPipeline({ tools: remote.tools }).run([
  { id: 'a', name: 'echo', args: { text: 'bye' } },
  { id: 'b', name: 'items', args: { count: 3, gapMs: 0 } },
]);
await remote.close();
await worker.close();
process.stdout.write(results.map((r) => `${r.status}:${JSON.stringify(r.value)}`).join(' '));

// A module Worker (workerd, under miniflare) whose fetch handler runs the cases and answers their lines.
import { runCases } from './cases.js';

export default {
  async fetch() {
    const lines = [];
    await runCases({ print: (line) => lines.push(line) });
    return new Response(lines.join('\n'));
  },
};

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One response of a script: the path the request must be sent to, and the SSE body to answer with. */
export interface ScriptedResponse {
  readonly path: string;
  readonly sse: string;
}

/** A request the server received. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body, parsed as JSON. */
  readonly body: unknown;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>`: the base URL to point an SDK client at. */
  readonly url: string;
  /** Every request so far, in order. */
  readonly requests: readonly ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A model provider on loopback: an HTTP server on an ephemeral port that answers each POST with the
 * next response of `script`, as a real server streams it — `text/event-stream`, one SSE event per
 * write, a pause between them — and records every request (path, headers, JSON body) for the test to
 * check. A request to another path than the script's next one gets a 404, and one past the end of the
 * script a 400 (which the SDKs do not retry), each with an error body in the providers' shape, so a
 * loop that does not stop when the model stops calling tools fails instead of hanging.
 *
 * @example
 * ```ts
 * const server = await startReplayServer([{ path: '/v1/messages', sse }]);
 * const client = new Anthropic({ baseURL: server.url, apiKey: 'test' });
 * // … run the loop …
 * expect(server.requests).toHaveLength(1);
 * await server.close();
 * ```
 */
export async function startReplayServer(script: readonly ScriptedResponse[], pauseMs = 2): Promise<ReplayServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        // kept as text: the test will say so
      }
      const next = script[requests.length];
      requests.push({ method: request.method ?? '', path, headers: request.headers, body });
      const fail = (status: number, message: string) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }));
      };
      if (request.method !== 'POST') return fail(405, `expected a POST, got ${request.method}`);
      if (next === undefined) return fail(400, `the script has ${script.length} responses; request ${requests.length} is one too many`);
      if (next.path !== path) return fail(404, `request ${requests.length} went to ${path}, the script expects ${next.path}`);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      void stream(next.sse, (chunk) => response.write(chunk), pauseMs).then(() => response.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** Writes the SSE text one event at a time (events end at a blank line), pausing between them. */
async function stream(sse: string, write: (chunk: string) => void, pauseMs: number): Promise<void> {
  for (const event of sse.split(/(?<=\n\n)/)) {
    write(event);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** An HTTP response whose SSE body arrives in small chunks that split lines and events, as on a network. */
export function streamedResponse(text: string, chunkSize = 37): Response {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, (offset += chunkSize)));
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

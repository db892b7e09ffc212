import { createServer } from 'node:net';

/** A loopback port nothing listens on (it was free a moment ago): a Redis that is not there. */
export async function closedPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

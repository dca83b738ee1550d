import type { Server, ServerResponse } from 'node:http';

/**
 * Makes `server.close()` finish once the requests in flight are answered. Node
 * closes the connections that are idle when `close()` is called, but a
 * keep-alive connection whose request was still running stays open after its
 * answer until the client drops it (the gateway keeps idle sockets for a
 * minute), and `close()` waits for it. From `close()` on, every answer not yet
 * sent says `Connection: close`, and Node ends its connection once it is sent.
 */
export function closeConnectionsWhenAnswered(server: Server): void {
  const inFlight = new Set<ServerResponse>();
  let closing = false;
  // Added after every other request listener, so it sees each request, direct routes' included.
  server.on('request', (_req, res: ServerResponse) => {
    if (closing) {
      if (!res.headersSent) res.setHeader('connection', 'close');
      return;
    }
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });
  const close = server.close.bind(server);
  server.close = (callback?: (err?: Error) => void) => {
    closing = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
    inFlight.clear();
    return close(callback);
  };
}

import pg from 'pg';

export interface Listener {
  close(): Promise<void>;
}

/**
 * LISTENs on a PostgreSQL channel with a connection of its own and calls
 * `onNotify` for each notification (they arrive at the sender's commit). The
 * connection is re-opened after a failure; callers keep a periodic fallback,
 * since a notification sent while reconnecting is lost.
 */
export async function listen(
  url: string,
  channel: string,
  onNotify: () => void,
  onError: (err: unknown) => void = () => undefined,
  retryMs = 1000,
): Promise<Listener> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name: ${channel}`);
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', () => onNotify());
    c.on('error', (err) => {
      onError(err);
      reopen(c);
    });
    c.on('end', () => reopen(c));
    await c.connect();
    await c.query(`LISTEN ${channel}`);
    client = c;
  };
  const reopen = (failed: pg.Client) => {
    if (closed || client !== failed) return;
    client = undefined;
    retry = setTimeout(() => {
      open().catch((err: unknown) => {
        onError(err);
        if (!closed) retry = setTimeout(() => reopen(failed), retryMs);
      });
    }, retryMs);
  };

  await open();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

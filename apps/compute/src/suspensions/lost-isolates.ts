/**
 * What the platform remembers of the isolates a workspace's runs made the
 * sandbox lose, one record per workspace (docs/compute.md, "Suspended
 * workspaces"). Each loss restarts a worker that other workspaces share.
 */
export interface LostIsolates {
  /** When each loss within the window happened (ISO 8601), oldest first. */
  readonly losses: readonly string[];
  /** Until when none of the workspace's runs starts (ISO 8601); null when it is not suspended. */
  readonly suspendedUntil: string | null;
}

export interface SuspensionPolicy {
  /** Losses within `windowMs` that suspend the workspace; 0 never suspends. */
  readonly after: number;
  readonly windowMs: number;
  /** How long a suspension lasts from the loss that started it. */
  readonly suspendMs: number;
}

/** Losses kept per workspace at most: enough to count any threshold up to this. */
const MAX_KEPT = 1000;

/**
 * The record after one more loss at `at`: losses older than the window are
 * forgotten, and once `policy.after` of them fall within it the workspace is
 * suspended until `suspendMs` after this loss (a suspension already running
 * longer is kept).
 */
export function afterLoss(previous: LostIsolates | undefined, at: Date, policy: SuspensionPolicy): LostIsolates {
  const since = at.getTime() - policy.windowMs;
  const losses = [...(previous?.losses ?? []).filter((t) => Date.parse(t) > since), at.toISOString()].slice(-MAX_KEPT);
  const started = policy.after > 0 && losses.length >= policy.after ? at.getTime() + policy.suspendMs : 0;
  const running = previous?.suspendedUntil ? Date.parse(previous.suspendedUntil) : 0;
  const until = Math.max(started, Number.isNaN(running) ? 0 : running);
  return { losses, suspendedUntil: until > at.getTime() ? new Date(until).toISOString() : null };
}

/** A stored record, or undefined when it is not one (a record written by hand, say): nothing is suspended by it. */
export function parseLostIsolates(text: string): LostIsolates | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { losses, suspendedUntil } = value as Record<string, unknown>;
  if (!Array.isArray(losses) || !losses.every((t): t is string => typeof t === 'string')) return undefined;
  if (suspendedUntil !== null && typeof suspendedUntil !== 'string') return undefined;
  return { losses, suspendedUntil };
}

/** When the suspension of `record` ends, if it is still on at `now`. */
export function suspendedAt(record: LostIsolates | undefined, now: Date): Date | undefined {
  if (!record?.suspendedUntil) return undefined;
  const until = Date.parse(record.suspendedUntil);
  return until > now.getTime() ? new Date(until) : undefined;
}

/** The message a refused run and a refused request carry. */
export function suspensionMessage(until: Date, policy: SuspensionPolicy): string {
  const minutes = Math.max(1, Math.round(policy.windowMs / 60_000));
  return (
    `Function runs of this workspace are suspended until ${until.toISOString()}: ` +
    `its runs made the sandbox lose ${policy.after} isolate${policy.after === 1 ? '' : 's'} ` +
    `within ${minutes} minute${minutes === 1 ? '' : 's'} (memory grown past what its limit can stop).`
  );
}

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
  /**
   * Code that lost an isolate, by functionCodeHash: until when its runs are
   * refused (ISO 8601). The same code would lose one again; other code runs.
   */
  readonly codes: Readonly<Record<string, string>>;
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
 * The record after one more loss at `at`, by code of hash `codeHash`: losses
 * older than the window are forgotten, the code is refused until `suspendMs`
 * after this loss, and once `policy.after` losses fall within the window the
 * whole workspace is suspended until then (a suspension already running
 * longer is kept). A policy whose `after` is 0 refuses nothing.
 */
export function afterLoss(
  previous: LostIsolates | undefined,
  at: Date,
  policy: SuspensionPolicy,
  codeHash: string,
): LostIsolates {
  const now = at.getTime();
  const since = now - policy.windowMs;
  const losses = [...(previous?.losses ?? []).filter((t) => Date.parse(t) > since), at.toISOString()].slice(-MAX_KEPT);
  const refuses = policy.after > 0;
  const started = refuses && losses.length >= policy.after ? now + policy.suspendMs : 0;
  const running = previous?.suspendedUntil ? Date.parse(previous.suspendedUntil) : 0;
  const until = Math.max(started, Number.isNaN(running) ? 0 : running);
  const codes = Object.entries(previous?.codes ?? {}).filter(([hash, t]) => hash !== codeHash && Date.parse(t) > now);
  if (refuses) codes.push([codeHash, new Date(now + policy.suspendMs).toISOString()]);
  return {
    losses,
    suspendedUntil: until > now ? new Date(until).toISOString() : null,
    codes: Object.fromEntries(codes.slice(-MAX_KEPT)),
  };
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
  const { losses, suspendedUntil, codes = {} } = value as Record<string, unknown>;
  if (!Array.isArray(losses) || !losses.every((t): t is string => typeof t === 'string')) return undefined;
  if (suspendedUntil !== null && typeof suspendedUntil !== 'string') return undefined;
  if (typeof codes !== 'object' || codes === null || Array.isArray(codes)) return undefined;
  if (!Object.values(codes).every((t) => typeof t === 'string')) return undefined;
  return { losses, suspendedUntil, codes: codes as Record<string, string> };
}

/** When the suspension of `record` ends, if it is still on at `now`. */
export function suspendedAt(record: LostIsolates | undefined, now: Date): Date | undefined {
  if (!record?.suspendedUntil) return undefined;
  const until = Date.parse(record.suspendedUntil);
  return until > now.getTime() ? new Date(until) : undefined;
}

/**
 * Until when the workspace is on probation at `now`: it lost an isolate within
 * the policy's window, and its runs take one isolate at a time meanwhile
 * (docs/compute.md, "Suspended workspaces"). Undefined when it is not.
 */
export function probationAt(record: LostIsolates | undefined, now: Date, policy: SuspensionPolicy): Date | undefined {
  const last = record?.losses.at(-1);
  if (last === undefined) return undefined;
  const until = Date.parse(last) + policy.windowMs;
  return until > now.getTime() ? new Date(until) : undefined;
}

/** Until when runs of the code of hash `codeHash` are refused, if they are at `now`. */
export function codeRefusedAt(record: LostIsolates | undefined, codeHash: string, now: Date): Date | undefined {
  const at = record?.codes[codeHash];
  if (at === undefined) return undefined;
  const until = Date.parse(at);
  return until > now.getTime() ? new Date(until) : undefined;
}

/** The message of a run refused for its code. */
export function codeRefusalMessage(until: Date, codeHash: string): string {
  return (
    `This code (functionCodeHash ${codeHash.slice(0, 12)}…) made the sandbox lose an isolate: its runs are ` +
    `refused until ${until.toISOString()} (memory grown past what its limit can stop). ` +
    `The workspace's other code runs as usual.`
  );
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

/** The message of a run refused because the workspaces of its workspace's creator are suspended. */
export function creatorSuspensionMessage(until: Date, policy: SuspensionPolicy): string {
  const minutes = Math.max(1, Math.round(policy.windowMs / 60_000));
  return (
    `Function runs of the workspaces this workspace's creator created are suspended until ${until.toISOString()}: ` +
    `runs in their workspaces made the sandbox lose ${policy.after} isolate${policy.after === 1 ? '' : 's'} ` +
    `within ${minutes} minute${minutes === 1 ? '' : 's'} (memory grown past what its limit can stop).`
  );
}

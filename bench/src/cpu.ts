import { readFileSync, readdirSync } from 'node:fs';

/** CPU time (user + system, milliseconds) used so far, per named group of processes. */
export type CpuSample = ReadonlyMap<string, number>;

const TICK_MS = 10; // USER_HZ is 100 on Linux

/**
 * A process's CPU: its own user and system time, and that of its children it
 * has reaped (`cutime`, `cstime`). PostgreSQL's backends come and go: one that
 * exits between two samples moves its time into the postmaster's reaped
 * children's, so the group's sum never goes back (without them a sample could
 * read less than the one before it: -0.29 ms of PostgreSQL per run).
 */
function cpuMsOf(pid: number): { comm: string; ms: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may contain spaces: fields are counted after it.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return { comm, ms: ticks * TICK_MS };
  } catch {
    return undefined;
  }
}

/**
 * Reads /proc: the named processes by pid (a list of pids is one group, their sum), plus
 * every `postgres` and `nats-server` process of the machine. With `postgresDatabase`, also
 * the group `postgres backends`: the backends connected to that database (their command
 * line names it), which other sessions on a shared machine do not move. Empty where /proc
 * does not exist.
 */
export function sampleCpu(
  named: Record<string, number | readonly number[] | undefined>,
  options: { readonly postgresDatabase?: string } = {},
): CpuSample {
  const out = new Map<string, number>();
  const add = (group: string, ms: number) => out.set(group, (out.get(group) ?? 0) + ms);
  for (const [name, pids] of Object.entries(named)) {
    for (const pid of typeof pids === 'number' ? [pids] : (pids ?? [])) {
      const cpu = cpuMsOf(pid);
      if (cpu) add(name, cpu.ms);
    }
  }
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return out;
  }
  const database = options.postgresDatabase;
  for (const p of pids) {
    const cpu = cpuMsOf(Number(p));
    if (cpu?.comm === 'postgres' || cpu?.comm === 'nats-server') add(cpu.comm, cpu.ms);
    if (database && cpu?.comm === 'postgres' && backendDatabase(Number(p)) === database)
      add('postgres backends', cpu.ms);
  }
  return out;
}

/** The database a PostgreSQL backend serves (`postgres: [<cluster>: ]<user> <database> <client> <state>`). */
function backendDatabase(pid: number): string | undefined {
  try {
    const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
    return /^postgres: (?:\S+: )?\S+ (\S+) /.exec(title)?.[1];
  } catch {
    return undefined;
  }
}

/** CPU milliseconds per operation between two samples, one `group x.xx` entry per group. */
export function cpuPerOp(before: CpuSample, after: CpuSample, ops: number): string {
  return [...after].map(([group, ms]) => `${group} ${((ms - (before.get(group) ?? 0)) / ops).toFixed(2)}`).join(', ');
}

/** The pids of `pid`'s children alive now (a process-pool engine's sandbox processes). Empty without /proc. */
export function childrenOf(pid: number): number[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  return pids.map(Number).filter((child) => {
    try {
      const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
}

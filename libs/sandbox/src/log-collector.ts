import { performance } from 'node:perf_hooks';
import type { SandboxLimits, SandboxLogEntry, SandboxLogLevel } from './types.js';

const LEVELS = new Set<unknown>(['info', 'warn', 'error', 'debug']);

/**
 * The host's count of a run's logs: the authority on the caps (entries, UTF-8 bytes), whatever the
 * isolate sends. The prelude also counts (in characters) so a log loop stops crossing the boundary
 * once the caps are reached, and says so with the level 'truncated'.
 */
export class LogCollector {
  readonly entries: SandboxLogEntry[] = [];
  truncated = false;
  private bytes = 0;

  constructor(
    private readonly limits: Pick<SandboxLimits, 'maxLogBytes' | 'maxLogEntries'>,
    private readonly startedAt: number,
  ) {}

  add(level: unknown, message: unknown): void {
    if (level === 'truncated') {
      this.truncated = true;
      return;
    }
    if (!LEVELS.has(level) || typeof message !== 'string') return;
    if (this.entries.length >= this.limits.maxLogEntries) {
      this.truncated = true;
      return;
    }
    const room = this.limits.maxLogBytes - this.bytes;
    let text = message;
    let bytes = Buffer.byteLength(text);
    if (bytes > room) {
      this.truncated = true;
      if (room <= 0) return;
      text = utf8Prefix(text, room);
      bytes = Buffer.byteLength(text);
    }
    this.bytes += bytes;
    this.entries.push({
      level: level as SandboxLogLevel,
      message: text,
      at: Math.round(performance.now() - this.startedAt),
    });
  }
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, never splitting a surrogate pair. */
export function utf8Prefix(text: string, maxBytes: number): string {
  let low = 0;
  let high = Math.min(text.length, maxBytes);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (Buffer.byteLength(text.slice(0, middle)) <= maxBytes) low = middle;
    else high = middle - 1;
  }
  let end = low;
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

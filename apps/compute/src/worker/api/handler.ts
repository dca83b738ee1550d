import type { JsonValue, SandboxCallContext } from '@strata/sandbox';

/**
 * A refusal meant for the function: its message is what the function's code
 * catches. Any other error of a handler is the platform's own and reaches the
 * function only as a generic message (it is logged on the worker).
 */
export class ApiRefusal extends Error {
  override readonly name: string = 'ApiRefusal';
}

/** What a handler may say about the call it serves, besides its result. */
export interface CallNotes {
  /** The call used a deprecated form: recorded on the call and logged on the run. */
  deprecated(message: string): void;
}

/** The host side of one `api` method. Arguments arrive as JSON; the result goes back as JSON. */
export type ApiHandler = (args: JsonValue[], context: SandboxCallContext, notes: CallNotes) => Promise<JsonValue>;

/** A plain JSON object argument, or a refusal naming it. */
export function objectArg(args: JsonValue[], index: number, name: string): { [key: string]: JsonValue } {
  const value = args[index];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ApiRefusal(`${name} must be an object`);
  return value;
}

export function optionalObjectArg(args: JsonValue[], index: number, name: string): { [key: string]: JsonValue } {
  return args[index] === undefined || args[index] === null ? {} : objectArg(args, index, name);
}

/** A non-empty string argument, or a refusal naming it. */
export function stringArg(args: JsonValue[], index: number, name: string): string {
  const value = args[index];
  if (typeof value !== 'string' || value === '') throw new ApiRefusal(`${name} must be a non-empty string`);
  return value;
}

export function arrayArg(args: JsonValue[], index: number, name: string): JsonValue[] {
  const value = args[index];
  if (!Array.isArray(value)) throw new ApiRefusal(`${name} must be an array`);
  return value;
}

/** A string, number or boolean argument as text (query parameters), or a refusal naming it. */
export function scalarText(value: JsonValue, name: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ApiRefusal(`${name} must be a string, number or boolean`);
}

/** A scalar or a list of scalars as a comma-separated list. */
export function listText(value: JsonValue, name: string): string {
  return Array.isArray(value) ? value.map((v, i) => scalarText(v, `${name}[${i}]`)).join(',') : scalarText(value, name);
}

/** Levels of objects and arrays an api call's arguments may nest (the array of arguments is level 1): as a request body. */
export const MAX_ARGUMENT_DEPTH = 64;

/**
 * Whether `value` nests objects and arrays deeper than `max` levels (a scalar is
 * level 0, `[]` level 1). Walks with an explicit stack and stops at the first
 * level past `max`: arguments nested 100,000 levels deep cost nothing more, and
 * reach none of the recursive code after (`JSON.stringify` ran out of stack).
 */
export function nestsDeeperThan(value: JsonValue, max: number): boolean {
  const stack: [JsonValue, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, level] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (level > max) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (typeof child === 'object' && child !== null) stack.push([child, level + 1]);
    }
  }
  return false;
}

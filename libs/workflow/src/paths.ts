import type { JsonValue, RunScope } from './types.js';

/** A path's first segments: `input`, `context`, or `steps.<stepId>.output`. */
export type PathRoot = { readonly kind: 'input' | 'context' } | { readonly kind: 'step'; readonly stepId: string };

export type ParsedPath = { root: PathRoot; rest: string[] } | { error: string };

const SEGMENT = /^[^.\s]+$/;

/**
 * Parses a dot path rooted at `input.`, `context.` or `steps.<id>.output.` (the
 * root alone means the whole value). Array elements are numeric segments
 * (`input.items.0.sku`).
 */
export function parsePath(path: unknown): ParsedPath {
  if (typeof path !== 'string' || path.length === 0 || path.length > 500) {
    return { error: 'must be a dot path of at most 500 characters' };
  }
  const segments = path.split('.');
  if (!segments.every((s) => SEGMENT.test(s))) return { error: 'must be a dot path without empty segments or spaces' };
  const [first, ...rest] = segments;
  if (first === 'input' || first === 'context') return { root: { kind: first }, rest };
  if (first === 'steps') {
    const [stepId, output, ...tail] = rest;
    if (stepId === undefined || output !== 'output') {
      return { error: 'a steps path reads a step output: steps.<stepId>.output' };
    }
    return { root: { kind: 'step', stepId }, rest: tail };
  }
  return { error: 'must start with input., context. or steps.<stepId>.output' };
}

/** The value at a path, and whether it exists (a present `null` exists). Own properties only. */
export function readPath(scope: RunScope, path: string): { exists: boolean; value: JsonValue | undefined } {
  const parsed = parsePath(path);
  if ('error' in parsed) return { exists: false, value: undefined };
  let current: JsonValue | undefined;
  if (parsed.root.kind === 'step') {
    if (!Object.hasOwn(scope.steps, parsed.root.stepId)) return { exists: false, value: undefined };
    current = scope.steps[parsed.root.stepId];
  } else {
    current = scope[parsed.root.kind];
  }
  for (const segment of parsed.rest) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9]\d*)$/.test(segment) || Number(segment) >= current.length)
        return { exists: false, value: undefined };
      current = current[Number(segment)];
    } else if (typeof current === 'object' && current !== null && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return { exists: false, value: undefined };
    }
  }
  return { exists: current !== undefined, value: current };
}

/** The run's scope in the shape its paths name it: each earlier step's output under `steps.<id>.output`. */
export interface ScopeByPath {
  readonly input: JsonValue;
  readonly context: JsonValue;
  readonly steps: { readonly [stepId: string]: { readonly output: JsonValue } };
}

/**
 * The scope as the paths read it (`input.`, `context.`, `steps.<id>.output.`): what a compute
 * step's function receives as executionParams, and what a step row records as its input. A
 * step's output is wrapped whatever it is (an object, a list, a number, a string, null).
 */
export function scopeByPath(scope: RunScope): ScopeByPath {
  const steps: Record<string, { output: JsonValue }> = {};
  for (const [id, output] of Object.entries(scope.steps)) {
    // Defined, not assigned: a step id `__proto__` is a key like any other.
    Object.defineProperty(steps, id, { value: { output }, enumerable: true, writable: true, configurable: true });
  }
  return { input: scope.input, context: scope.context, steps };
}

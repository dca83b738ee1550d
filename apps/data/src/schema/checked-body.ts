import { Injectable, type PipeTransform } from '@nestjs/common';
import { ErrorCode, type FieldError } from '@strata/contracts';
import { createValidationPipe, StrataException } from '@strata/platform';
import { isPlainObject } from './issues.js';

/**
 * Keys that the platform's validation pipe deletes wherever they appear (Nest's
 * `stripProtoKeys`). Deleted silently, `{"where": {"constructor": …}}` would
 * become a query without that condition: they are refused by path instead.
 */
const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export interface CheckedBody<T> {
  /**
   * The body as its DTO describes it. When `problems` is not empty, the fields
   * that failed (and any the DTO does not know) are absent, required ones too:
   * a caller may go on checking the rest, but must answer `problems` in the end.
   */
  readonly body: T;
  readonly problems: readonly FieldError[];
}

/**
 * Checks a request body with the platform's validation pipe without stopping
 * there, so that a service can report the DTO's problems together with those
 * that only it can find (property definitions, fields of a query), in one 400.
 *
 * Before the pipe, the body is copied without recursion: keys the pipe would
 * delete are refused by path. (How deep a body nests is bounded once, at the
 * edge, before any parser or transformer: docs/requests.md.) The pipe keeps
 * every key of free-form fields (`toString`, `valueOf` are ordinary field and
 * variable names here): libs/platform's validation/free-form.ts.
 */
export async function checkBody<T extends object>(metatype: new () => T, raw: unknown): Promise<CheckedBody<T>> {
  const problems: FieldError[] = [];
  const clean = copyJson(raw, problems);
  try {
    const instance = (await createValidationPipe().transform(clean, { type: 'body', metatype })) as T;
    return { body: instance, problems };
  } catch (err) {
    if (!(err instanceof StrataException) || err.code !== ErrorCode.VALIDATION_ERROR || !Array.isArray(err.details))
      throw err;
    problems.push(...err.details);
    const failed = new Set(problems.map((p) => topField(p.field)));
    const partial = isPlainObject(clean)
      ? Object.fromEntries(Object.entries(clean).filter(([key]) => !failed.has(key)))
      : {};
    return { body: partial as T, problems };
  }
}

/** `@Body(new CheckedBodyPipe(Dto)) checked: CheckedBody<Dto>`: see {@link checkBody}. */
@Injectable()
export class CheckedBodyPipe<T extends object> implements PipeTransform<unknown, Promise<CheckedBody<T>>> {
  constructor(private readonly metatype: new () => T) {}

  transform(value: unknown): Promise<CheckedBody<T>> {
    return checkBody(this.metatype, value);
  }
}

/** Throws the problems of a checked body, if any, and returns the body. */
export function bodyOrThrow<T>(checked: CheckedBody<T>): T {
  if (checked.problems.length) throw StrataException.validation([...checked.problems]);
  return checked.body;
}

/** `page.limit` → `page`; `properties[2].name` → `properties`. */
function topField(path: string): string {
  return /^[^.[]*/.exec(path)![0];
}

/**
 * A copy of parsed JSON with own keys only, made with an explicit stack (so no
 * depth exhausts the call stack). Reserved keys are left out and reported.
 */
function copyJson(raw: unknown, problems: FieldError[]): unknown {
  const holder: { value?: unknown } = {};
  const stack: { from: unknown; path: string; put: (v: unknown) => void }[] = [
    { from: raw, path: '', put: (v) => (holder.value = v) },
  ];
  while (stack.length) {
    const { from, path, put } = stack.pop()!;
    if (typeof from !== 'object' || from === null) {
      put(from);
      continue;
    }
    const children: { key: string; value: unknown; path: string; put: (v: unknown) => void }[] = [];
    if (Array.isArray(from)) {
      const out: unknown[] = [];
      put(out);
      from.forEach((value, i) =>
        children.push({ key: String(i), value, path: `${path}[${i}]`, put: (v) => (out[i] = v) }),
      );
    } else {
      const out: Record<string, unknown> = {};
      put(out);
      for (const [key, value] of Object.entries(from as Record<string, unknown>)) {
        const at = path ? `${path}.${key}` : key;
        if (RESERVED_KEYS.has(key)) {
          problems.push({ field: at, message: `"${key}" is not accepted as a field, operator or variable name` });
          continue;
        }
        children.push({ key, value, path: at, put: (v) => (out[key] = v) });
      }
    }
    for (const child of children.reverse()) stack.push({ from: child.value, path: child.path, put: child.put });
  }
  return holder.value;
}

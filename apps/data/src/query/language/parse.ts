import peggy from 'peggy';
import { GRAMMAR, GRAMMAR_PRELUDE } from './grammar.js';

/** Values as written in a query: a literal, a list, or a named parameter. */
export type AstValue =
  | { readonly literal: string | number | boolean | null }
  | { readonly list: readonly AstValue[] }
  | { readonly parameter: string; readonly at: number };

export interface AstCondition {
  readonly field: string;
  readonly op: string;
  readonly value: AstValue;
  readonly at: number;
}

export type AstWhere =
  | { readonly and: readonly AstWhere[] }
  | { readonly or: readonly AstWhere[] }
  | { readonly not: AstWhere }
  | { readonly condition: AstCondition }
  | {
      readonly search: {
        readonly text: AstValue;
        readonly fields: readonly string[];
        readonly fuzzy: boolean;
        readonly at: number;
      };
    };

export type AstSelectItem =
  | {
      readonly kind: 'aggregate';
      readonly fn: 'count' | 'sum' | 'avg' | 'min' | 'max';
      readonly field: string | null;
      readonly alias: string | null;
      readonly at: number;
    }
  | { readonly kind: 'field'; readonly field: string };

export interface AstQuery {
  readonly select: readonly AstSelectItem[] | null;
  readonly resource: string;
  readonly where: AstWhere | null;
  readonly includes: readonly { relation: string; resource: string; where: AstWhere | null; at: number }[];
  readonly group: readonly string[] | null;
  readonly order: readonly { field: string; direction: 'asc' | 'desc' }[] | null;
  readonly limit: number | null;
  readonly offset: number | null;
}

export class QuerySyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
    readonly line: number,
    readonly column: number,
    readonly expected: string[],
  ) {
    super(message);
  }
}

export const LANGUAGE_LIMITS = { maxLength: 10_000 } as const;

const parser = peggy.generate(GRAMMAR_PRELUDE + GRAMMAR);

interface PeggySyntaxError {
  message: string;
  location: { start: { offset: number; line: number; column: number } };
  expected: { type: string; text?: string; description?: string }[] | null;
}

/** Parses a query in the string language; throws {@link QuerySyntaxError} with the position and what was expected. */
export function parseQuery(source: string): AstQuery {
  if (source.length > LANGUAGE_LIMITS.maxLength) {
    throw new QuerySyntaxError(
      `The query is longer than ${LANGUAGE_LIMITS.maxLength} characters`,
      LANGUAGE_LIMITS.maxLength,
      1,
      1,
      [],
    );
  }
  try {
    return parser.parse(source) as AstQuery;
  } catch (err) {
    const e = err as Partial<PeggySyntaxError>;
    if (!e.location) throw err;
    const expected = [...new Set((e.expected ?? []).map((x) => x.description ?? x.text ?? x.type))].filter(
      (x) => x !== 'whitespace',
    );
    const { offset, line, column } = e.location.start;
    throw new QuerySyntaxError(
      `Syntax error at line ${line}, column ${column} (position ${offset}): ${e.message ?? 'unexpected input'}`,
      offset,
      line,
      column,
      expected,
    );
  }
}

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

export const LANGUAGE_LIMITS = {
  maxLength: 10_000,
  /** Parentheses inside one another, and levels of the condition tree (NOT, AND, OR). */
  maxNesting: 32,
} as const;

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
  // The parser descends once per parenthesis: a deep run would exhaust the call stack
  // before it could report anything, so parentheses are counted first.
  const deepParenthesis = tooDeepParenthesis(source);
  if (deepParenthesis !== undefined) throw nestingError(source, deepParenthesis);
  let ast: AstQuery;
  try {
    ast = parser.parse(source) as AstQuery;
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
  for (const where of [ast.where, ...ast.includes.map((i) => i.where)]) {
    const deep = where ? tooDeepCondition(where) : undefined;
    if (deep !== undefined) throw nestingError(source, deep);
  }
  return ast;
}

function nestingError(source: string, offset: number): QuerySyntaxError {
  const before = source.slice(0, offset).split('\n');
  return new QuerySyntaxError(
    `Conditions nest deeper than ${LANGUAGE_LIMITS.maxNesting} levels at line ${before.length}, column ${before.at(-1)!.length + 1} (position ${offset}): parentheses, NOT, AND and OR each count`,
    offset,
    before.length,
    before.at(-1)!.length + 1,
    [],
  );
}

/**
 * The offset of the first parenthesis that opens a level beyond the limit, or
 * undefined. Parentheses inside 'strings' and "quoted names" do not count.
 */
export function tooDeepParenthesis(source: string): number | undefined {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === "'" || ch === '"') {
      // A quote ends the string ('' inside a string is an escaped quote: it closes and reopens).
      const end = source.indexOf(ch, i + 1);
      if (end === -1) return undefined;
      i = end;
    } else if (ch === '(') {
      if (++depth > LANGUAGE_LIMITS.maxNesting) return i;
    } else if (ch === ')') depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/** The position of the first condition nested beyond the limit, walked without recursion. */
function tooDeepCondition(root: AstWhere): number | undefined {
  const stack: { where: AstWhere; depth: number }[] = [{ where: root, depth: 1 }];
  while (stack.length) {
    const { where, depth } = stack.pop()!;
    if (depth > LANGUAGE_LIMITS.maxNesting) return positionOf(where);
    const children = 'and' in where ? where.and : 'or' in where ? where.or : 'not' in where ? [where.not] : [];
    for (const child of children) stack.push({ where: child, depth: depth + 1 });
  }
  return undefined;
}

/** The offset of a condition's first leaf. */
function positionOf(where: AstWhere): number {
  let node = where;
  for (;;) {
    if ('condition' in node) return node.condition.at;
    if ('search' in node) return node.search.at;
    node = 'and' in node ? node.and[0]! : 'or' in node ? node.or[0]! : node.not;
  }
}

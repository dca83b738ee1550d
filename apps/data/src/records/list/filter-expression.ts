import type { Operator } from '../../compiler/query.types.js';

/** One `key:spec` term of a list filter, values still text. */
export interface FilterTerm {
  readonly key: string;
  readonly op: Operator;
  readonly values: readonly string[];
}

export class FilterSyntaxError extends Error {
  constructor(
    readonly position: number,
    readonly expected: string,
    source: string,
  ) {
    super(
      `filter: expected ${expected} at position ${position}${position < source.length ? ` (found "${source[position]}")` : ' (at the end)'}`,
    );
  }
}

export const FILTER_LIMITS = { maxLength: 4000, maxTerms: 50 } as const;

/**
 * Parses the records list's `filter` expression: terms separated by commas
 * (AND), each `key:spec` where spec is one of
 *   `value`            eq          `!value`        ne
 *   `>v` `>=v` `<v` `<=v`          `a..b`          gte a and lte b
 *   `*text*`           contains    `text*` / `*text` startsWith / endsWith
 *   `[a,b]`            in          `![a,b]`        nin
 * A value may be double-quoted to hold `,` `:` `*` `[` `]` `"` (escape `"` and `\` with `\`).
 * Pure; throws {@link FilterSyntaxError} with the position and what was expected.
 */
export function parseFilter(source: string): FilterTerm[] {
  if (source.length > FILTER_LIMITS.maxLength)
    throw new FilterSyntaxError(FILTER_LIMITS.maxLength, `at most ${FILTER_LIMITS.maxLength} characters`, source);
  const parser = new Parser(source);
  const terms: FilterTerm[] = [];
  do {
    terms.push(...parser.term());
    if (terms.length > FILTER_LIMITS.maxTerms)
      throw new FilterSyntaxError(parser.pos, `at most ${FILTER_LIMITS.maxTerms} terms`, source);
  } while (parser.eat(','));
  parser.end();
  return terms;
}

class Parser {
  pos = 0;

  constructor(private readonly s: string) {}

  eat(text: string): boolean {
    if (this.s.startsWith(text, this.pos)) {
      this.pos += text.length;
      return true;
    }
    return false;
  }

  end(): void {
    if (this.pos !== this.s.length) throw new FilterSyntaxError(this.pos, '"," or the end of the filter', this.s);
  }

  term(): FilterTerm[] {
    const key = this.key();
    if (!this.eat(':')) throw new FilterSyntaxError(this.pos, '":" after the field name', this.s);
    if (this.eat('![')) return [{ key, op: 'nin', values: this.list() }];
    if (this.eat('[')) return [{ key, op: 'in', values: this.list() }];
    for (const [prefix, op] of [
      ['>=', 'gte'],
      ['<=', 'lte'],
      ['>', 'gt'],
      ['<', 'lt'],
      ['!', 'ne'],
    ] as const) {
      if (this.eat(prefix)) return [{ key, op, values: [this.value()] }];
    }
    if (this.s[this.pos] === '*') {
      this.pos++;
      const text = this.value();
      return [{ key, op: this.eat('*') ? 'contains' : 'endsWith', values: [text] }];
    }
    const first = this.value(true);
    if (this.eat('..'))
      return [
        { key, op: 'gte', values: [first] },
        { key, op: 'lte', values: [this.value()] },
      ];
    if (this.eat('*')) return [{ key, op: 'startsWith', values: [first] }];
    return [{ key, op: 'eq', values: [first] }];
  }

  private key(): string {
    const m = /^[A-Za-z_][A-Za-z0-9_.]{0,199}/.exec(this.s.slice(this.pos));
    if (!m) throw new FilterSyntaxError(this.pos, 'a field name', this.s);
    this.pos += m[0].length;
    return m[0];
  }

  private list(): string[] {
    const values = [this.value()];
    while (this.eat(',')) values.push(this.value());
    if (!this.eat(']')) throw new FilterSyntaxError(this.pos, '"," or "]"', this.s);
    return values;
  }

  /** A quoted or bare value; bare values stop at `,` `]` `*`, and at `..` when a range may follow. */
  private value(rangeAllowed = false): string {
    if (this.s[this.pos] === '"') return this.quoted();
    const start = this.pos;
    while (this.pos < this.s.length) {
      const ch = this.s[this.pos]!;
      if (ch === ',' || ch === ']' || ch === '*' || ch === '"' || ch === '[') break;
      if (rangeAllowed && this.s.startsWith('..', this.pos)) break;
      this.pos++;
    }
    if (this.pos === start) throw new FilterSyntaxError(this.pos, 'a value', this.s);
    return this.s.slice(start, this.pos);
  }

  private quoted(): string {
    let out = '';
    this.pos++;
    while (this.pos < this.s.length) {
      const ch = this.s[this.pos++]!;
      if (ch === '"') return out;
      if (ch === '\\') {
        if (this.pos >= this.s.length) break;
        out += this.s[this.pos++];
      } else out += ch;
    }
    throw new FilterSyntaxError(this.s.length, 'a closing quote', this.s);
  }
}

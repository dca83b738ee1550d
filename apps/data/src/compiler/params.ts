/** Bind parameters of one statement: every value reaches PostgreSQL as `$n`, never as SQL text. */
export class Params {
  readonly values: unknown[] = [];

  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
}

/** Binds a value as the next parameter of a statement and answers its placeholder (`$7`). */
export type Bind = (value: unknown) => string;

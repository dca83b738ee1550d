import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata.js';

/** A column's value as pg takes it: JSON columns as their text (pg would send an object as is). */
export function columnValue(column: ColumnMetadata, value: unknown): unknown {
  return column.type === 'jsonb' && value !== null && value !== undefined ? JSON.stringify(value) : value;
}

/**
 * One `INSERT` of `rows` (entities) into `table`, every column of the entity's
 * mapping: for a hot path that writes many rows at once, or one row as a
 * prepared statement (the text is the same for the same number of rows).
 */
export function insertRows(
  table: string,
  columns: readonly ColumnMetadata[],
  rows: readonly object[],
): { sql: string; values: unknown[] } {
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const at = values.length;
    for (const c of columns) values.push(columnValue(c, c.getEntityValue(row)));
    return `(${columns.map((_, i) => `$${at + i + 1}`).join(', ')})`;
  });
  return {
    sql: `INSERT INTO ${table} (${columns.map((c) => c.databaseName).join(', ')}) VALUES ${tuples.join(', ')}`,
    values,
  };
}

/**
 * Like `insertRows`, but only the rows that pass `where` (SQL over `v.<column>`, the
 * row's columns by their database names) are written: `INSERT … SELECT … FROM (VALUES
 * …) AS v WHERE …`. Every value is cast to its column's type, since values in a
 * subquery are not typed by the table. Parameters are numbered from `firstParam`, so
 * the statement may take parameters of its own before them (in `where`, or in a
 * `WITH` that comes first).
 */
export function insertRowsWhere(
  table: string,
  columns: readonly ColumnMetadata[],
  rows: readonly object[],
  where: string,
  firstParam = 1,
): { sql: string; values: unknown[] } {
  const casts = columns.map((c) => {
    if (typeof c.type !== 'string') throw new Error(`column ${c.databaseName} needs a database type name to be cast`);
    return c.type;
  });
  const values: unknown[] = [];
  const tuples = rows.map((row) => {
    const at = firstParam + values.length;
    for (const c of columns) values.push(columnValue(c, c.getEntityValue(row)));
    return `(${casts.map((type, i) => `$${at + i}::${type}`).join(', ')})`;
  });
  const names = columns.map((c) => c.databaseName).join(', ');
  return {
    sql: `INSERT INTO ${table} (${names}) SELECT ${names} FROM (VALUES ${tuples.join(', ')}) AS v (${names}) WHERE ${where}`,
    values,
  };
}

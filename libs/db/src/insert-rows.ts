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

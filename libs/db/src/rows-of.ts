/**
 * TypeORM's `query()` on Postgres answers UPDATE and DELETE with
 * `[rows, affectedCount]` but SELECT and INSERT with the rows alone. This
 * returns the rows in every case.
 */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

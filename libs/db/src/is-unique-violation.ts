/** Whether a database error is a unique-constraint violation, optionally on a named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = (err as { driverError?: { code?: string; constraint?: string }; code?: string; constraint?: string }) ?? {};
  const code = e.driverError?.code ?? e.code;
  const name = e.driverError?.constraint ?? e.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}

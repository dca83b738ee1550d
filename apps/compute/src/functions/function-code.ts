import { createHash } from 'node:crypto';
import { checkFunctionCode } from '@strata/sandbox';
import { StrataException } from '@strata/platform';

/** The spec's functionCodeHash: SHA-256 of the code, hex. */
export function codeHash(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/**
 * Refuses code that would not run: a syntax error (400 naming line and column)
 * or the legacy `exports.handler` / `module.exports` forms (400 naming
 * `async function run()`). `field` is where the code came from in the body.
 */
export function assertRunnableCode(code: string, field = 'code'): void {
  const check = checkFunctionCode(code, 'run');
  if (!check.ok) throw StrataException.validation([{ field, message: check.message }]);
}

import { createHash } from 'node:crypto';
import { checkAnyFunctionCode, type FunctionKind, type KindCheck } from '@strata/sandbox';
import { StrataException } from '@strata/platform';

/** The spec's functionCodeHash: SHA-256 of the code, hex. */
export function codeHash(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/**
 * Refuses code that would not run: a syntax error (400 naming line and column)
 * or the legacy `exports.handler` / `module.exports` forms (400 naming
 * `async function run()`). Code is a run script (`async function run()`) or an
 * endpoint module (`export default async (context)`); answers which.
 * `field` is where the code came from in the body.
 */
export function assertRunnableCode(code: string, field = 'code'): FunctionKind {
  const check = checkedCode(code);
  if (!check.ok) throw StrataException.validation([{ field, message: check.message }]);
  return check.kind;
}

/** The shape of saved code (it passed `assertRunnableCode`); a script when it fits neither any more. */
export function functionKindOf(code: string): FunctionKind {
  const check = checkAnyFunctionCode(code);
  return check.ok ? check.kind : 'run';
}

/** The last code checked and its verdict: a request's body validation and its handler parse it once. */
let lastChecked: { readonly code: string; readonly check: KindCheck } | undefined;

/** `checkAnyFunctionCode`, remembered for the same code asked again next (the same request, mostly). */
export function checkedCode(code: string): KindCheck {
  if (lastChecked?.code !== code) lastChecked = { code, check: checkAnyFunctionCode(code) };
  return lastChecked.check;
}

import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_EXPORT_NOT_FUNCTION_MESSAGE,
  IMPORTS_MESSAGE,
  LEGACY_EXPORTS_MESSAGE,
  MISSING_DEFAULT_EXPORT_MESSAGE,
  MISSING_RUN_MESSAGE,
  NOT_ASYNC_RUN_MESSAGE,
  TOO_DEEP_MESSAGE,
  checkAnyFunctionCode,
  checkFunctionCode,
} from './code-check.js';

describe('checkFunctionCode, kind run', () => {
  it.each([
    'async function run() { return { success: true, data: 1 }; }',
    'const x = 1;\nasync function run(a, b) { return x; }\nfunction helper() {}',
    '"use strict";\nasync function run() { for await (const x of []) {} }',
    'async function run() { return import.meta === undefined; }'.replace('import.meta === undefined', '1'),
  ])('accepts %j', (code) => {
    expect(checkFunctionCode(code, 'run')).toEqual({ ok: true });
  });

  it('reports a syntax error with its 1-based line and column', () => {
    const check = checkFunctionCode('async function run() {\n  return 1 +;\n}', 'run');
    expect(check).toEqual({
      ok: false,
      message: 'SyntaxError: Unexpected token (line 2, column 13)',
      line: 2,
      column: 13,
    });
  });

  it('refuses top-level await (a script, not a module)', () => {
    const check = checkFunctionCode('await 1;\nasync function run() {}', 'run');
    expect(check).toMatchObject({ ok: false, line: 1 });
    expect(check.ok === false && check.message).toMatch(/^SyntaxError: /);
  });

  it('refuses module syntax in a run function', () => {
    expect(checkFunctionCode('export async function run() {}', 'run')).toMatchObject({ ok: false, line: 1 });
  });

  it.each([
    'exports.handler = async () => 1;',
    "exports['handler'] = async () => 1;",
    'module.exports = async () => 1;',
    'module.exports.handler = async () => 1;',
    "module['exports'] = { handler() {} };",
    'module.exports = exports = async () => 1;',
    'let x; x = module.exports = 1;',
    'async function run() {}\nexports.handler = run;',
    'foo(), exports.handler = 1;',
  ])('refuses the legacy form %j', (code) => {
    const check = checkFunctionCode(code, 'run');
    expect(check).toMatchObject({ ok: false, message: LEGACY_EXPORTS_MESSAGE });
    expect(LEGACY_EXPORTS_MESSAGE).toContain('async function run()');
  });

  it('gives the line of the legacy form', () => {
    expect(checkFunctionCode('async function run() {}\n\nmodule.exports = run;', 'run')).toMatchObject({
      line: 3,
      column: 1,
    });
  });

  it('refuses code without run', () => {
    expect(checkFunctionCode('function main() {}', 'run')).toEqual({ ok: false, message: MISSING_RUN_MESSAGE });
    expect(checkFunctionCode('', 'run')).toEqual({ ok: false, message: MISSING_RUN_MESSAGE });
    // A nested run is not a top-level declaration.
    expect(checkFunctionCode('{ async function run() {} }', 'run')).toEqual({
      ok: false,
      message: MISSING_RUN_MESSAGE,
    });
  });

  it.each([
    'function run() { return 1; }',
    'async function* run() {}',
    'const run = async () => 1;',
    'var run = async function () {};',
    'class run {}',
  ])('refuses a run that is not an async function declaration: %j', (code) => {
    const check = checkFunctionCode(code, 'run');
    expect(check).toMatchObject({ ok: false, message: NOT_ASYNC_RUN_MESSAGE, line: 1 });
    expect(NOT_ASYNC_RUN_MESSAGE).toContain('async function run()');
  });

  it.each([
    ['parentheses', '('.repeat(100_000) + '1' + ')'.repeat(100_000)],
    ['arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
    ['blocks', '{'.repeat(100_000) + '}'.repeat(100_000)],
    ['functions', 'function f(){'.repeat(50_000) + '}'.repeat(50_000)],
  ])('refuses deeply nested %s without blowing the stack', (_name, code) => {
    const check = checkFunctionCode(`async function run() { return ${code}; }`, 'run');
    expect(check.ok).toBe(false);
    // Either acorn's own recursion gives up (our message) or the code is a plain syntax error.
    expect(check.ok === false && check.message).toMatch(
      new RegExp(`^(${TOO_DEEP_MESSAGE.replace('.', '\\.')}|SyntaxError: )`),
    );
  });

  it('reports a stack overflow as the nesting message', () => {
    const check = checkFunctionCode(
      `async function run() { return ${'('.repeat(200_000)}1${')'.repeat(200_000)}; }`,
      'run',
    );
    expect(check).toEqual({ ok: false, message: TOO_DEEP_MESSAGE });
  });
});

describe('checkFunctionCode, kind endpoint', () => {
  it.each([
    'export default async (context) => { context.res.json({ statusCode: 200, body: 1 }); };',
    'export default async function (context) { return 1; }',
    'export default async function handler(context) { return 1; }',
    'export default (context) => 1;',
    'export default function (context) { return 1; }',
    'const x = 1;\nexport const y = 2;\nexport default async function (context) { return x + y; }',
    'await Promise.resolve();\nexport default async () => 1;',
  ])('accepts %j', (code) => {
    expect(checkFunctionCode(code, 'endpoint')).toEqual({ ok: true });
  });

  it('refuses code without a default export', () => {
    expect(checkFunctionCode('async function run() {}', 'endpoint')).toEqual({
      ok: false,
      message: MISSING_DEFAULT_EXPORT_MESSAGE,
    });
  });

  it.each([
    'export default 42;',
    'export default { handler() {} };',
    'export default class {}',
    'export default function* () {}',
    'const f = async () => 1;\nexport { f as default };',
  ])('refuses a default export that is not a function: %j', (code) => {
    expect(checkFunctionCode(code, 'endpoint')).toMatchObject({
      ok: false,
      message: DEFAULT_EXPORT_NOT_FUNCTION_MESSAGE,
    });
  });

  it.each([
    "import fs from 'fs';\nexport default async () => 1;",
    "export * from 'fs';\nexport default async () => 1;",
    "export { readFile } from 'fs';\nexport default async () => 1;",
  ])('refuses imports: %j', (code) => {
    expect(checkFunctionCode(code, 'endpoint')).toMatchObject({ ok: false, message: IMPORTS_MESSAGE, line: 1 });
  });

  it('reports syntax errors with line and column', () => {
    expect(checkFunctionCode('export default async (context) => {\n  return }}\n', 'endpoint')).toMatchObject({
      ok: false,
      line: 2,
      column: 11,
    });
  });
});

describe('checkAnyFunctionCode', () => {
  it('tells the two shapes apart', () => {
    expect(checkAnyFunctionCode('async function run() { return 1; }')).toEqual({ ok: true, kind: 'run' });
    expect(checkAnyFunctionCode('export default async (context) => 1;')).toEqual({ ok: true, kind: 'endpoint' });
  });

  it('answers module-looking code with the endpoint refusal and anything else with the run one', () => {
    expect(checkAnyFunctionCode('export const x = 1;')).toMatchObject({
      ok: false,
      message: MISSING_DEFAULT_EXPORT_MESSAGE,
    });
    expect(checkAnyFunctionCode("import x from 'y'; export default async () => x;")).toMatchObject({
      ok: false,
      message: IMPORTS_MESSAGE,
    });
    expect(checkAnyFunctionCode('const x = 1;')).toMatchObject({ ok: false, message: MISSING_RUN_MESSAGE });
    expect(checkAnyFunctionCode('exports.handler = async () => 1;')).toMatchObject({
      ok: false,
      message: LEGACY_EXPORTS_MESSAGE,
    });
    expect(checkAnyFunctionCode('async function run( {')).toMatchObject({ ok: false, line: 1 });
  });
});

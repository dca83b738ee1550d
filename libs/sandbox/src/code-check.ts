import { parse, type Expression, type Node, type Program, type Statement } from 'acorn';
import type { FunctionKind } from './types.js';

/** The verdict on a function's code, before it is saved or run. Lines and columns are 1-based. */
export type CodeCheck = { ok: true } | { ok: false; message: string; line?: number; column?: number };

export const LEGACY_EXPORTS_MESSAGE =
  'Legacy exports.handler / module.exports functions do not run: define async function run() instead.';
export const MISSING_RUN_MESSAGE = 'Code must define async function run().';
export const NOT_ASYNC_RUN_MESSAGE = 'run must be declared as async function run() { ... }.';
export const MISSING_DEFAULT_EXPORT_MESSAGE =
  'Endpoint code must export a function: export default async (context) => { ... }.';
export const DEFAULT_EXPORT_NOT_FUNCTION_MESSAGE =
  'export default must be a function: export default async (context) => { ... }.';
export const IMPORTS_MESSAGE = 'Endpoint code cannot import modules: functions run without a module loader.';
export const TOO_DEEP_MESSAGE = 'Code is nested too deeply.';

/**
 * Checks user code without running it (acorn only, no isolate).
 * - 'run': a script that declares a top-level `async function run()`; the legacy `exports.handler = ...`
 *   and `module.exports = ...` forms are refused, wherever they stand at the top level.
 * - 'endpoint': a module whose `export default` is a function or an arrow function; no imports.
 * The caller bounds the size of `code`; depth is bounded here (acorn is recursive: a stack overflow
 * becomes a refusal, never an exception).
 */
export function checkFunctionCode(code: string, kind: FunctionKind): CodeCheck {
  let program: Program;
  try {
    program = parse(code, {
      ecmaVersion: 'latest',
      sourceType: kind === 'run' ? 'script' : 'module',
      allowAwaitOutsideFunction: false,
      allowReturnOutsideFunction: false,
      allowHashBang: false,
      locations: true,
    });
  } catch (error) {
    return refusalOfParseError(error);
  }
  return kind === 'run' ? checkRunScript(program) : checkEndpointModule(program);
}

function refusalOfParseError(error: unknown): CodeCheck {
  if (error instanceof RangeError) return { ok: false, message: TOO_DEEP_MESSAGE };
  if (error instanceof SyntaxError) {
    const loc = (error as SyntaxError & { loc?: { line: number; column: number } }).loc;
    // acorn appends " (line:column)" with a 0-based column; say it once, 1-based.
    const message = error.message.replace(/ \(\d+:\d+\)$/, '');
    // acorn turns some of its own stack overflows into this syntax error.
    if (message.startsWith('Not enough stack space')) return { ok: false, message: TOO_DEEP_MESSAGE };
    if (loc) {
      const line = loc.line;
      const column = loc.column + 1;
      return { ok: false, message: `SyntaxError: ${message} (line ${line}, column ${column})`, line, column };
    }
    return { ok: false, message: `SyntaxError: ${message}` };
  }
  throw error;
}

function at(node: Node): { line?: number; column?: number } {
  return node.loc ? { line: node.loc.start.line, column: node.loc.start.column + 1 } : {};
}

function checkRunScript(program: Program): CodeCheck {
  for (const statement of program.body) {
    const legacy = legacyExportAt(statement);
    if (legacy) return { ok: false, message: LEGACY_EXPORTS_MESSAGE, ...at(legacy) };
  }
  let notAsync: Node | undefined;
  for (const statement of program.body) {
    if (statement.type === 'FunctionDeclaration' && statement.id?.name === 'run') {
      if (statement.async && !statement.generator) return { ok: true };
      notAsync ??= statement;
    }
    if (statement.type === 'VariableDeclaration') {
      for (const declarator of statement.declarations) {
        if (declarator.id.type === 'Identifier' && declarator.id.name === 'run') notAsync ??= declarator;
      }
    }
    if (statement.type === 'ClassDeclaration' && statement.id?.name === 'run') notAsync ??= statement;
  }
  if (notAsync) return { ok: false, message: NOT_ASYNC_RUN_MESSAGE, ...at(notAsync) };
  return { ok: false, message: MISSING_RUN_MESSAGE };
}

/** `exports.x = ...`, `module.exports = ...`, `module.exports.x = ...`, also inside `a = b = ...` or `a, b`. */
function legacyExportAt(statement: Statement | Program['body'][number]): Node | undefined {
  if (statement.type !== 'ExpressionStatement') return undefined;
  // Iterative walk over sequences and assignment chains (no recursion on user-controlled depth).
  const pending: Expression[] = [statement.expression];
  while (pending.length > 0) {
    const expression = pending.pop()!;
    if (expression.type === 'SequenceExpression') pending.push(...expression.expressions);
    else if (expression.type === 'AssignmentExpression') {
      if (isLegacyExportTarget(expression.left)) return expression;
      pending.push(expression.right);
    }
  }
  return undefined;
}

function isLegacyExportTarget(node: Node): boolean {
  if (node.type !== 'MemberExpression') return false;
  const member = node as Node & { object: Node; property: Node; computed: boolean };
  // exports.x / exports['x']
  if (isIdentifier(member.object, 'exports')) return true;
  // module.exports
  if (isIdentifier(member.object, 'module') && propertyName(member) === 'exports') return true;
  // module.exports.x
  if (member.object.type === 'MemberExpression') {
    const inner = member.object as Node & { object: Node; property: Node; computed: boolean };
    return isIdentifier(inner.object, 'module') && propertyName(inner) === 'exports';
  }
  return false;
}

function isIdentifier(node: Node, name: string): boolean {
  return node.type === 'Identifier' && (node as Node & { name: string }).name === name;
}

function propertyName(member: Node & { property: Node; computed: boolean }): string | undefined {
  const property = member.property as Node & { name?: string; value?: unknown };
  if (!member.computed && property.type === 'Identifier') return property.name;
  if (member.computed && property.type === 'Literal' && typeof property.value === 'string') return property.value;
  return undefined;
}

function checkEndpointModule(program: Program): CodeCheck {
  let defaultExport: Node | undefined;
  for (const statement of program.body) {
    if (
      statement.type === 'ImportDeclaration' ||
      statement.type === 'ExportAllDeclaration' ||
      (statement.type === 'ExportNamedDeclaration' && statement.source)
    ) {
      return { ok: false, message: IMPORTS_MESSAGE, ...at(statement) };
    }
    if (statement.type === 'ExportNamedDeclaration') {
      // `export { handler as default }`: the exported value is not visible here; ask for the plain form.
      const namesDefault = statement.specifiers.some(
        (specifier) => specifier.exported.type === 'Identifier' && specifier.exported.name === 'default',
      );
      if (namesDefault) return { ok: false, message: DEFAULT_EXPORT_NOT_FUNCTION_MESSAGE, ...at(statement) };
    }
    if (statement.type === 'ExportDefaultDeclaration') {
      const declaration = statement.declaration;
      const isFunction =
        declaration.type === 'FunctionDeclaration' ||
        declaration.type === 'FunctionExpression' ||
        declaration.type === 'ArrowFunctionExpression';
      if (!isFunction || ('generator' in declaration && declaration.generator)) {
        return { ok: false, message: DEFAULT_EXPORT_NOT_FUNCTION_MESSAGE, ...at(declaration) };
      }
      defaultExport = statement;
    }
  }
  if (!defaultExport) return { ok: false, message: MISSING_DEFAULT_EXPORT_MESSAGE };
  return { ok: true };
}

/** The verdict on code that may be of either shape, with the shape it is. */
export type KindCheck = { ok: true; kind: FunctionKind } | Extract<CodeCheck, { ok: false }>;

/**
 * Checks code saved as a function, which may be either shape: a script defining
 * `async function run()` (every trigger but endpoints) or a module with
 * `export default async (context)` (endpoint triggers). Refused code gets the
 * refusal of the shape it looks like: module syntax (import, export) gets the
 * endpoint module's, anything else the run script's.
 */
export function checkAnyFunctionCode(code: string): KindCheck {
  const asRun = checkFunctionCode(code, 'run');
  if (asRun.ok) return { ok: true, kind: 'run' };
  const asEndpoint = checkFunctionCode(code, 'endpoint');
  if (asEndpoint.ok) return { ok: true, kind: 'endpoint' };
  return asRun.message.includes("'import' and 'export' may appear only with") ? asEndpoint : asRun;
}

import jsonata from 'jsonata';

/**
 * Computed fields are JSONata expressions (https://docs.jsonata.org) evaluated
 * against the record's `data` and nothing else: no host functions are bound, no
 * `eval`, and evaluation is bounded in time and depth by JSONata's own limits.
 * Function definitions (`function($x){...}`) are refused at definition time, so
 * an expression cannot recurse.
 */
export const EXPRESSION_LIMITS = { timeoutMs: 100, stackDepth: 50, sequenceLength: 10_000, maxLength: 2000 } as const;

const OPTIONS = {
  timeout: EXPRESSION_LIMITS.timeoutMs,
  stack: EXPRESSION_LIMITS.stackDepth,
  sequence: EXPRESSION_LIMITS.sequenceLength,
};

/** Why an expression cannot be used, or undefined when it compiles and uses only allowed constructs. */
export function expressionProblem(source: string): string | undefined {
  if (source.trim() === '') return 'must not be empty';
  if (source.length > EXPRESSION_LIMITS.maxLength)
    return `must be at most ${EXPRESSION_LIMITS.maxLength} characters long`;
  let ast: jsonata.ExprNode;
  try {
    ast = jsonata(source, OPTIONS).ast();
  } catch (err) {
    const e = err as { message?: string; position?: number };
    return `is not a valid JSONata expression: ${e.message ?? String(err)}${e.position !== undefined ? ` (at ${e.position})` : ''}`;
  }
  return containsLambda(ast) ? 'must not define functions' : undefined;
}

function containsLambda(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsLambda);
  if (typeof node !== 'object' || node === null) return false;
  if ((node as { type?: unknown }).type === 'lambda') return true;
  return Object.values(node).some(containsLambda);
}

const compiled = new Map<string, jsonata.Expression>();

/** Evaluates an expression against a record's data (never anything else). */
export async function evaluateExpression(source: string, data: Record<string, unknown>): Promise<unknown> {
  let expression = compiled.get(source);
  if (!expression) {
    expression = jsonata(source, OPTIONS);
    if (compiled.size >= 1000) compiled.delete(compiled.keys().next().value!);
    compiled.set(source, expression);
  }
  return expression.evaluate(structuredClone(data));
}

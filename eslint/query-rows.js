// strata/update-rows: TypeORM's `query()` on PostgreSQL answers UPDATE and DELETE with
// `[rows, affectedCount]`, but SELECT and INSERT with the rows alone. Code that reads the
// RETURNING rows of an UPDATE or DELETE straight from `query()` sees an array of two
// (`rows.length > 0` is always true, a count is always 2). Such a call is wrapped in
// `rowsOf()` from @strata/db, or made with `queryPrepared()`, which answer the rows.

/** The statement's text, with each interpolation as a placeholder. */
function sqlOf(node) {
  if (node?.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node?.type === 'TemplateLiteral') return node.quasis.map((q) => q.value.cooked ?? q.value.raw).join(' $x ');
  return undefined;
}

/** UPDATE or DELETE when that is the statement's own command (after any WITH list), else undefined. */
export function mainCommand(sql) {
  let text = sql.replace(/'(?:[^']|'')*'/g, "''");
  // Drops every parenthesised part, innermost first: what is left of a WITH is its main statement.
  for (let previous; previous !== text;) {
    previous = text;
    text = text.replace(/\([^()]*\)/g, ' ');
  }
  const command = /\b(SELECT|INSERT|UPDATE|DELETE|VALUES)\b/i.exec(text)?.[1]?.toUpperCase();
  return command === 'UPDATE' || command === 'DELETE' ? command : undefined;
}

const updateRows = {
  meta: {
    type: 'problem',
    docs: { description: "An UPDATE or DELETE's RETURNING rows are read through rowsOf() or queryPrepared()." },
    schema: [],
  },
  create(context) {
    return {
      'CallExpression[callee.property.name="query"]'(node) {
        const sql = sqlOf(node.arguments[0]);
        if (sql === undefined || !/\bRETURNING\b/i.test(sql)) return;
        const command = mainCommand(sql);
        if (!command) return;
        const awaited = node.parent?.type === 'AwaitExpression' ? node.parent : node;
        const wrapper = awaited.parent;
        if (wrapper?.type === 'ExpressionStatement') return; // the answer is not read
        if (
          wrapper?.type === 'CallExpression' &&
          wrapper.callee.type === 'Identifier' &&
          wrapper.callee.name === 'rowsOf'
        ) {
          return;
        }
        context.report({
          node,
          message: `TypeORM answers ${command} with [rows, affectedCount]: read its RETURNING rows through rowsOf() or queryPrepared().`,
        });
      },
    };
  },
};

export const queryRowsPlugin = { rules: { 'update-rows': updateRows } };

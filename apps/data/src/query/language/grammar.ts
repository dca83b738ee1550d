/**
 * The string query language, as a Peggy (PEG) grammar. Keywords are
 * case-insensitive; identifiers that clash with a keyword can be double-quoted.
 *
 *   [SELECT items] FROM <collection>
 *     [WHERE <condition>]
 *     [INCLUDE <relation> FROM <collection> [WHERE <condition>]]...
 *     [GROUP BY <field>, ...] [ORDER BY <field|alias> [ASC|DESC], ...]
 *     [LIMIT <n>] [OFFSET <n>]
 *
 * or FROM first (spec document 1's order), with the SELECT after FROM, after its WHERE and
 * INCLUDEs, after GROUP BY, after ORDER BY or at the end, once:
 *
 *   FROM orders GROUP BY data.status SELECT data.status, COUNT(*)
 *
 * Conditions: comparisons (= != <> < <= > >=), IN / NOT IN (...), BETWEEN a AND b,
 * CONTAINS, STARTS WITH, ENDS WITH, HAS ANY (...), HAS ALL (...), IS [NOT] NULL,
 * SEARCH('text') IN (field, ...) and SEARCH FUZZY(...) for typo tolerance,
 * combined with AND, OR, NOT and parentheses. Values: 'strings' ('' escapes a
 * quote), numbers, TRUE, FALSE, NULL, and named parameters :name.
 */
export const GRAMMAR = String.raw`
Query
  = _ lead:(@PlacedSelect __)? FromKw __ resource:Resource s1:(__ @PlacedSelect)? where:(__ @Where)? includes:(__ @Include)* s2:(__ @PlacedSelect)? group:(__ @GroupBy)? s3:(__ @PlacedSelect)? order:(__ @OrderBy)? s4:(__ @PlacedSelect)? limit:(__ @Limit)? offset:(__ @Offset)? s5:(__ @PlacedSelect)? _ ";"? _
    {
      const selects = [lead, s1, s2, s3, s4, s5].filter((s) => s !== null);
      if (selects.length > 1) error("SELECT may appear only once: before FROM (SQL's order) or after it (FROM first)", selects[1].loc);
      const select = selects.length ? selects[0].items : null;
      return { select, resource, where: where ?? null, includes, group: group ?? null, order: order ?? null, limit: limit ?? null, offset: offset ?? null };
    }

// SQL's order puts SELECT before FROM; the FROM-first order (spec document 1) after FROM, or
// after its WHERE and INCLUDEs, its GROUP BY, its ORDER BY, or at the end.
PlacedSelect
  = items:Select { return { items, loc: location() }; }

Select
  = SelectKw __ items:SelectItems { return items; }

SelectItems
  = "*" { return []; }
  / head:SelectItem tail:(_ "," _ @SelectItem)* { return [head, ...tail]; }

SelectItem
  = fn:Aggregate _ "(" _ arg:("*" { return null; } / Field) _ ")" alias:(__ AsKw __ @Identifier)?
    { return { kind: "aggregate", fn, field: arg, alias: alias ?? null, at: location().start.offset }; }
  / field:Field { return { kind: "field", field }; }

Aggregate
  = CountKw { return "count"; } / SumKw { return "sum"; } / AvgKw { return "avg"; } / MinKw { return "min"; } / MaxKw { return "max"; }

Where
  = WhereKw __ condition:Or { return condition; }

Include
  = IncludeKw __ relation:Field __ FromKw __ resource:Resource where:(__ @Where)?
    { return { relation, resource, where: where ?? null, at: location().start.offset }; }

GroupBy
  = GroupKw __ ByKw __ head:Field tail:(_ "," _ @Field)* { return [head, ...tail]; }

OrderBy
  = OrderKw __ ByKw __ head:OrderItem tail:(_ "," _ @OrderItem)* { return [head, ...tail]; }

OrderItem
  = field:Field direction:(__ @Direction)? { return { field, direction: direction ?? "asc" }; }

Direction
  = AscKw { return "asc"; } / DescKw { return "desc"; }

Limit
  = LimitKw __ n:Integer { return n; }

Offset
  = OffsetKw __ n:Integer { return n; }

Or
  = head:And tail:(__ OrKw __ @And)* { return tail.length ? { or: [head, ...tail] } : head; }

And
  = head:Not tail:(__ AndKw __ @Not)* { return tail.length ? { and: [head, ...tail] } : head; }

// NOT NOT ... is read as a repetition, not by recursion; parse.ts bounds parentheses before
// parsing and the depth of the condition tree after it.
Not
  = nots:(NotKw __)* inner:Primary { return nots.reduce((w) => ({ not: w }), inner); }

Primary
  = "(" _ inner:Or _ ")" { return inner; }
  / Search
  / Predicate

Search
  = SearchKw _ fuzzy:(FuzzyKw _)? "(" _ text:Value _ ")" __ InKw _ "(" _ head:Field tail:(_ "," _ @Field)* _ ")"
    { return { search: { text, fields: [head, ...tail], fuzzy: !!fuzzy, at: location().start.offset } }; }

Predicate
  = field:Field _ op:Comparison _ value:Value { return cond(field, op, value, location()); }
  / field:Field __ NotKw __ InKw _ list:List { return cond(field, "nin", list, location()); }
  / field:Field __ InKw _ list:List { return cond(field, "in", list, location()); }
  / field:Field __ BetweenKw __ low:Value __ AndKw __ high:Value
    { return { and: [cond(field, "gte", low, location()), cond(field, "lte", high, location())] }; }
  / field:Field __ ContainsKw __ value:Value { return cond(field, "contains", value, location()); }
  / field:Field __ StartsKw __ WithKw __ value:Value { return cond(field, "startsWith", value, location()); }
  / field:Field __ EndsKw __ WithKw __ value:Value { return cond(field, "endsWith", value, location()); }
  / field:Field __ HasKw __ AnyKw _ list:List { return cond(field, "hasAny", list, location()); }
  / field:Field __ HasKw __ AllKw _ list:List { return cond(field, "hasAll", list, location()); }
  / field:Field __ IsKw __ NotKw __ NullKw
    { return { and: [cond(field, "exists", { literal: true }, location()), cond(field, "ne", { literal: null }, location())] }; }
  / field:Field __ IsKw __ NullKw
    { return { or: [cond(field, "exists", { literal: false }, location()), cond(field, "eq", { literal: null }, location())] }; }

Comparison
  = ">=" { return "gte"; } / "<=" { return "lte"; } / "<>" { return "ne"; } / "!=" { return "ne"; }
  / "=" { return "eq"; } / ">" { return "gt"; } / "<" { return "lt"; }

List
  = "(" _ head:Value tail:(_ "," _ @Value)* _ ")" { return { list: [head, ...tail] }; }

Value
  = String / Number / TrueKw { return { literal: true }; } / FalseKw { return { literal: false }; }
  / NullKw { return { literal: null }; } / Parameter

String "string"
  = "'" chars:("''" { return "'"; } / [^'])* "'" { return { literal: chars.join("") }; }

Number "number"
  = text:$("-"? [0-9]+ ("." [0-9]+)? ([eE] [+-]? [0-9]+)?) { return { literal: Number(text) }; }

Integer "integer"
  = digits:$[0-9]+ { return Number(digits); }

Parameter "parameter (:name)"
  = ":" name:$([A-Za-z_][A-Za-z0-9_]*) { return { parameter: name, at: location().start.offset }; }

Field
  = head:Identifier tail:("." @Identifier)* { return [head, ...tail].join("."); }

Identifier "field name"
  = '"' chars:$[^"]+ '"' { return chars; }
  / !(Keyword ![A-Za-z0-9_]) name:$([A-Za-z_][A-Za-z0-9_]*) { return name; }

Resource "collection"
  = '"' chars:$[^"]+ '"' { return chars; }
  / !(Keyword ![A-Za-z0-9_-]) name:$([A-Za-z0-9][A-Za-z0-9_-]*) { return name; }

Keyword
  = SelectKw / FromKw / WhereKw / AndKw / OrKw / NotKw / InKw / BetweenKw / IsKw / NullKw / TrueKw / FalseKw
  / OrderKw / GroupKw / ByKw / AscKw / DescKw / LimitKw / OffsetKw / IncludeKw / AsKw / SearchKw
  / ContainsKw / StartsKw / EndsKw / WithKw / HasKw / AnyKw / AllKw

SelectKw = "select"i ![A-Za-z0-9_]
FromKw = "from"i ![A-Za-z0-9_]
WhereKw = "where"i ![A-Za-z0-9_]
AndKw = "and"i ![A-Za-z0-9_]
OrKw = "or"i ![A-Za-z0-9_]
NotKw = "not"i ![A-Za-z0-9_]
InKw = "in"i ![A-Za-z0-9_]
BetweenKw = "between"i ![A-Za-z0-9_]
IsKw = "is"i ![A-Za-z0-9_]
NullKw = "null"i ![A-Za-z0-9_]
TrueKw = "true"i ![A-Za-z0-9_]
FalseKw = "false"i ![A-Za-z0-9_]
OrderKw = "order"i ![A-Za-z0-9_]
GroupKw = "group"i ![A-Za-z0-9_]
ByKw = "by"i ![A-Za-z0-9_]
AscKw = "asc"i ![A-Za-z0-9_]
DescKw = "desc"i ![A-Za-z0-9_]
LimitKw = "limit"i ![A-Za-z0-9_]
OffsetKw = "offset"i ![A-Za-z0-9_]
IncludeKw = "include"i ![A-Za-z0-9_]
AsKw = "as"i ![A-Za-z0-9_]
SearchKw = "search"i ![A-Za-z0-9_]
FuzzyKw = "fuzzy"i ![A-Za-z0-9_]
ContainsKw = "contains"i ![A-Za-z0-9_]
StartsKw = "starts"i ![A-Za-z0-9_]
EndsKw = "ends"i ![A-Za-z0-9_]
WithKw = "with"i ![A-Za-z0-9_]
HasKw = "has"i ![A-Za-z0-9_]
AnyKw = "any"i ![A-Za-z0-9_]
AllKw = "all"i ![A-Za-z0-9_]
CountKw = "count"i ![A-Za-z0-9_]
SumKw = "sum"i ![A-Za-z0-9_]
AvgKw = "avg"i ![A-Za-z0-9_]
MinKw = "min"i ![A-Za-z0-9_]
MaxKw = "max"i ![A-Za-z0-9_]

_ "whitespace"
  = [ \t\r\n]*

__ "whitespace"
  = [ \t\r\n]+
`;

/** Grammar-level helpers available to the actions. */
export const GRAMMAR_PRELUDE = String.raw`{{
function cond(field, op, value, location) {
  return { condition: { field, op, value, at: location.start.offset } };
}
}}
`;

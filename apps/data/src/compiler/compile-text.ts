import { systemColumn } from './compile-where.js';
import type { Params } from './params.js';
import type { TextSearch } from './query.types.js';

/** Minimum trigram word similarity for a typo-tolerant match. */
export const TYPO_SIMILARITY = 0.3;

/**
 * Full-text search over the given string fields (PostgreSQL `simple` configuration:
 * no stemming, any language) with web-search syntax ("quoted phrases", -exclusion,
 * OR); with typoTolerance, a trigram word similarity of at least 0.3 also matches.
 */
export function textCondition(text: TextSearch, params: Params): string {
  // `||` of COALESCEd texts, not concat_ws (which is only STABLE), so that an index on the
  // same expression (collections/indexes/property-indexes.ts) can serve it.
  const document = text.fields
    .map(
      (f) =>
        `COALESCE(${f.kind === 'system' ? `${systemColumn(f.column).column}::text` : `r.data #>> ${params.add(f.path, 'text[]')}`}, '')`,
    )
    .join(` || ' ' || `);
  const query = params.add(text.query, 'text');
  const fullText = `to_tsvector('simple', ${document}) @@ websearch_to_tsquery('simple', ${query})`;
  return text.typoTolerance
    ? `(${fullText} OR data.word_similarity(${query}, ${document}) >= ${TYPO_SIMILARITY})`
    : `(${fullText})`;
}

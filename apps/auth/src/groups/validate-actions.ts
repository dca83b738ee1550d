import { ACTIONS, COLLECTION_SCOPED_RESOURCES, isAction, type FieldError } from '@strata/contracts';
import { RESOURCE_SPECIFIC_ACTIONS } from './dto/group.requests.js';

/** Accepted in a policy, as the specification says, but not an action: it grants nothing. */
const GRANTS_NOTHING = 'read';

/**
 * Checks a policy's actions against the valid set. An unknown action is
 * refused with the list of valid ones. `read` is the exception the
 * specification names: accepted, granting nothing, and reported by
 * {@link policyWarnings}. Pure: returns one entry per bad action.
 */
export function invalidActions(resource: string, actions: readonly string[]): FieldError[] {
  const extra = RESOURCE_SPECIFIC_ACTIONS[resource] ?? [];
  const valid = [...ACTIONS, ...extra];
  const errors: FieldError[] = [];
  actions.forEach((action, i) => {
    if (isAction(action) || extra.includes(action) || action === GRANTS_NOTHING) return;
    errors.push({
      field: `actions[${i}]`,
      message: `'${action}' is not a valid action; valid actions: ${valid.join(', ')}`,
    });
  });
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (seen.has(action)) errors.push({ field: `actions[${i}]`, message: `'${action}' appears more than once` });
    seen.add(action);
  });
  return errors;
}

/** A policy's `collections` list is only for the resources that hold records. Pure. */
export function invalidCollections(resource: string, collections: readonly string[] | null | undefined): FieldError[] {
  if (collections === undefined || collections === null) return [];
  if (!COLLECTION_SCOPED_RESOURCES.includes(resource as (typeof COLLECTION_SCOPED_RESOURCES)[number])) {
    return [
      {
        field: 'collections',
        message: `only a policy on ${COLLECTION_SCOPED_RESOURCES.join(', ')} can name collections; omit it for '${resource}'`,
      },
    ];
  }
  return [];
}

/** What a stored policy grants that its writer may not expect (the `warnings` of a policy). Pure. */
export function policyWarnings(actions: readonly string[]): FieldError[] {
  return actions.flatMap((action, i) =>
    action === GRANTS_NOTHING
      ? [
          {
            field: `actions[${i}]`,
            message: "'read' is not an action and grants nothing: use retrieve (one record) and list (many)",
          },
        ]
      : [],
  );
}

import { ACTIONS, isAction, type FieldError } from '@strata/contracts';
import { RESOURCE_SPECIFIC_ACTIONS } from './dto/group.requests.js';

/**
 * Checks a policy's actions against the valid set. `read` and any unknown
 * action are refused with the list of valid ones, never silently ignored.
 * Pure: returns one entry per bad action.
 */
export function invalidActions(resource: string, actions: readonly string[]): FieldError[] {
  const extra = RESOURCE_SPECIFIC_ACTIONS[resource] ?? [];
  const valid = [...ACTIONS, ...extra];
  const errors: FieldError[] = [];
  actions.forEach((action, i) => {
    if (isAction(action) || extra.includes(action)) return;
    const hint = action === 'read' ? ` ('read' is not an action: use retrieve and list)` : '';
    errors.push({
      field: `actions[${i}]`,
      message: `'${action}' is not a valid action${hint}; valid actions: ${valid.join(', ')}`,
    });
  });
  const seen = new Set<string>();
  actions.forEach((action, i) => {
    if (seen.has(action)) errors.push({ field: `actions[${i}]`, message: `'${action}' appears more than once` });
    seen.add(action);
  });
  return errors;
}

import { describe, expect, it } from '@jest/globals';
import { checkOrchestrationTrigger } from './orchestration-trigger.js';

const NOW = new Date('2026-11-26T08:00:00Z');

describe('checkOrchestrationTrigger, event-driven', () => {
  it('takes the dotted form of an event name, as the spec says an orchestration page writes it, and keeps the underscore form', () => {
    for (const [sent, kept] of [
      ['record.created', 'record_created'],
      ['records.bulk_created', 'records_bulk_created'],
      ['record_updated', 'record_updated'],
    ]) {
      const checked = checkOrchestrationTrigger(
        { type: 'event-driven', eventType: sent, structureSlug: 'orders' },
        NOW,
      );
      expect({ sent, checked }).toEqual({ sent, checked: { trigger: expect.objectContaining({ eventType: kept }) } });
    }
  });

  it('refuses a name that is no record event in either form', () => {
    for (const eventType of ['record.exploded', 'RECORD.CREATED', 'record..created', 'created']) {
      const checked = checkOrchestrationTrigger({ type: 'event-driven', eventType, structureSlug: 'orders' }, NOW);
      expect({ eventType, fields: 'errors' in checked ? checked.errors.map((e) => e.field) : [] }).toEqual({
        eventType,
        fields: ['trigger.eventType'],
      });
    }
  });
});

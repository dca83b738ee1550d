import { describe, expect, it } from '@jest/globals';
import { featuresOf, limitsOf, mergeFeatures, mergeLimits, OPEN_LIMITS } from './plan-view.js';

describe('plan limits and features', () => {
  it('reads every limit and feature, a missing limit unlimited and a missing feature on', () => {
    const limits = limitsOf({ records: 5, functions: null, bogus: 3 });
    expect(limits.records).toBe(5);
    expect(limits.functions).toBeNull();
    expect(limits.triggers).toBeNull();
    expect(Object.keys(limits)).not.toContain('bogus');
    expect(featuresOf({ temporal: false })).toEqual({ endpoints: true, inboundCapture: true, temporal: false });
  });

  it('lays the given limits and features over the old ones, null making a limit unlimited', () => {
    const base = mergeLimits(OPEN_LIMITS, { records: 5, triggers: 2 });
    const merged = mergeLimits(base, { records: null, functions: 1 });
    expect(merged).toMatchObject({ records: null, triggers: 2, functions: 1 });
    expect(mergeFeatures({ endpoints: true, inboundCapture: false, temporal: true }, { endpoints: false })).toEqual({
      endpoints: false,
      inboundCapture: false,
      temporal: true,
    });
  });
});

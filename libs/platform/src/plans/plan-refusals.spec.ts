import { describe, expect, it } from '@jest/globals';
import type { WorkspacePlan } from '@strata/contracts';
import { renderError, statusInShape } from '../errors/render-error.js';
import { featureRefusal, quotaRefusal } from './plan-refusals.js';

const plan: WorkspacePlan = {
  workspaceSlug: 'acme',
  plan: 'small',
  limits: {
    records: 3,
    storageBytes: null,
    functionExecutionsPerMonth: 10,
    functions: 2,
    triggers: 2,
    orchestrations: 2,
    webhookSubscriptions: 0,
    serviceAccounts: 2,
  },
  features: { endpoints: false, inboundCapture: true, temporal: true },
};

describe('quotaRefusal', () => {
  it('leaves room up to the limit and refuses past it, with the limit and the usage', () => {
    expect(quotaRefusal(plan, 'records', 2)).toBeUndefined();
    const refused = quotaRefusal(plan, 'records', 3);
    expect(refused?.code).toBe('QUOTA_EXCEEDED');
    expect(refused?.details).toEqual({ plan: 'small', resource: 'records', limit: 3, usage: 3 });
    expect(refused?.message).toContain("plan 'small' allows 3 records and the workspace has 3");
  });

  it('refuses a batch that would pass the limit whole, and never an unlimited resource', () => {
    expect(quotaRefusal(plan, 'records', 1, 2)).toBeUndefined();
    expect(quotaRefusal(plan, 'records', 1, 3)?.message).toContain('this request adds 3');
    expect(quotaRefusal(plan, 'storageBytes', 1e15, 1e6)).toBeUndefined();
    expect(quotaRefusal(plan, 'webhookSubscriptions', 0)?.details).toMatchObject({ limit: 0, usage: 0 });
  });
});

describe('featureRefusal', () => {
  it('refuses a feature the plan turns off with PLAN_RESTRICTED, and nothing else', () => {
    expect(featureRefusal(plan, 'inboundCapture')).toBeUndefined();
    const refused = featureRefusal(plan, 'endpoints');
    expect(refused?.code).toBe('PLAN_RESTRICTED');
    expect(refused?.status).toBe(403);
    expect(refused?.details).toEqual({ plan: 'small', feature: 'endpoints', enabled: false });
  });
});

describe('plan refusals in each error shape', () => {
  const quota = quotaRefusal(plan, 'functions', 2)!;
  const e = { status: quota.status, code: quota.code, message: quota.message, details: quota.details };

  it('answers a quota 429 in the records API and 403 elsewhere', () => {
    expect(statusInShape('records', e)).toBe(429);
    for (const shape of ['general', 'functions', 'orchestration'] as const) expect(statusInShape(shape, e)).toBe(403);
    expect(statusInShape('general', { status: 429, code: 'RATE_LIMITED' })).toBe(429);
  });

  it('keeps the details object in the records API and makes it the one details entry elsewhere', () => {
    expect(renderError('records', e)).toEqual({
      error: { code: 'QUOTA_EXCEEDED', message: quota.message, details: quota.details },
    });
    const entry = {
      field: 'functions',
      message: quota.message,
      plan: 'small',
      resource: 'functions',
      limit: 2,
      usage: 2,
    };
    expect(renderError('general', { ...e, status: 403 })).toMatchObject({ code: 'QUOTA_EXCEEDED', details: [entry] });
    expect(renderError('functions', { ...e, status: 403 })).toEqual({
      error: quota.message,
      statusCode: 403,
      details: [entry],
    });
    const restricted = featureRefusal(plan, 'endpoints')!;
    expect(
      renderError('orchestration', {
        status: 403,
        code: restricted.code,
        message: restricted.message,
        details: restricted.details,
      }),
    ).toEqual({
      error: 'forbidden',
      message: restricted.message,
      details: [
        { field: 'endpoints', message: restricted.message, plan: 'small', feature: 'endpoints', enabled: false },
      ],
    });
  });
});

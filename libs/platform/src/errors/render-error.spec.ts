import { describe, expect, it } from '@jest/globals';
import { renderError } from './render-error.js';

const e = { status: 404, code: 'RECORD_NOT_FOUND', message: 'Record not found', requestId: 'req-12345678' };

describe('renderError', () => {
  it('renders the four shapes of the specification', () => {
    expect(renderError('general', e)).toEqual({
      error: 'Not Found',
      message: 'Record not found',
      code: 'RECORD_NOT_FOUND',
      requestId: 'req-12345678',
    });
    expect(renderError('functions', e)).toEqual({ error: 'Record not found', statusCode: 404 });
    expect(renderError('records', e)).toEqual({ error: { code: 'RECORD_NOT_FOUND', message: 'Record not found' } });
    expect(renderError('orchestration', { ...e, status: 409 })).toEqual({
      error: 'conflict',
      message: 'Record not found',
    });
  });

  it('names every status the orchestration API answers, 405, 413 and 415 included', () => {
    const named = [400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 500, 503].map(
      (status) => (renderError('orchestration', { ...e, status }) as { error: string }).error,
    );
    expect(named).toEqual([
      'validation_error',
      'unauthorized',
      'forbidden',
      'not_found',
      'method_not_allowed',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
      'unprocessable',
      'rate_limited',
      'internal_error',
      'internal_error',
    ]);
  });

  it("names a rate limit QUOTA_EXCEEDED in the records shape, the spec's record code for 429", () => {
    const limited = { status: 429, code: 'RATE_LIMITED', message: 'Rate limit exceeded' };
    expect(renderError('records', limited)).toEqual({
      error: { code: 'QUOTA_EXCEEDED', message: 'Rate limit exceeded' },
    });
    expect(renderError('general', limited)).toMatchObject({ code: 'RATE_LIMITED' });
  });

  it('keeps field details where the shape has them', () => {
    const details = [{ field: 'name', message: 'required' }];
    expect(renderError('general', { ...e, status: 400, details })).toMatchObject({ details });
    expect(renderError('orchestration', { ...e, status: 400, details })).toEqual({
      error: 'validation_error',
      message: e.message,
      details,
    });
  });

  it('gives the functions shape the field messages as its error, and the details beside it', () => {
    const one = [{ field: 'name', message: 'Function name is required.' }];
    expect(
      renderError('functions', { status: 400, code: 'VALIDATION_ERROR', message: 'Validation failed', details: one }),
    ).toEqual({
      error: 'Function name is required.',
      statusCode: 400,
      details: one,
    });
    const two = [...one, { field: 'code', message: 'Function code is required.' }];
    expect(
      renderError('functions', { status: 400, code: 'VALIDATION_ERROR', message: 'Validation failed', details: two })
        .error,
    ).toBe('Function name is required. Function code is required.');
    const unpunctuated = [...two, { field: 'params', message: 'params must be an object' }, ...one];
    expect(
      renderError('functions', {
        status: 400,
        code: 'VALIDATION_ERROR',
        message: 'Validation failed',
        details: unpunctuated,
      }).error,
    ).toBe(
      'Function name is required. Function code is required. params must be an object; Function name is required.',
    );
    // Other errors with details keep their own message.
    expect(
      renderError('functions', { status: 400, code: 'INVALID_ID', message: "Invalid id 'x'", details: one }).error,
    ).toBe("Invalid id 'x'");
  });
});

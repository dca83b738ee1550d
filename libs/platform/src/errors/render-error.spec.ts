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

  it('keeps field details where the shape has them', () => {
    const details = [{ field: 'name', message: 'required' }];
    expect(renderError('general', { ...e, status: 400, details })).toMatchObject({ details });
    expect(renderError('orchestration', { ...e, status: 400, details })).toEqual({
      error: 'validation_error',
      message: e.message,
      details,
    });
  });
});

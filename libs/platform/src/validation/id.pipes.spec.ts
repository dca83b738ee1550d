import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@strata/contracts';
import { IntegerIdPipe, UuidPipe } from './id.pipes.js';

describe('UuidPipe', () => {
  const pipe = new UuidPipe();

  it('takes a UUID of any version, nil included, lowercased: it names nothing here (404), it is not malformed', () => {
    for (const id of [
      '3F2504E0-4F89-41D3-9A0C-0305E82C3301',
      '00000000-0000-0000-0000-000000000000',
      '018f6b2c-7d3e-7a1b-8c4d-5e6f7a8b9c0d',
    ]) {
      expect(pipe.transform(id, { type: 'param', data: 'id' })).toBe(id.toLowerCase());
    }
  });

  it('refuses anything else as INVALID_ID, naming the parameter', () => {
    for (const bad of ['abc', '3f2504e0-4f89-41d3-9a0c-0305e82c330', '3f2504e04f8941d39a0c0305e82c3301', '']) {
      expect(() => pipe.transform(bad, { type: 'param', data: 'deliveryId' })).toThrow(
        expect.objectContaining({
          code: ErrorCode.INVALID_ID,
          details: [{ field: 'deliveryId', message: 'must be a UUID' }],
        }),
      );
    }
  });
});

describe('IntegerIdPipe', () => {
  const pipe = new IntegerIdPipe();

  it('takes a positive integer up to the int4 maximum', () => {
    expect(pipe.transform('1', { type: 'param', data: 'id' })).toBe(1);
    expect(pipe.transform('2147483647', { type: 'param', data: 'version' })).toBe(2147483647);
  });

  it('refuses anything else as INVALID_ID, naming the parameter in the message and the field', () => {
    for (const bad of ['0', '-1', '01', '1.5', 'abc', '']) {
      expect(() => pipe.transform(bad, { type: 'param', data: 'version' })).toThrow(
        expect.objectContaining({
          code: ErrorCode.INVALID_ID,
          message: `Invalid version '${bad}': expected a positive integer`,
          details: [{ field: 'version', message: 'must be a positive integer' }],
        }),
      );
    }
    expect(() => pipe.transform('0', { type: 'param', data: 'id' })).toThrow("Invalid id '0'");
  });

  it('says a positive integer beyond the int4 maximum is too large, not that it is no integer', () => {
    for (const big of ['2147483648', '99999999999999999999']) {
      expect(() => pipe.transform(big, { type: 'param', data: 'id' })).toThrow(
        expect.objectContaining({
          code: ErrorCode.INVALID_ID,
          message: `Invalid id '${big}': ids go up to 2147483647`,
          details: [{ field: 'id', message: 'must be at most 2147483647' }],
        }),
      );
    }
  });
});

import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@strata/contracts';
import { UuidPipe } from './id.pipes.js';

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

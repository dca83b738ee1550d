import { describe, expect, it } from '@jest/globals';
import { checkUploadFields } from './upload-fields.js';

const check = (fields: Record<string, string>) => checkUploadFields(new Map(Object.entries(fields)), 100);

describe('checkUploadFields', () => {
  it('reads good fields', () => {
    const { fields, errors } = check({
      bucket: 'avatars',
      name: 'a/b.png',
      visibility: 'public',
      metadata: '{"k":1}',
      link: '{"collection":"posts","recordId":"6F1C3A52-8A5E-4A5B-9D1E-3F6A2B1C0D9E"}',
    });
    expect(errors).toEqual([]);
    expect(fields).toEqual({
      bucket: 'avatars',
      name: 'a/b.png',
      visibility: 'public',
      metadata: { k: 1 },
      link: { collection: 'posts', recordId: '6f1c3a52-8a5e-4a5b-9d1e-3f6a2b1c0d9e' },
    });
  });

  it('gives one detail per bad field', () => {
    const { errors } = check({
      bucket: 'Bad',
      name: '../x',
      visibility: 'open',
      metadata: '[]',
      link: '{"collection":"posts"}',
      extra: 'x',
    });
    expect(errors.map((e) => e.field)).toEqual(['extra', 'bucket', 'name', 'visibility', 'metadata', 'link']);
  });

  it('bounds metadata and refuses text that is not JSON', () => {
    expect(check({ metadata: JSON.stringify({ k: 'x'.repeat(200) }) }).errors[0]!.message).toMatch(/at most 100 bytes/);
    expect(check({ metadata: '{nope' }).errors[0]!.message).toMatch(/JSON object/);
    expect(check({ link: '{"collection":"posts","recordId":"x"}' }).errors[0]!.field).toBe('link');
  });
});

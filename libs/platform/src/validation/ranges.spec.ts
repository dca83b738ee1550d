import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsString, Max, validateSync } from 'class-validator';
import { IsNullable, IsOptional } from './optional.js';
import { isDateTime, MAX_INT32 } from './ranges.js';

describe('isDateTime', () => {
  it('accepts the ISO 8601 forms JavaScript and PostgreSQL read alike', () => {
    for (const ok of [
      '2026-02-28',
      '2024-02-29',
      '2026-02-28T10:00Z',
      '2026-02-28T10:00:00Z',
      '2026-02-28T10:00:00.123456+02:00',
      '0001-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
    ]) {
      expect([ok, isDateTime(ok)]).toEqual([ok, true]);
    }
  });

  it('refuses days a month lacks, year 0, extended years, week and ordinal dates, and non-strings', () => {
    for (const bad of [
      '2026-02-30',
      '2023-02-29',
      '2026-13-01',
      '0000-01-01T00:00:00Z',
      '+275760-09-14T00:00:00Z',
      '2026-W01',
      '2026-001',
      '20260101',
      '2026-01-01T25:00:00Z',
      'yesterday',
      '',
    ]) {
      expect([bad, isDateTime(bad)]).toEqual([bad, false]);
    }
    expect(isDateTime(1767225600000)).toBe(false);
    expect(isDateTime(null)).toBe(false);
  });
});

class Update {
  @IsOptional()
  @IsString()
  description?: string;

  @IsNullable()
  @IsString()
  expiresAt?: string | null;

  @IsOptional()
  @IsInt()
  @Max(MAX_INT32)
  version?: number;
}

function fieldsOf(plain: object): string[] {
  return validateSync(plainToInstance(Update, plain)).map((e) => e.property);
}

describe('IsOptional and IsNullable', () => {
  it('lets a field be left out, but validates null unless the field is nullable', () => {
    expect(fieldsOf({})).toEqual([]);
    expect(fieldsOf({ description: null })).toEqual(['description']);
    expect(fieldsOf({ expiresAt: null })).toEqual([]);
    expect(fieldsOf({ version: null })).toEqual(['version']);
  });

  it('bounds integers by the int4 column they reach', () => {
    expect(fieldsOf({ version: MAX_INT32 })).toEqual([]);
    expect(fieldsOf({ version: MAX_INT32 + 1 })).toEqual(['version']);
    expect(fieldsOf({ version: 1e308 })).toEqual(['version']);
  });
});

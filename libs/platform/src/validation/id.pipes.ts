import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { ANY_UUID, ErrorCode } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';

/** The largest integer id (the int4 columns' maximum). */
const MAX_ID = 2_147_483_647;

/**
 * A positive integer in a path (a service account's id, a function's version);
 * anything else is 400 INVALID_ID, naming the parameter (`Invalid version '0'`).
 */
@Injectable()
export class IntegerIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata?: ArgumentMetadata): number {
    const name = metadata?.data ?? 'id';
    if (!/^[1-9][0-9]*$/.test(value)) {
      throw new StrataException(ErrorCode.INVALID_ID, `Invalid ${name} '${value}': expected a positive integer`, [
        { field: name, message: 'must be a positive integer' },
      ]);
    }
    // A positive integer, only too large for any id (ids are int4): say so rather than "not an integer".
    const n = value.length <= 10 ? Number(value) : Infinity;
    if (n > MAX_ID) {
      throw new StrataException(ErrorCode.INVALID_ID, `Invalid ${name} '${value}': ids go up to ${MAX_ID}`, [
        { field: name, message: `must be at most ${MAX_ID}` },
      ]);
    }
    return n;
  }
}

/** A UUID in a path; anything else is 400 INVALID_ID, naming the parameter. */
@Injectable()
export class UuidPipe implements PipeTransform<string, string> {
  transform(value: string, metadata?: ArgumentMetadata): string {
    if (!ANY_UUID.test(value)) {
      throw new StrataException(ErrorCode.INVALID_ID, `Invalid id '${value}': expected a UUID`, [
        { field: metadata?.data ?? 'id', message: 'must be a UUID' },
      ]);
    }
    return value.toLowerCase();
  }
}

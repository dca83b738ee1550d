import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { ANY_UUID, ErrorCode } from '@strata/contracts';
import { StrataException } from '../errors/strata.exception.js';

/**
 * A positive integer in a path (a service account's id, a function's version);
 * anything else is 400 INVALID_ID, naming the parameter (`Invalid version '0'`).
 */
@Injectable()
export class IntegerIdPipe implements PipeTransform<string, number> {
  transform(value: string, metadata?: ArgumentMetadata): number {
    const n = /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n > 2_147_483_647) {
      const name = metadata?.data ?? 'id';
      throw new StrataException(ErrorCode.INVALID_ID, `Invalid ${name} '${value}': expected a positive integer`, [
        { field: name, message: 'must be a positive integer' },
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

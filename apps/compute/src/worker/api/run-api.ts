import { Injectable } from '@nestjs/common';
import type { WorkspaceScope } from '@strata/db';
import { RunBridge } from '../run-bridge.js';
import { hmacSha256 } from './crypto-api.js';
import { DataApi } from './data-api.js';
import { recordHandlers } from './records-api.js';

/** Builds the host side of `api` for one run, within the run's own workspace. */
@Injectable()
export class RunApi {
  constructor(private readonly data: DataApi) {}

  bridgeFor(scope: WorkspaceScope): RunBridge {
    return new RunBridge({ hmacSha256, ...recordHandlers(this.data, scope) });
  }
}

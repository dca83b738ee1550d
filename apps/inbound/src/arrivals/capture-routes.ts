import type { DirectRoute } from '@strata/platform';
import { setDeprecationHeaders } from '@strata/platform';
import { ArrivalsService } from './arrivals.service.js';
import { LEGACY_SUNSET, legacySuccessor } from './legacy-entry.js';

/** `/data/workspace/{workspace}/api/v1/{http-trigger|webhook}/{path}`, only characters that need no decoding. */
const CAPTURE_PATH = /^\/data\/workspace\/([A-Za-z0-9_-]+)\/api\/v1\/(http-trigger|webhook)\/([A-Za-z0-9_-]+)$/;

/**
 * The capture entry points as direct routes (served from `node:http`, ahead of
 * Express and Nest): a provider's arrivals are the busiest requests this
 * service takes, and Nest's request pipeline was about a tenth of its CPU per
 * arrival (docs/performance.md, inbound). They answer exactly what
 * {@link HttpTriggerController} answers, with the same service; any request in
 * another form (a percent-encoded path, a trailing slash) goes to that controller.
 */
export function captureRoutes(arrivals: ArrivalsService): DirectRoute[] {
  return [
    {
      method: 'POST',
      pattern: CAPTURE_PATH,
      errorShape: 'functions',
      name: '/data/workspace/:workspace/api/v1/:entry/:path',
      async handle(req, res, [workspace, entry, path]) {
        if (entry === 'webhook')
          setDeprecationHeaders(res, { sunset: LEGACY_SUNSET, successor: legacySuccessor(workspace!, path!) });
        return { status: 202, body: await arrivals.receive(req, workspace!, path!) };
      },
    },
  ];
}

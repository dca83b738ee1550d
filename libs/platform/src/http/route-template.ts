import type { IncomingMessage } from 'node:http';

const ROUTE_TEMPLATE = Symbol('strata:route-template');

type Marked = IncomingMessage & { [ROUTE_TEMPLATE]?: string; route?: { path?: unknown } };

/**
 * Names the route a request took, for what Express cannot name itself: a direct route, or a
 * handler mounted with `use` (the OIDC provider). Request metrics read it.
 */
export function setRouteTemplate(req: IncomingMessage, template: string): void {
  (req as Marked)[ROUTE_TEMPLATE] = template;
}

/** The template of the route that answered: one set by `setRouteTemplate`, or the Express route Nest registered. */
export function routeTemplateOf(req: IncomingMessage): string | undefined {
  const marked = req as Marked;
  if (marked[ROUTE_TEMPLATE] !== undefined) return marked[ROUTE_TEMPLATE];
  return typeof marked.route?.path === 'string' ? marked.route.path : undefined;
}

/** The legacy entry point's sunset (the routing table's deprecated variants use the same date). */
export const LEGACY_SUNSET = '2026-10-29';

/** Where a legacy `/webhook/{path}` arrival should go instead. */
export function legacySuccessor(workspace: string, path: string): string {
  return `/data/workspace/${workspace}/api/v1/http-trigger/${encodeURIComponent(path)}`;
}

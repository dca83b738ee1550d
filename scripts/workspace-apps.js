// The monorepo's apps, read from the folders of apps/ so that every app (and every
// app added later) is known to ESLint's import boundaries and to Jest's module map.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

/**
 * Every folder of apps/ and the package name it is imported by (its package.json's
 * `name`, else `@strata/<folder>`), sorted by folder.
 * @returns {{ folder: string, name: string }[]}
 */
export function workspaceApps() {
  return readdirSync(join(ROOT, 'apps'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const manifest = join(ROOT, 'apps', entry.name, 'package.json');
      const name = existsSync(manifest)
        ? /** @type {{ name?: string }} */ (JSON.parse(readFileSync(manifest, 'utf8'))).name
        : undefined;
      return { folder: entry.name, name: name ?? `@strata/${entry.name}` };
    })
    .sort((a, b) => a.folder.localeCompare(b.folder));
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ROOT } from './chart.js';

interface Manifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

function manifests(folder: string): Manifest[] {
  return readdirSync(join(ROOT, folder))
    .map((dir) => join(ROOT, folder, dir, 'package.json'))
    .filter((file) => existsSync(file))
    .map((file) => JSON.parse(readFileSync(file, 'utf8')) as Manifest);
}

describe('the apps’ production dependencies', () => {
  const libs = new Map(manifests('libs').map((m) => [m.name, m]));

  /** The workspace libraries an app loads, through each other too. */
  function libsOf(manifest: Manifest, seen = new Set<string>()): Set<string> {
    for (const dep of Object.keys(manifest.dependencies ?? {})) {
      const lib = libs.get(dep);
      if (lib && !seen.has(dep)) {
        seen.add(dep);
        libsOf(lib, seen);
      }
    }
    return seen;
  }

  // A library's peer (Nest, TypeORM) is found in an image only if the app itself depends on it:
  // `pnpm deploy --prod` installs no library's devDependencies (deploy/Dockerfile).
  it.each(manifests('apps').map((m) => [m.name, m] as const))(
    '%s depends on every peer of the libraries it uses',
    (_name, app) => {
      const missing = [...libsOf(app)].flatMap((lib) =>
        Object.keys(libs.get(lib)!.peerDependencies ?? {})
          .filter((peer) => !(peer in (app.dependencies ?? {})))
          .map((peer) => `${peer} (a peer of ${lib})`),
      );
      expect(missing).toEqual([]);
    },
  );
});

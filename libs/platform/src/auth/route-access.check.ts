import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ACCESS, WORKSPACE_LESS, type AccessRule } from './access.decorators.js';

/** The URL parameters that name a route's workspace (the access guard reads the same ones). */
export const WORKSPACE_PARAMS = ['workspace', 'workspaceSlug'] as const;

export interface RouteProblem {
  readonly route: string;
  readonly problem: string;
}

/**
 * Checks every controller route: it declares an access rule (a permission,
 * `@Authenticated()` or `@Public()`), and a route that is not public names its
 * workspace in the path (`:workspace`) unless it is marked `@WorkspaceLess()`.
 * A route without a workspace parameter would get no WorkspaceScope, and its
 * handler could only reach tenant data by minting one: that is a design
 * decision to make explicitly, not a default.
 */
export function routeProblems(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): RouteProblem[] {
  const problems: RouteProblem[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || !wrapper.metatype) continue;
    const controllerPaths = pathsOf(Reflect.getMetadata(PATH_METADATA, wrapper.metatype));
    const proto = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(proto)) {
      const handler = proto[name] as (...args: unknown[]) => unknown;
      const methodPath: unknown = Reflect.getMetadata(PATH_METADATA, handler);
      if (methodPath === undefined) continue;
      const route = `${wrapper.name}.${name}`;
      const targets = [handler, wrapper.metatype];
      const rule = reflector.getAllAndOverride<AccessRule | undefined>(ACCESS, targets);
      if (!rule) {
        problems.push({ route, problem: 'declares no @RequirePermission, @Authenticated or @Public' });
        continue;
      }
      if (rule.kind === 'public' || reflector.getAllAndOverride<boolean | undefined>(WORKSPACE_LESS, targets)) continue;
      const full = controllerPaths.flatMap((c) => pathsOf(methodPath).map((m) => `${c}/${m}`));
      const unscoped = full.filter((path) => !namesWorkspace(path));
      if (unscoped.length > 0) {
        problems.push({
          route,
          problem: `has no :workspace parameter (${unscoped.join(', ')}) and is not marked @WorkspaceLess()`,
        });
      }
    }
  }
  return problems;
}

function pathsOf(metadata: unknown): string[] {
  if (Array.isArray(metadata)) return metadata.map(String);
  return [typeof metadata === 'string' ? metadata : ''];
}

function namesWorkspace(path: string): boolean {
  return path.split('/').some((segment) => WORKSPACE_PARAMS.some((p) => segment === `:${p}`));
}

/** Refuses to boot while any route breaks the rules of {@link routeProblems}. */
@Injectable()
export class RouteAccessCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const problems = routeProblems(this.discovery, this.scanner, this.reflector);
    if (problems.length > 0) {
      throw new Error(`unsafe routes: ${problems.map((p) => `${p.route} ${p.problem}`).join('; ')}`);
    }
  }
}

import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { ACCESS } from './access.decorators.js';

/** Lists the routes that declare neither a permission, `@Authenticated()` nor `@Public()`. */
export function routesWithoutAccessRule(
  discovery: DiscoveryService,
  scanner: MetadataScanner,
  reflector: Reflector,
): string[] {
  const missing: string[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as object | undefined;
    if (!instance || !wrapper.metatype) continue;
    const proto = Object.getPrototypeOf(instance) as Record<string, unknown>;
    for (const name of scanner.getAllMethodNames(proto)) {
      const handler = proto[name] as (...args: unknown[]) => unknown;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      if (!reflector.getAllAndOverride(ACCESS, [handler, wrapper.metatype])) missing.push(`${wrapper.name}.${name}`);
    }
  }
  return missing;
}

/** Refuses to boot while any route lacks an access rule: an unguarded route is a bug, not a default. */
@Injectable()
export class RouteAccessCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const missing = routesWithoutAccessRule(this.discovery, this.scanner, this.reflector);
    if (missing.length > 0) {
      throw new Error(`routes without @RequirePermission, @Authenticated or @Public: ${missing.join(', ')}`);
    }
  }
}

import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { Readiness } from '@strata/platform';
import { StorageConfig } from '../storage.config.js';
import { LocalDriver } from './local-driver.js';
import { StorageDriver } from './storage-driver.js';

/** The driver STORAGE_DRIVER names. */
export function driverOf(config: StorageConfig): StorageDriver {
  switch (config.STORAGE_DRIVER) {
    case 'local':
      return new LocalDriver(config.STORAGE_LOCAL_DIR);
  }
}

/** `/readyz` answers 503 while the driver's store cannot be used. */
@Injectable()
class DriverReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: Readiness,
    private readonly driver: StorageDriver,
  ) {}

  onModuleInit(): void {
    this.readiness.register('storage-driver', () => this.driver.check());
  }
}

@Module({
  providers: [{ provide: StorageDriver, useFactory: driverOf, inject: [StorageConfig] }, DriverReadiness],
  exports: [StorageDriver],
})
export class DriversModule {}

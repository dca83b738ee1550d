import { Injectable } from '@nestjs/common';

/**
 * Tells this replica's migration runner that a job was started or cancelled, so that it
 * starts at once instead of at its next poll (other replicas find it by polling).
 */
@Injectable()
export class MigrationSignals {
  private readonly listeners: (() => void)[] = [];

  onWake(listener: () => void): void {
    this.listeners.push(listener);
  }

  wake(): void {
    for (const listener of this.listeners) listener();
  }
}

import { Logger, type OnApplicationShutdown, Injectable } from '@nestjs/common';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ServiceConfig } from '../config/service-config.js';
import { natsConnectionOptions } from './nats-credentials.js';

/** The service's one NATS connection, opened at boot and drained at shutdown. */
@Injectable()
export class NatsConnectionHolder implements OnApplicationShutdown {
  private readonly logger = new Logger('Nats');
  private connection: Promise<NatsConnection> | undefined;

  constructor(private readonly config: ServiceConfig) {}

  get(): Promise<NatsConnection> {
    this.connection ??= connect({
      servers: this.config.NATS_URL.replace(/^nats:\/\//, ''),
      name: `strata-${process.pid}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
      // Without this, every request (each JetStream publish, each rate-limit
      // compare-and-set) captures two stack traces up front, in case it fails or
      // times out. A timeout's stack then points at the timer, not the caller.
      noAsyncTraces: true,
      ...natsConnectionOptions(this.config),
    }).catch((err: unknown) => {
      this.connection = undefined;
      throw err;
    });
    return this.connection;
  }

  async onApplicationShutdown(): Promise<void> {
    const pending = this.connection;
    this.connection = undefined;
    if (!pending) return;
    try {
      await (await pending).drain();
    } catch (err) {
      this.logger.warn({ msg: 'NATS drain failed', err: String(err) });
    }
  }
}

import { Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { serviceDataSourceOptions } from '@strata/db';
import { DatabaseReadiness, PlatformModule, type Clock } from '@strata/platform';
import { ArrivalsService } from './arrivals/arrivals.service.js';
import { InboundMetrics } from './metrics/inbound-metrics.js';
import { ComputeLink } from './arrivals/compute-link.js';
import { HttpTriggerController } from './arrivals/http-trigger.controller.js';
import { ArrivalDispatcher } from './dispatch/arrival-dispatcher.js';
import { InboundSweeps } from './dispatch/inbound-sweeps.js';
import { InboundRetention } from './events/inbound-retention.js';
import { InboundEventEntity } from './events/inbound-event.entity.js';
import { InboundEventsRepository } from './events/inbound-events.repository.js';
import { InboundConfig } from './inbound.config.js';
import { InboundEventsController } from './inbound-events/inbound-events.controller.js';
import { InboundEventsService } from './inbound-events/inbound-events.service.js';
import { INBOUND_SCHEMA, MIGRATIONS } from './migrations/index.js';

/** What an inbound service is built with besides its settings. */
export interface InboundAppOptions {
  /** The clock of arrival times, signature tolerance and the sweeps (the system clock unless given). */
  readonly clock?: Clock;
}

export const INBOUND_ENTITIES = [InboundEventEntity];

@Module({})
export class InboundAppModule {
  static forRoot(config: InboundConfig, options: InboundAppOptions = {}): DynamicModule {
    return {
      module: InboundAppModule,
      imports: [
        TypeOrmModule.forRoot(
          serviceDataSourceOptions({
            url: config.DATABASE_URL,
            schema: INBOUND_SCHEMA,
            entities: INBOUND_ENTITIES,
            migrations: MIGRATIONS,
          }),
        ),
        PlatformModule.forRoot({ config, clock: options.clock }),
      ],
      controllers: [HttpTriggerController, InboundEventsController],
      providers: [
        InboundEventsRepository,
        ComputeLink,
        ArrivalDispatcher,
        ArrivalsService,
        InboundMetrics,
        InboundEventsService,
        InboundSweeps,
        InboundRetention,
        DatabaseReadiness,
      ],
    };
  }
}

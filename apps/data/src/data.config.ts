import { IsInt, Max, Min } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

/** Settings of the data service (environment variables; initialisers are the defaults). */
export class DataConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  DATA_PORT = 8082;
}

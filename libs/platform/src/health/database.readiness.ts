import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Readiness } from './readiness.js';

/** `/readyz` answers 503 while the database does not. */
@Injectable()
export class DatabaseReadiness implements OnModuleInit {
  constructor(
    private readonly readiness: Readiness,
    private readonly db: DataSource,
  ) {}

  onModuleInit(): void {
    this.readiness.register('database', async () => {
      await this.db.query('SELECT 1');
    });
  }
}

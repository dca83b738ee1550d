import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Transactions } from '@strata/db';

/** `Transactions` over the service's data source: how services open a transaction without holding the DataSource. */
export const TransactionsProvider: Provider = {
  provide: Transactions,
  useFactory: (db: DataSource) => new Transactions(db),
  inject: [DataSource],
};

import { Module } from '@nestjs/common';
import { CollectionsModule } from '../collections/collections.module.js';
import { RecordsModule } from '../records/records.module.js';
import { LanguageController } from './language/language.controller.js';
import { LanguageService } from './language/language.service.js';
import { QueryController } from './query.controller.js';
import { QueryService } from './query.service.js';
import { SavedQueriesController } from './saved/saved-queries.controller.js';
import { SavedQueriesRepository } from './saved/saved-queries.repository.js';
import { SavedQueriesService } from './saved/saved-queries.service.js';

/** Queries: the canonical definition, the string language and saved queries. */
@Module({
  imports: [CollectionsModule, RecordsModule],
  controllers: [QueryController, LanguageController, SavedQueriesController],
  providers: [QueryService, LanguageService, SavedQueriesRepository, SavedQueriesService],
})
export class QueryModule {}

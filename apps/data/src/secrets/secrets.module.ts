import { Module } from '@nestjs/common';
import { RecordSecrets } from './record-secrets.js';

/** Record secrets: sealing, opening and masking secret fields with the key ring. */
@Module({ providers: [RecordSecrets], exports: [RecordSecrets] })
export class SecretsModule {}

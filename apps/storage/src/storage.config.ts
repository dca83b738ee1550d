import { IsBoolean, IsIn, IsInt, IsString, Max, Min, MinLength } from 'class-validator';
import { ServiceConfig } from '@strata/platform';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Settings of the storage service (environment variables; initialisers are the defaults). */
export class StorageConfig extends ServiceConfig {
  @IsInt()
  @Min(0)
  @Max(65535)
  STORAGE_PORT = 8088;

  /** Where the bytes are kept: `local` (a directory). `nats` and `s3` are to come (docs/storage.md, "Drivers"). */
  @IsIn(['local'])
  STORAGE_DRIVER = 'local' as const;

  /**
   * The `local` driver's directory (created when missing). One replica, or a volume every
   * replica shares; a relative path is taken from the process's working directory.
   */
  @IsString()
  @MinLength(1)
  STORAGE_LOCAL_DIR = 'data/storage';

  /** The largest file a bucket may allow (`maxFileBytes` above this is refused). */
  @IsInt()
  @Min(1)
  @Max(1024 * GIB)
  STORAGE_MAX_FILE_BYTES = 5 * GIB;

  /** The implicit `default` bucket's size limit, in bytes. */
  @IsInt()
  @Min(1)
  @Max(1024 * GIB)
  STORAGE_DEFAULT_BUCKET_MAX_FILE_BYTES = 50 * MIB;

  /** Largest `metadata` field of an upload (its JSON text), in bytes. */
  @IsInt()
  @Min(16)
  @Max(64 * 1024)
  STORAGE_MAX_METADATA_BYTES = 8 * 1024;

  /**
   * An upload whose file row is not written this long after it started (the process died
   * while it streamed) has its bytes purged. Longer than the longest upload you expect.
   */
  @IsInt()
  @Min(1000)
  @Max(7 * 24 * 3_600_000)
  STORAGE_UPLOAD_ABANDON_AFTER_MS = 3_600_000;

  /** Whether this replica runs the purge sweep (bytes of deleted files and abandoned uploads). */
  @IsBoolean()
  STORAGE_PURGER_ENABLED = true;

  /** How often the purge sweep runs (it also runs right after a delete). */
  @IsInt()
  @Min(50)
  @Max(3_600_000)
  STORAGE_PURGE_INTERVAL_MS = 5000;

  /** How long `Idempotency-Key` answers of uploads are kept, in hours (as DATA_IDEMPOTENCY_WINDOW_HOURS). */
  @IsInt()
  @Min(1)
  @Max(24 * 30)
  STORAGE_IDEMPOTENCY_WINDOW_HOURS = 24;
}

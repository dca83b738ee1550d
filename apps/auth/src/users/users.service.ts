import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { hashPassword, newUuid, verifyPassword } from '@strata/crypto';
import { isUniqueViolation } from '@strata/db';

export interface User {
  id: string;
  email: string;
  displayName: string;
  isPlatformAdmin: boolean;
  disabled: boolean;
}

interface UserRow {
  id: string;
  email: string;
  display_name: string;
  is_platform_admin: boolean;
  disabled_at: Date | null;
  password_hash: string;
}

const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  displayName: r.display_name,
  isPlatformAdmin: r.is_platform_admin,
  disabled: r.disabled_at !== null,
});

/** People who log in interactively. Passwords are kept as scrypt hashes. */
@Injectable()
export class UsersService {
  private readonly logger = new Logger('Users');
  /** Compared against when the email is unknown, so both paths cost one scrypt. */
  private readonly decoy = hashPassword('decoy-password-for-timing');

  constructor(private readonly db: DataSource) {}

  async findById(id: string): Promise<User | undefined> {
    const rows: UserRow[] = await this.db.query('SELECT * FROM iam.users WHERE id = $1', [id]);
    return rows[0] ? toUser(rows[0]) : undefined;
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const rows: UserRow[] = await this.db.query('SELECT * FROM iam.users WHERE lower(email) = lower($1)', [email]);
    return rows[0] ? toUser(rows[0]) : undefined;
  }

  /** The user whose email and password match, if any and not disabled. */
  async authenticate(email: string, password: string): Promise<User | undefined> {
    const rows: UserRow[] = await this.db.query('SELECT * FROM iam.users WHERE lower(email) = lower($1)', [email]);
    const row = rows[0];
    const ok = await verifyPassword(password, row?.password_hash ?? (await this.decoy));
    if (!row || !ok || row.disabled_at) return undefined;
    return toUser(row);
  }

  async create(
    email: string,
    password: string,
    options: { displayName?: string; isPlatformAdmin?: boolean } = {},
  ): Promise<User> {
    const id = newUuid();
    const hash = await hashPassword(password);
    const rows: UserRow[] = await this.db.query(
      `INSERT INTO iam.users (id, email, password_hash, display_name, is_platform_admin)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [id, email, hash, options.displayName ?? '', options.isPlatformAdmin ?? false],
    );
    return toUser(rows[0]!);
  }

  /** Creates the first administrator when no user exists yet. Safe to run from every replica. */
  async ensureAdmin(email: string, password: string): Promise<void> {
    const [{ count }] = await this.db.query<[{ count: number }]>('SELECT count(*)::int AS count FROM iam.users');
    if (count > 0) return;
    try {
      await this.create(email, password, { displayName: 'Administrator', isPlatformAdmin: true });
      this.logger.log({ msg: 'created the first administrator', email });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
}

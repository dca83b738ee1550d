import { Injectable, Logger } from '@nestjs/common';
import { hashPassword, newUuid, verifyPassword } from '@strata/crypto';
import { isUniqueViolation } from '@strata/db';
import { SignInMetrics } from '../sign-in-throttle/sign-in-metrics.js';
import { UsersRepository, type UserRow } from './users.repository.js';

export interface User {
  id: string;
  email: string;
  displayName: string;
  isPlatformAdmin: boolean;
  disabled: boolean;
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

  constructor(
    private readonly users: UsersRepository,
    private readonly metrics: SignInMetrics,
  ) {}

  async findById(id: string): Promise<User | undefined> {
    const row = await this.users.findById(id);
    return row ? toUser(row) : undefined;
  }

  async findByEmail(email: string): Promise<User | undefined> {
    const row = await this.users.findByEmail(email);
    return row ? toUser(row) : undefined;
  }

  /** The user whose email and password match, if any and not disabled. */
  async authenticate(email: string, password: string): Promise<User | undefined> {
    const row = await this.users.findByEmail(email);
    const ok = await verifyPassword(password, row?.password_hash ?? (await this.decoy));
    this.metrics.passwordChecked(row && ok ? 'match' : 'mismatch');
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
    const row = await this.users.insert({
      id,
      email,
      passwordHash: hash,
      displayName: options.displayName ?? '',
      isPlatformAdmin: options.isPlatformAdmin ?? false,
    });
    return toUser(row);
  }

  /** Creates the first administrator when no user exists yet. Safe to run from every replica. */
  async ensureAdmin(email: string, password: string): Promise<void> {
    if ((await this.users.count()) > 0) return;
    try {
      await this.create(email, password, { displayName: 'Administrator', isPlatformAdmin: true });
      this.logger.log({ msg: 'created the first administrator', email });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
}

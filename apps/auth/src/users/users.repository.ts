import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { managerOf, type Tx } from '@strata/db';

export interface UserRow {
  id: string;
  email: string;
  display_name: string;
  is_platform_admin: boolean;
  disabled_at: Date | null;
  password_hash: string;
}

/** iam.users: people, who belong to workspaces through groups; the table itself is not per workspace. */
@Injectable()
export class UsersRepository {
  constructor(private readonly db: DataSource) {}

  async findById(id: string): Promise<UserRow | undefined> {
    const rows = await this.db.query<UserRow[]>('SELECT * FROM iam.users WHERE id = $1', [id]);
    return rows[0];
  }

  /**
   * The user's row, locked until `tx` ends: a user's workspace creations (which count
   * against the user's quota) take their turn behind it.
   */
  async lockForUpdate(tx: Tx, id: string): Promise<UserRow | undefined> {
    const rows = await managerOf(this.db, tx).query<UserRow[]>('SELECT * FROM iam.users WHERE id = $1 FOR UPDATE', [
      id,
    ]);
    return rows[0];
  }

  async findByEmail(email: string): Promise<UserRow | undefined> {
    const rows = await this.db.query<UserRow[]>('SELECT * FROM iam.users WHERE lower(email) = lower($1)', [email]);
    return rows[0];
  }

  async insert(user: {
    id: string;
    email: string;
    passwordHash: string;
    displayName: string;
    isPlatformAdmin: boolean;
  }): Promise<UserRow> {
    const rows = await this.db.query<UserRow[]>(
      `INSERT INTO iam.users (id, email, password_hash, display_name, is_platform_admin)
       VALUES ($1, $2, $3, $4, $5) RETURNING *`,
      [user.id, user.email, user.passwordHash, user.displayName, user.isPlatformAdmin],
    );
    return rows[0]!;
  }

  async count(): Promise<number> {
    const [row] = await this.db.query<{ count: number }[]>('SELECT count(*)::int AS count FROM iam.users');
    return row!.count;
  }
}

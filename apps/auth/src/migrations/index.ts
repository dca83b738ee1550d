import { IamInitial1763600000000 } from './1763600000000-iam-initial.js';

export const IAM_SCHEMA = 'iam';
export const MIGRATIONS = [IamInitial1763600000000];

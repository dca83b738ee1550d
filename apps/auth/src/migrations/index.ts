import { IamInitial1763600000000 } from './1763600000000-iam-initial.js';
import { FunctionsInvokeTriggers1763600000001 } from './1763600000001-functions-invoke-triggers.js';
import { IamSealBindings1766100000005 } from './1766100000005-iam-seal-bindings.js';
import { SignInFailures1766300000000 } from './1766300000000-sign-in-failures.js';
import { WorkspaceCreators1766300000001 } from './1766300000001-workspace-creators.js';
import { OidcRetention1766400001000 } from './1766400001000-oidc-retention.js';
import { PolicyCollections1767400000000 } from './1767400000000-policy-collections.js';
import { WorkspacePlans1767500000000 } from './1767500000000-workspace-plans.js';

export const IAM_SCHEMA = 'iam';
export const MIGRATIONS = [
  IamInitial1763600000000,
  FunctionsInvokeTriggers1763600000001,
  IamSealBindings1766100000005,
  SignInFailures1766300000000,
  WorkspaceCreators1766300000001,
  OidcRetention1766400001000,
  PolicyCollections1767400000000,
  WorkspacePlans1767500000000,
];

import { Body, Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { errors } from 'oidc-provider';
import type Provider from 'oidc-provider';
import { Public } from '@strata/platform';
import { UsersService } from '../users/users.service.js';
import { LoginWorkspacesRepository } from './login-workspaces.repository.js';
import { WorkspacesService } from '../workspaces/workspaces.service.js';
import { AuthConfig } from '../auth.config.js';
import { OidcService } from './oidc.service.js';
import { loginPage } from './login-page.js';
import { SignInThrottle, type SignInRefusal } from '../sign-in-throttle/sign-in-throttle.service.js';
import { clientAddressOf, refusalBody, refusalMessage } from '../sign-in-throttle/sign-in-refusal.js';

interface LoginForm {
  email?: unknown;
  password?: unknown;
  workspace?: unknown;
}

/**
 * The interactive part of the authorization-code flow: a login form, then
 * consent granted on the user's behalf (the only interactive client is
 * first-party) with the workspace chosen at login.
 */
@ApiExcludeController()
@Public()
@Controller('interaction')
export class InteractionController {
  constructor(
    private readonly oidc: OidcService,
    private readonly users: UsersService,
    private readonly workspaces: WorkspacesService,
    private readonly loginWorkspaces: LoginWorkspacesRepository,
    private readonly config: AuthConfig,
    private readonly throttle: SignInThrottle,
  ) {}

  @Get(':uid')
  async show(@Param('uid') uid: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const details = await this.details(req, res);
    if (!details) return;
    const workspace = typeof details.params['workspace'] === 'string' ? details.params['workspace'] : undefined;
    res.type('html').send(loginPage({ uid, ...(workspace ? { workspace } : {}) }));
  }

  @Post(':uid/login')
  async login(
    @Param('uid') uid: string,
    @Body() form: LoginForm,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const provider = this.oidc.current();
    const details = await this.details(req, res);
    if (!details) return;
    const email = typeof form.email === 'string' ? form.email.trim() : '';
    const password = typeof form.password === 'string' ? form.password : '';
    const asked = typeof form.workspace === 'string' ? form.workspace.trim() : '';
    const fail = (status: number, error: string): void => {
      res
        .status(status)
        .type('html')
        .send(loginPage({ uid, email, workspace: asked, error }));
    };
    if (!email || !password) return fail(400, 'Email and password are required.');
    // Decided before scrypt runs: a refused attempt costs no password hash (docs/identity.md, "Guessing").
    const attempt = await this.throttle.beginLogin(email, clientAddressOf(req));
    if ('limit' in attempt) return this.refuse(req, res, attempt, () => fail(429, refusalMessage(attempt)));
    const user = await this.users.authenticate(email, password);
    if (!user) return fail(401, 'Wrong email or password.');
    await this.throttle.loginSucceeded(attempt);

    let workspace = asked || undefined;
    if (workspace && !(await this.workspaces.isMember(user.id, workspace))) {
      return fail(403, `You are not a member of workspace '${workspace}'.`);
    }
    if (!workspace) {
      const mine = await this.workspaces.listForUser(user.id);
      if (mine.length === 1) workspace = mine[0]!.slug;
    }

    const clientId = String(details.params['client_id']);
    const grant = new provider.Grant({ accountId: user.id, clientId });
    grant.addOIDCScope('openid email');
    grant.addResourceScope(this.config.API_AUDIENCE, 'openid');
    const grantId = await grant.save();
    if (workspace) {
      await this.loginWorkspaces.remember(grantId, workspace);
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: user.id }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  }

  /**
   * 429 with `Retry-After`: the spec's general error body to a client that asks for JSON,
   * the login page with the message to a browser (and to a client that takes anything).
   */
  private refuse(req: Request, res: Response, refusal: SignInRefusal, page: () => void): void {
    res.set({ 'Retry-After': String(refusal.retryAfterSeconds), 'Cache-Control': 'no-store' });
    if (req.accepts(['html', 'json']) === 'json') {
      res.status(429).json(refusalBody(refusal, req));
      return;
    }
    page();
  }

  /** The pending interaction, or a 400 page when it is unknown or expired (start the login again). */
  private async details(
    req: Request,
    res: Response,
  ): Promise<Awaited<ReturnType<Provider['interactionDetails']>> | undefined> {
    try {
      return await this.oidc.current().interactionDetails(req, res);
    } catch (err) {
      if (!(err instanceof errors.OIDCProviderError)) throw err;
      res.status(400).type('text').send('This login session is unknown or has expired. Start the login again.');
      return undefined;
    }
  }
}

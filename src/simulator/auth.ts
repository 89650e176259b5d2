/**
 * Users, login, tokens and lockouts of interface A (4.2); B accepts the same tokens plus static ones.
 *
 * Choices where interfaces.md is silent:
 * - Tokens are HS256 JWTs signed with a per-process random secret; the simulator also keeps a session per
 *   `jti`, so DELETE authenticate can end one session. Expiry is tracked in milliseconds (`iat` and `exp` carry
 *   fractional seconds, which RFC 7519 NumericDate allows) and shortened by the fault `clockSpeed`.
 * - Renewing does not end the old token: requests already in flight with it keep working until it expires.
 * - Consecutive wrong passwords are counted per user; the attempt that reaches maximumLoginAttempts locks
 *   the user for lockTimeout minutes (divided by clockSpeed) and is answered 401 "Account locked", as is
 *   every login of that user (even with the right password) until the lock ends. A successful login resets
 *   the count. An unknown user is 401 and is not counted.
 * - A user whose password has expired gets 403 "Password expired" for the right password and must use
 *   change-expired-password (which needs no token, as the user cannot get one).
 * - setup-wizard needs no token and works once: the first call (setup not complete) logs in the first
 *   configured user and completes setup; later calls are 400 "Setup already completed".
 * - kba-password-reset needs no token: the knowledge-based answers are given on the instrument's screen, so
 *   the simulator treats them as verified and returns an auth result for the first configured user.
 */
import { createHash, randomBytes, randomUUID } from 'crypto';

import { FieldErrors, isObject, requireObject, requireString } from './json-fields';
import { signJwt, verifyJwt } from './jwt';
import { HttpProblem, unauthorized, validationProblem } from './problem';
import type { AuthResult, PolicySettings, SimUser } from './types';

export interface Principal {
  kind: 'jwt' | 'static';
  username: string;
  jti?: string;
}

interface UserRecord {
  username: string;
  password: string;
  passwordExpired: boolean;
  kbaAnswer?: string;
  userId: string;
  failures: number;
  lockedUntil: number;
}

interface Session {
  username: string;
  expiresAt: number;
  revoked: boolean;
}

export interface AuthOptions {
  users: SimUser[];
  tokenLifetimeSeconds: number;
  /** 'nbf': nbf and exp in whole seconds, no iat (ASP.NET's JwtSecurityToken); default 'iat' */
  tokenClaims?: 'iat' | 'nbf';
  /** the instrument's clock minus the host's (ms): the token's claims are dated by it, its expiry kept on the host's */
  clockOffsetMs?: number;
  instrumentTokens: string[];
  policy: () => PolicySettings;
  clockSpeed: () => number;
  /** the real instrument's leniency: renew-token with `{}` (no credentials) renews the bearer's own user */
  lenient?: boolean;
}

export const ROLES = ['ModifyUsers', 'ModifyProtocols', 'ExecuteValidatedItems', 'HandleErrors', 'ModifySettings'];

export class AuthService {
  /** kept for the life of the process, so tokens survive restart() */
  private readonly secret = randomBytes(32);
  private readonly sessions = new Map<string, Session>();
  private users = new Map<string, UserRecord>();
  private setupComplete = false;
  logins = 0;
  renewals = 0;
  failedLogins = 0;

  constructor(private readonly options: AuthOptions) {
    this.reset();
  }

  /** Users back to their configured state, lockouts and counters cleared; issued tokens stay valid. */
  reset(): void {
    this.users = new Map();
    for (const u of this.options.users) {
      this.users.set(u.username.toLowerCase(), {
        username: u.username,
        password: u.password,
        passwordExpired: u.passwordExpired ?? false,
        kbaAnswer: u.kbaAnswer,
        userId: createHash('md5').update(`labwire-user:${u.username}`).digest('hex'),
        failures: 0,
        lockedUntil: 0,
      });
    }
    this.setupComplete = false;
    this.logins = 0;
    this.renewals = 0;
    this.failedLogins = 0;
  }

  setPasswordExpired(username: string, expired: boolean): void {
    const user = this.users.get(username.toLowerCase());
    if (!user) throw new Error(`unknown simulator user '${username}'`);
    user.passwordExpired = expired;
  }

  /** As if an administrator changed the user's password on the instrument. */
  setPassword(username: string, password: string): void {
    const user = this.users.get(username.toLowerCase());
    if (!user) throw new Error(`unknown simulator user '${username}'`);
    user.password = password;
  }

  /** POST authenticate */
  authenticate(body: unknown): AuthResult {
    const { username, password } = readCredentials(body);
    const user = this.checkPassword(username, password);
    if (user.passwordExpired) {
      throw new HttpProblem(
        403,
        `The password of user '${user.username}' has expired; change it with POST /api/v1/authenticate/change-expired-password.`,
        {
          title: 'Password expired',
        },
      );
    }
    this.logins++;
    return this.issue(user);
  }

  /**
   * POST renew-token: a valid bearer plus the same credentials. Lenient (the default, as the hardware-tested client
   * sends it): an empty object `{}` renews the bearer's own user; strict: credentials are required.
   */
  renew(principal: Principal | undefined, body: unknown): AuthResult {
    if (!principal) throw unauthorized();
    const bare = this.options.lenient === true && isObject(body) && Object.keys(body).length === 0;
    const user = bare ? this.bearerUser(principal) : this.checkPasswordOf(body);
    if (principal.kind === 'jwt' && principal.username.toLowerCase() !== user.username.toLowerCase()) {
      throw new HttpProblem(403, 'The credentials do not belong to the user of the bearer token.');
    }
    if (user.passwordExpired)
      throw new HttpProblem(403, `The password of user '${user.username}' has expired.`, { title: 'Password expired' });
    this.renewals++;
    return this.issue(user);
  }

  private checkPasswordOf(body: unknown): UserRecord {
    const { username, password } = readCredentials(body);
    return this.checkPassword(username, password);
  }

  /** The user a bearer token was issued to (renewal with `{}`); a locked user is refused as at login. */
  private bearerUser(principal: Principal): UserRecord {
    const user = this.users.get(principal.username.toLowerCase());
    if (!user || principal.kind !== 'jwt') throw unauthorized();
    if (user.lockedUntil > Date.now()) throw lockedProblem(user, Date.now());
    return user;
  }

  /** DELETE authenticate */
  logout(principal: Principal | undefined): void {
    if (!principal?.jti) throw unauthorized();
    const session = this.sessions.get(principal.jti);
    if (session) session.revoked = true;
  }

  /** POST change-expired-password */
  changeExpiredPassword(body: unknown): void {
    const obj = requireObject(body);
    const errors = new FieldErrors();
    const userName = errors.check(() => requireString(obj, 'userName'));
    const oldPassword = errors.check(() => requireString(obj, 'oldPassword'));
    const newPassword = errors.check(() => requireString(obj, 'newPassword'));
    errors.throwIfAny();
    const user = this.checkPassword(userName as string, oldPassword as string);
    const min = this.options.policy().minimumPasswordLength;
    if ((newPassword as string).length < min) {
      throw validationProblem({ newPassword: [`The new password must have at least ${min} characters.`] });
    }
    if (newPassword === oldPassword) throw validationProblem({ newPassword: ['The new password must differ from the old one.'] });
    user.password = newPassword as string;
    user.passwordExpired = false;
  }

  /** POST setup-wizard: once, while setup is not complete. */
  setupWizard(): AuthResult {
    if (this.setupComplete)
      throw new HttpProblem(400, 'Setup has already been completed; log in with POST /api/v1/authenticate.', {
        title: 'Setup already completed',
      });
    const user = this.firstUser();
    this.setupComplete = true;
    this.logins++;
    return this.issue(user);
  }

  /** POST kba-password-reset: the answers were checked on the instrument's screen. */
  kbaPasswordReset(): AuthResult {
    const user = this.firstUser();
    this.logins++;
    return this.issue(user);
  }

  /** The principal of an Authorization header, or undefined when it is missing, forged, expired or logged out. */
  principalOf(header: string | undefined, api: 'A' | 'B'): Principal | undefined {
    if (!header) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) return undefined;
    const token = m[1];
    if (api === 'B' && this.options.instrumentTokens.includes(token)) return { kind: 'static', username: 'instrument' };
    const claims = verifyJwt(token, this.secret);
    if (!claims) return undefined;
    const session = this.sessions.get(claims.jti);
    if (!session || session.revoked || Date.now() >= session.expiresAt) return undefined;
    return { kind: 'jwt', username: session.username, jti: claims.jti };
  }

  private firstUser(): UserRecord {
    const first = this.users.values().next();
    if (first.done) throw new HttpProblem(400, 'The simulator has no users configured.');
    return first.value;
  }

  private checkPassword(username: string, password: string): UserRecord {
    const user = this.users.get(username.toLowerCase());
    const now = Date.now();
    if (!user) {
      this.failedLogins++;
      throw unauthorized('Invalid user name or password.');
    }
    if (user.lockedUntil > now) {
      this.failedLogins++;
      throw lockedProblem(user, now);
    }
    if (user.password !== password) {
      this.failedLogins++;
      user.failures++;
      const policy = this.options.policy();
      if (policy.maximumLoginAttempts > 0 && user.failures >= policy.maximumLoginAttempts) {
        user.failures = 0;
        user.lockedUntil = now + (policy.lockTimeout * 60_000) / this.options.clockSpeed();
        throw lockedProblem(user, now);
      }
      throw unauthorized('Invalid user name or password.');
    }
    user.failures = 0;
    user.lockedUntil = 0;
    return user;
  }

  private issue(user: UserRecord): AuthResult {
    const now = Date.now();
    this.pruneSessions(now);
    const lifetimeMs = (this.options.tokenLifetimeSeconds * 1000) / this.options.clockSpeed();
    const expiresAt = now + lifetimeMs;
    const jti = randomUUID();
    const token = signJwt(
      {
        nameid: user.userId,
        given_name: user.username,
        role: [...ROLES],
        ...this.dated(now, lifetimeMs),
        jti,
      },
      this.secret,
    );
    this.sessions.set(jti, { username: user.username, expiresAt, revoked: false });
    const policy = this.options.policy();
    const passwordExpiresInDays = policy.passwordExpires;
    return {
      userName: user.username,
      userId: user.userId,
      token,
      inactiveLogout: policy.inactiveLogout,
      logoutCountdown: policy.logoutCountdown,
      expiresIn: Math.ceil(this.options.tokenLifetimeSeconds / 60),
      passwordExpiresInDays,
      notifyPasswordExpiresSoon: passwordExpiresInDays <= policy.passwordExpiresNotification,
    };
  }

  /** The claims dating a token issued at `now` (the host's clock) for `lifetimeMs`, by the instrument's clock. */
  private dated(now: number, lifetimeMs: number): { iat: number; exp: number } | { nbf: number; exp: number } {
    const at = now + (this.options.clockOffsetMs ?? 0);
    if (this.options.tokenClaims === 'nbf') {
      const nbf = Math.floor(at / 1000);
      return { nbf, exp: nbf + Math.round(lifetimeMs / 1000) };
    }
    // NumericDate may be fractional: millisecond precision keeps sped-up (few-second) tokens honest.
    return { iat: at / 1000, exp: (at + lifetimeMs) / 1000 };
  }

  private pruneSessions(now: number): void {
    for (const [jti, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(jti);
  }
}

function readCredentials(body: unknown): { username: string; password: string } {
  if (!isObject(body)) throw validationProblem({ $: ['The body must be a JSON object with username and password.'] });
  const errors = new FieldErrors();
  const username = errors.check(() => requireString(body, 'username'));
  const password = errors.check(() => requireString(body, 'password'));
  errors.throwIfAny();
  return { username: username as string, password: password as string };
}

function lockedProblem(user: UserRecord, now: number): HttpProblem {
  const seconds = Math.ceil((user.lockedUntil - now) / 1000);
  return new HttpProblem(
    401,
    `The account '${user.username}' is locked after too many failed login attempts; try again in ${seconds} s.`,
    {
      title: 'Account locked',
      headers: { 'WWW-Authenticate': 'Bearer' },
    },
  );
}

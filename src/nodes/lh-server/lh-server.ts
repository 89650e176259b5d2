import { withActor } from '../../audit';
import { asLhError, type ClientOptions, LhError, LiquidHandlerClient, type SessionState, trimBase, validate } from '../../client';
import { leaseFailover } from '../../coordination/failover';
import { instrumentIdentity } from '../../coordination/instrument-identity';
import { attachHome } from '../../instrument';
import { publishLab } from '../../observe/lab-events';
import { askCameraAgain } from '../deck/snapshot';
import { httpAdminBasicChecked, requestUser, serverAuditTrail } from '../shared/audit';
import { isCoordinationNode } from '../shared/coordination-node';
import { registerMetricsRoute } from '../shared/metrics-route';
import { migrateConfig } from '../shared/migrations';
import { logError, logInfo, logWarn } from '../shared/node-log';
import { type AdminRequest, type AdminResponse, asNode, type NodeConfig, type Red } from '../shared/node-red';
import { onPasswordWarning } from '../shared/password-warning';
import { forgetSecrets, redactDeep, rememberSecrets } from '../shared/redaction';
import { ServerConnection } from '../shared/server-connection';
import { isServerNode, type LhServerNode } from '../shared/server-node';
import { simulatorTlsOptions, tlsOptionsFrom } from '../shared/tls-config';
import {
  chooseCredentials,
  crossSiteReason,
  isJsonContentType,
  rebindingReason,
  type ServerSecrets,
  targetOf,
  testedDeployedLogin,
} from './admin-guard';
import { accountActionMessage, testConnection } from './connection-test';
import { expandEnvUrl } from './env-url';
import { keptRejections } from './kept-rejections';
import { startSessionCheck } from './session-check';
import { DEFAULT_TIMEOUT_MS, timeoutSetting } from './timeout';

const CLOSE_TIMEOUT_MS = 3000;
/** How long a close waits for the audit outcomes of the requests it aborted before the trail closes. */
const AUDIT_SETTLE_MS = 1000;

/** The configured request timeout (ms), 10 s when empty or not a number > 0 (the node says so at start). */
function requestTimeoutOf(config: NodeConfig): number {
  return timeoutSetting(config.timeout) ?? DEFAULT_TIMEOUT_MS;
}

/**
 * A refused login (rejected, expired password, locked out) is said once per lh-server, when its session is refused,
 * not by each node of the instrument (they show it in their status): loginRefusalOf keeps them from saying it again.
 */
function sayLoginRefusals(node: LhServerNode, client: LiquidHandlerClient): void {
  client.on('session', (state: SessionState) => {
    if (state === 'login-failed' || state === 'password-expired' || state === 'locked')
      logWarn(node, client.session.loginBlockedBy?.message ?? `login refused (${state})`);
  });
}

/**
 * The URLs as used: `${NAME}` and `${NAME:-default}` expanded from Node-RED's environment (the global environment of
 * the runtime, then the process's; env-url.ts). `node`: the deployed lh-server (its flow's environment), if any.
 */
function urlsOf(RED: Red, config: NodeConfig, node?: unknown): { baseUrl: string; instrumentUrl: string } {
  const util = RED.util as unknown as { getSetting?: (n: unknown, name: string) => unknown };
  const lookup = (name: string): string | undefined => {
    const value = typeof util.getSetting === 'function' ? util.getSetting(node ?? null, name) : process.env[name];
    return typeof value === 'string' ? value : value === undefined || value === null ? undefined : String(value);
  };
  return {
    baseUrl: expandEnvUrl('baseUrl', String(config.baseUrl ?? '').trim(), lookup),
    instrumentUrl: expandEnvUrl('instrumentUrl', String(config.instrumentUrl ?? '').trim(), lookup),
  };
}

/** urlsOf(), or the URLs as written when a reference is broken (the client's construction reports that). */
function safeUrlsOf(RED: Red, config: NodeConfig, node: unknown): { baseUrl: string; instrumentUrl: string } {
  try {
    return urlsOf(RED, config, node);
  } catch {
    return { baseUrl: String(config.baseUrl ?? ''), instrumentUrl: String(config.instrumentUrl ?? '') };
  }
}

function clientOptions(RED: Red, config: NodeConfig, credentials: ServerSecrets, node?: unknown): ClientOptions {
  const urls = urlsOf(RED, config, node);
  return {
    baseUrl: urls.baseUrl,
    instrumentUrl: urls.instrumentUrl || undefined,
    timeoutMs: requestTimeoutOf(config),
    tls: tlsOptionsFrom(RED, config.tls, 'lh-server') ?? (config.simulatorCa === true ? simulatorTlsOptions() : undefined),
    credentials: { username: credentials.username || undefined, password: credentials.password },
    instrumentToken: credentials.instrumentToken || undefined,
    allowInsecureInstrument: config.allowInsecureInstrument === true,
  };
}

export = function register(RED: Red): void {
  function LhServer(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this) as LhServerNode;
    // unnamed: its A URL as written (an env reference stays a reference), never a query or fragment (refused below)
    node.displayName = config.name || String(config.baseUrl ?? '').split(/[?#]/)[0];
    node.clientKey = String(config.clientKey ?? '');
    // the instrument's identity is where the URLs point once expanded (a broken reference fails below, as a config error)
    const urls = safeUrlsOf(RED, config, node);
    node.instrumentKey = `${trimBase(urls.baseUrl)}|${trimBase(urls.instrumentUrl)}`;
    node.target = targetOf(config);
    // everything this Node-RED knows of the instrument lives in its home, shared with its other lh-server nodes
    const attachment = attachHome(node.instrumentKey);
    // the metrics: gauges of an instrument no lh-server node names any more are taken off the page
    const about = { instrumentKey: node.instrumentKey, instrument: node.displayName };
    publishLab({ ...about, kind: 'server', present: true });
    node.on('close', () => publishLab({ ...about, kind: 'server', present: false }));
    node.home = attachment.home;
    attachment.home.logins.keepIn(keptRejections(RED.settings.userDir, attachment.home.identity));
    if (timeoutSetting(config.timeout) === undefined)
      logWarn(
        node,
        `timeout: ${JSON.stringify(config.timeout)} is not a number of milliseconds above 0: requests wait ${DEFAULT_TIMEOUT_MS} ms, the default (set Timeout (ms) in the lh-server node, or leave it empty)`,
      );
    const remembered = rememberSecrets(node.id, [node.credentials?.password, node.credentials?.instrumentToken]);
    let audit: ReturnType<typeof serverAuditTrail>;
    let stopSessionCheck = (): void => undefined;
    try {
      // every instrument-changing request of this node's client is audited (src/audit), secrets taken out
      const secrets = [node.credentials?.password, node.credentials?.instrumentToken].filter((s): s is string => Boolean(s));
      // with an lh-coordination node, the chain is the Redis stream the replicas share (joined first for that)
      joinCoordination(RED, node, config.coordination, requestTimeoutOf(config));
      audit = serverAuditTrail(RED, node, attachment.home, node.instrumentKey, () => secrets, node.coordinator);
      node.client = new LiquidHandlerClient({
        ...clientOptions(RED, config, node.credentials ?? {}, node),
        audit: audit?.trail,
        books: attachment.home,
      });
      // one reachability state for every node of this instrument: each request's outcome, the sockets, the session
      node.connection = new ServerConnection(
        (err) => logWarn(node, asLhError(err, 'connection-state').message),
        // once per instrument, not per node and poll: each node shows it in its status
        (change) =>
          change.state === 'offline'
            ? logWarn(
                node,
                `instrument unreachable (${change.interfaces.join(' and ')}${change.reason ? `: ${change.reason}` : ''}): its nodes show it in their status and keep trying`,
              )
            : logInfo(node, 'instrument reachable again'),
      );
      node.connection.attach(node.client);
      sayLoginRefusals(node, node.client);
      // said once per channel: an oversized frame closes the socket (the cap protects memory), polling goes on
      node.client.events.onNotice((notice) => logWarn(node, notice.message));
      onPasswordWarning(node.client, (warning) =>
        logWarn(node, `${warning.text}: change it on the instrument, then in this lh-server node`),
      );
      stopSessionCheck = startSessionCheck(node, node.client, ownSettings(RED).sessionCheckSeconds);
    } catch (err) {
      node.configError = asLhError(err, 'configure');
      node.client?.destroy(); // a coordination that is asked for and broken must not run uncoordinated (duplicates)
      node.client = undefined;
      node.connection?.close();
      node.connection = undefined;
      logError(node, node.configError.message);
    }

    node.on('close', (_removed: boolean, done: () => void) => {
      stopSessionCheck();
      node.connection?.close(); // its subscribers closed first (Node-RED closes flow nodes before config nodes)
      node.connection = undefined;
      if (node.coordinator) void node.coordinator.leave(node.instrumentKey);
      node.coordinator = undefined;
      node.coordination = undefined;
      const client = node.client;
      node.client = undefined;
      let released = false;
      const closeAudit = (): void => {
        if (released) return;
        released = true;
        void (audit?.release() ?? Promise.resolve())
          .catch(() => undefined)
          .then(() => (forgetSecrets(node.id, remembered), attachment.detach())) // once the client closed (its last login)
          .then(
            () => done(),
            () => done(),
          );
      };
      if (!client) return closeAudit();
      const timer = setTimeout(finish, CLOSE_TIMEOUT_MS);
      let finished = false;
      function finish(): void {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        client?.destroy();
        // the outcome records of requests the close aborted are written before the trail closes (bounded)
        const last = setTimeout(closeAudit, AUDIT_SETTLE_MS);
        void client?.auditSettled().then(() => {
          clearTimeout(last);
          closeAudit();
        });
      }
      client.close().then(finish, finish);
    });
  }

  RED.nodes.registerType('lh-server', LhServer, {
    credentials: {
      username: { type: 'text' },
      password: { type: 'password' },
      instrumentToken: { type: 'password' },
    },
  });

  registerAdminEndpoints(RED);
  registerMetricsRoute(RED, scrapersAndEditorOnly(RED));
};

/** With an lh-coordination node selected: joins its group for this instrument; throws when it is missing or invalid. */
function joinCoordination(RED: Red, node: LhServerNode, id: unknown, requestTimeoutMs: number): void {
  if (typeof id !== 'string' || id === '') return;
  const found = RED.nodes.getNode(id);
  if (!isCoordinationNode(found)) {
    throw new LhError('the lh-coordination node selected on the lh-server node is missing or not deployed', {
      kind: 'config',
      operation: 'configure',
      field: 'coordination',
    });
  }
  if (!found.coordinator) {
    throw new LhError(`the lh-coordination node is not valid: ${found.configError?.message ?? 'see its log'}`, {
      kind: 'config',
      operation: 'configure',
      field: 'coordination',
    });
  }
  node.coordinator = found.coordinator;
  // an answer claimed in the shared ledger may be in flight as long as a request may take: its claim holds that long
  node.coordination = found.coordinator.join(node.instrumentKey, { requestTimeoutMs });
  // from now on every answer to the instrument is claimed in Redis first, shared with the other Node-REDs
  const withdraw = node.home?.useAnswerClaims(found.coordinator.answerClaims(instrumentIdentity(node.instrumentKey)));
  if (withdraw) node.on('close', withdraw);
  // and every apply of a plan to one of its protocols holds the protocol's lock in Redis while it writes
  const unlock = node.home?.useApplyLocks(found.coordinator.applyLocks(node.instrumentKey));
  if (unlock) node.on('close', unlock);
  // the metrics' lease holder and failovers (the lease taken over from another replica, not back from itself)
  const coordination = node.coordination;
  const self = found.coordinator.replica;
  let role = coordination.state.role;
  let memory = leaseFailover({ otherSince: false }, role, coordination.state, self).memory;
  const about = { instrumentKey: node.instrumentKey, instrument: node.displayName };
  const off = coordination.onChange((state) => {
    const next = leaseFailover(memory, role, state, self);
    memory = next.memory;
    if (state.role === role) return;
    const failover = next.failover;
    role = state.role;
    if (state.role === 'holder' || state.role === 'standby')
      publishLab({ ...about, kind: 'lease', holder: state.role === 'holder', failover });
    // Redis lost: the lease lapses, nobody holds it (the metrics' gauge would say 1 for as long as Redis stays away)
    else if (state.role === 'lost') publishLab({ ...about, kind: 'lease', holder: false, lost: true });
  });
  node.on('close', off);
}

/** The deployed lh-server node of that id; undefined when nothing is deployed under it; a config error when it is another type. */
function deployedServer(RED: Red, id: unknown): LhServerNode | undefined {
  const found = typeof id === 'string' && id !== '' ? RED.nodes.getNode(id) : undefined;
  if (found === undefined || found === null) return undefined;
  if (!isServerNode(found)) {
    throw new LhError(`node ${JSON.stringify(id)} is not an lh-server node`, { kind: 'config', operation: 'admin', field: 'id' });
  }
  return found;
}

/** `typed`: secrets the request brought (a password typed in the dialog), taken out of an error answer too. */
function reply(res: AdminResponse, work: () => Promise<unknown>, typed: unknown[] = []): void {
  Promise.resolve()
    .then(work)
    .then(
      (body) => res.json(body),
      (err: unknown) => {
        const e = asLhError(err, 'admin');
        const secrets = typed.filter((s): s is string => typeof s === 'string');
        res.status(e.kind === 'validation' || e.kind === 'config' ? 400 : 502).json({ error: redactDeep(e.message, secrets) });
      },
    );
}

/** Refuses (415) every body that is not application/json: a cross-site HTML form cannot send one without a CORS preflight. */
function jsonOnly(req: AdminRequest, res: AdminResponse, next: () => void): void {
  const headers = (req as unknown as { headers?: Record<string, string | string[] | undefined> }).headers ?? {};
  if (isJsonContentType(headers['content-type'])) return next();
  res.status(415).json({ error: 'this endpoint accepts application/json bodies only' });
}

/**
 * The editor app answers every origin (`Access-Control-Allow-Origin: *`, and it grants CORS preflights): a foreign web
 * page could read the instrument's protocols and routines through the pickers, and post JSON after a preflight.
 * Requests from another site, or sent to a host name that is neither an address, localhost nor listed in settings.js
 * (DNS rebinding), are refused (403); the editor's own requests (same origin) and requests from no browser page pass.
 * Runs after the permission check: with adminAuth, a user who logged in (the editor's bearer token, which another
 * site cannot have) passes; an anonymous one (adminAuth's `default` user, which Node-RED lets in without a token, and
 * so lets in any web page) gets the checks as without adminAuth.
 */
function sameOriginReads(RED: Red): (req: AdminRequest, res: AdminResponse, next: () => void) => void {
  return (req, res, next) => {
    if (RED.settings.adminAuth && loggedIn(req)) return next();
    const headers = (req as unknown as { headers?: Record<string, string | string[] | undefined> }).headers ?? {};
    const why = crossSiteReason(headers) ?? rebindingReason(headers, editorHosts(RED), !!RED.settings.adminAuth);
    if (why === undefined) return next();
    res.removeHeader('Access-Control-Allow-Origin');
    res.status(403).json({ error: `cross-site read refused (${why}): this endpoint answers the Node-RED editor only` });
  };
}

/** Whether Node-RED's permission check found a user who logged in (not adminAuth's anonymous `default` user). */
function loggedIn(req: AdminRequest): boolean {
  const user = (req as unknown as { user?: { anonymous?: unknown } }).user;
  return !!user && typeof user === 'object' && user.anonymous !== true;
}

/**
 * The metrics page's guard (after the permission check): a request from a browser page (it names its site: Sec-Fetch-Site or
 * Origin) gets the editor endpoints' checks (other sites and rebound names refused, 403); a request with neither
 * (Prometheus, curl) passes by whatever host name it was sent to, as scrapers name the host they scrape.
 */
function scrapersAndEditorOnly(RED: Red): (req: AdminRequest, res: AdminResponse, next: () => void) => void {
  const sameOrigin = sameOriginReads(RED);
  return (req, res, next) => {
    const headers = (req as unknown as { headers?: Record<string, string | string[] | undefined> }).headers ?? {};
    if (headers['sec-fetch-site'] === undefined && headers.origin === undefined) return next();
    sameOrigin(req, res, next);
  };
}

/** settings.js `liquidHandler`: this package's own settings (editorHosts, sessionCheckSeconds). */
function ownSettings(RED: Red): { editorHosts?: unknown; sessionCheckSeconds?: unknown } {
  return (
    (RED.settings as unknown as { liquidHandler?: { editorHosts?: unknown; sessionCheckSeconds?: unknown } }).liquidHandler ?? {}
  );
}

/** settings.js `liquidHandler.editorHosts`: the names (other than addresses and localhost) the editor is reached by. */
function editorHosts(RED: Red): string[] {
  const hosts = ownSettings(RED).editorHosts;
  return Array.isArray(hosts) ? hosts.filter((h): h is string => typeof h === 'string') : [];
}

function registerAdminEndpoints(RED: Red): void {
  const sameOrigin = sameOriginReads(RED);
  const read = RED.auth.needsPermission('lh-server.read');
  const write = RED.auth.needsPermission('lh-server.write');

  // The edit dialog sends what is on screen; secrets the user did not retype come from the deployed node, and only
  // when the dialog still points at that node's addresses.
  RED.httpAdmin.post('/lh-server/test-connection', jsonOnly, write, sameOrigin, (req: AdminRequest, res: AdminResponse) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    reply(res, async () => {
      const server = deployedServer(RED, body.id);
      const choice = chooseCredentials(
        body,
        server?.target ? { target: server.target, credentials: server.credentials ?? {} } : undefined,
      );
      if (!choice.ok) throw new LhError(choice.message, { kind: 'config', operation: 'test-connection', field: 'password' });
      const config = {
        ...body,
        id: String(body.id ?? ''),
        type: 'lh-server',
        simulatorCa: body.simulatorCa === true,
        allowInsecureInstrument: body.allowInsecureInstrument === true,
      };
      const report = await testConnection(clientOptions(RED, config, choice.credentials, server));
      const deployed = server?.target ? { target: server.target, credentials: server.credentials ?? {} } : undefined;
      // the deployed node's own login worked (stored or typed again): its rejection no longer holds
      // ... and its camera, backed off after a 404 or a 401 a fresh login did not cure, is asked again at the next photo
      if (report.ok && server?.client && testedDeployedLogin(body, deployed, choice.credentials)) {
        server.client.session.allowLoginAgain();
        askCameraAgain(server.client);
      }
      // An instrument may echo the login: the editor gets no password back, not even the one typed.
      return redactDeep(report, [choice.credentials.password, choice.credentials.instrumentToken]);
    });
  });

  RED.httpAdmin.post(
    '/lh-server/:id/change-expired-password',
    jsonOnly,
    write,
    sameOrigin,
    (req: AdminRequest, res: AdminResponse) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      reply(res, async () => {
        const server = deployedServer(RED, req.params.id);
        if (!server?.client)
          throw new LhError('deploy the lh-server node first', { kind: 'config', operation: 'change-expired-password' });
        const creds = server.credentials ?? {};
        const oldPassword = typeof body.oldPassword === 'string' && body.oldPassword !== '' ? body.oldPassword : creds.password;
        const client = server.client;
        await withActor({ route: 'change-expired-password', user: requestUser(req, httpAdminBasicChecked(RED)) }, () =>
          client.prep.changeExpiredPassword(creds.username ?? '', oldPassword ?? '', body.newPassword as string),
        );
        return { ok: true, message: 'password changed: enter the new password in the lh-server node and deploy' };
        // an instrument refusing the change may quote the passwords it was sent
      }, [body.oldPassword, body.newPassword]);
    },
  );

  // setup-wizard and kba-password-reset answer with a login (a token): the editor gets only what it means.
  for (const action of ['setup-wizard', 'kba-password-reset'] as const) {
    RED.httpAdmin.post(`/lh-server/:id/${action}`, jsonOnly, write, sameOrigin, (req: AdminRequest, res: AdminResponse) => {
      reply(res, async () => {
        const server = deployedServer(RED, req.params.id);
        if (!server?.client) throw new LhError('deploy the lh-server node first', { kind: 'config', operation: action });
        const prep = server.client.prep;
        const result = await withActor({ route: action, user: requestUser(req, httpAdminBasicChecked(RED)) }, () =>
          action === 'setup-wizard' ? prep.setupWizard() : prep.kbaPasswordReset(),
        );
        return { ok: true, message: accountActionMessage(action, result) };
      });
    });
  }

  RED.httpAdmin.get('/lh-server/:id/protocols/:protocolId/steps', read, sameOrigin, (req: AdminRequest, res: AdminResponse) => {
    reply(res, async () => {
      const server = deployedServer(RED, req.params.id);
      if (!server?.client) return [];
      const steps = await server.client.prep.listSteps(req.params.protocolId, { includeFullStepData: false, limit: 500 });
      return steps.map((s) => ({ id: s.id, name: s.name, stepType: s.stepType, stepOrder: s.stepOrder }));
    });
  });

  RED.httpAdmin.get('/lh-server/:id/service-routines', read, sameOrigin, (req: AdminRequest, res: AdminResponse) => {
    reply(res, async () => {
      const server = deployedServer(RED, req.params.id);
      return server?.client ? server.client.prep.listServiceRoutines() : [];
    });
  });

  RED.httpAdmin.get('/lh-server/step-types', read, sameOrigin, (_req: AdminRequest, res: AdminResponse) => {
    res.json(validate.STEP_TYPES);
  });
}

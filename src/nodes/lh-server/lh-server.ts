import { asLhError, ClientOptions, LiquidHandlerClient, validate } from '../../client';
import { trimBase } from '../../client/transport';
import { AdminRequest, AdminResponse, asNode, NodeConfig, Red } from '../shared/node-red';
import { migrateConfig } from '../shared/migrations';
import { isServerNode, LhServerNode } from '../shared/server-node';
import { testConnection } from './connection-test';
import { simulatorTlsOptions, tlsOptionsFrom } from './tls';

const CLOSE_TIMEOUT_MS = 3000;
const PASSWORD_PLACEHOLDER = '__PWRD__';

function clientOptions(RED: Red, config: NodeConfig, credentials: Record<string, string | undefined>): ClientOptions {
  const timeout = Number(config.timeout);
  return {
    baseUrl: String(config.baseUrl ?? '').trim(),
    instrumentUrl: String(config.instrumentUrl ?? '').trim() || undefined,
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : 10000,
    tls: tlsOptionsFrom(RED, config.tls) ?? (config.simulatorCa === true ? simulatorTlsOptions() : undefined),
    credentials: { username: credentials.username || undefined, password: credentials.password },
    instrumentToken: credentials.instrumentToken || undefined,
  };
}

export = function register(RED: Red): void {
  function LhServer(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this) as LhServerNode;
    node.displayName = config.name || String(config.baseUrl ?? '');
    node.clientKey = String(config.clientKey ?? '');
    node.instrumentKey = `${trimBase(String(config.baseUrl ?? ''))}|${trimBase(String(config.instrumentUrl ?? ''))}`;
    try {
      node.client = new LiquidHandlerClient(clientOptions(RED, config, node.credentials ?? {}));
    } catch (err) {
      node.configError = asLhError(err, 'configure');
      node.error(node.configError.message);
    }

    node.on('close', (_removed: boolean, done: () => void) => {
      const client = node.client;
      node.client = undefined;
      if (!client) return done();
      const timer = setTimeout(finish, CLOSE_TIMEOUT_MS);
      let finished = false;
      function finish(): void {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        client?.transport.close();
        done();
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
};

function deployedServer(RED: Red, id: unknown): LhServerNode | undefined {
  const found = typeof id === 'string' && id !== '' ? RED.nodes.getNode(id) : undefined;
  return isServerNode(found) ? found : undefined;
}

function reply(res: AdminResponse, work: Promise<unknown>): void {
  work.then(
    (body) => res.json(body),
    (err: unknown) => {
      const e = asLhError(err, 'admin');
      res.status(e.kind === 'validation' || e.kind === 'config' ? 400 : 502).json({ error: e.message });
    },
  );
}

function registerAdminEndpoints(RED: Red): void {
  const read = RED.auth.needsPermission('lh-server.read');
  const write = RED.auth.needsPermission('lh-server.write');

  // The edit dialog sends what is on screen; secrets the user did not retype come from the deployed node.
  RED.httpAdmin.post('/lh-server/test-connection', write, (req: AdminRequest, res: AdminResponse) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const stored = (typeof body.id === 'string' && RED.nodes.getCredentials(body.id)) || {};
    const secret = (name: string): string | undefined => {
      const given = body[name];
      if (given === PASSWORD_PLACEHOLDER || given === undefined) return stored[name];
      return typeof given === 'string' ? given : undefined;
    };
    reply(
      res,
      (async () => {
        const options = clientOptions(RED, { ...body, id: String(body.id ?? ''), type: 'lh-server', simulatorCa: body.simulatorCa === true }, {
          username: typeof body.username === 'string' ? body.username : stored.username,
          password: secret('password'),
          instrumentToken: secret('instrumentToken'),
        });
        const report = await testConnection(options);
        const server = deployedServer(RED, body.id);
        if (report.ok && server?.client) server.client.session.allowLoginAgain();
        return report;
      })(),
    );
  });

  RED.httpAdmin.post('/lh-server/:id/change-expired-password', write, (req: AdminRequest, res: AdminResponse) => {
    const server = deployedServer(RED, req.params.id);
    const creds = RED.nodes.getCredentials(req.params.id) ?? {};
    const body = (req.body ?? {}) as Record<string, unknown>;
    reply(
      res,
      (async () => {
        if (!server?.client) throw asLhError(new Error('deploy the lh-server node first'), 'change-expired-password');
        const oldPassword = typeof body.oldPassword === 'string' && body.oldPassword !== '' ? body.oldPassword : creds.password;
        await server.client.prep.changeExpiredPassword(creds.username ?? '', oldPassword ?? '', body.newPassword as string);
        return { ok: true, message: 'password changed: enter the new password in the lh-server node and deploy' };
      })(),
    );
  });

  RED.httpAdmin.get('/lh-server/:id/protocols/:protocolId/steps', read, (req: AdminRequest, res: AdminResponse) => {
    const server = deployedServer(RED, req.params.id);
    reply(
      res,
      (async () => {
        if (!server?.client) return [];
        const steps = await server.client.prep.listSteps(req.params.protocolId, { includeFullStepData: false, limit: 500 });
        return steps.map((s) => ({ id: s.id, name: s.name, stepType: s.stepType, stepOrder: s.stepOrder }));
      })(),
    );
  });

  RED.httpAdmin.get('/lh-server/:id/service-routines', read, (req: AdminRequest, res: AdminResponse) => {
    const server = deployedServer(RED, req.params.id);
    reply(res, server?.client ? server.client.prep.listServiceRoutines() : Promise.resolve([]));
  });

  RED.httpAdmin.get('/lh-server/step-types', read, (_req: AdminRequest, res: AdminResponse) => {
    res.json(validate.STEP_TYPES);
  });
}

/** Interface A (preparation service, plain HTTP, under /api/v1): the route table. */
import { parseIdParam } from './json-fields';
import { machineRoutes, type MachineState } from './machine-status';
import { type MessageBoxBook, messageBoxRoutes } from './message-boxes';
import { type Reply, type RequestContext, type Route, Router } from './router';
import { runRoutes } from './run-routes';
import type { Services } from './services';
import { parseSoftwareSettings } from './settings';

const V1 = '/api/v1';

const ok = (body: unknown): Reply => ({ status: 200, body });
const noContent: Reply = { status: 204 };

/** Interface A's router: the preparation service, the run routes, the instrument's dialogs and machine reads. */
export function interfaceARouter(s: Services, boxes: MessageBoxBook, machine: () => MachineState): Router {
  return new Router().addAll(prepRoutes(s)).addAll(messageBoxRoutes(boxes)).addAll(machineRoutes(machine));
}

export function prepRoutes(s: Services): Route[] {
  const pid = (ctx: RequestContext): number => parseIdParam(ctx.params.protocolId, 'protocolId');
  const sid = (ctx: RequestContext): number => parseIdParam(ctx.params.stepId, 'stepId');
  const steps = `${V1}/protocols/{protocolId}/step`;
  return [
    // 4.2 Authenticate
    {
      method: 'POST',
      pattern: `${V1}/authenticate/setup-wizard`,
      body: 'none',
      auth: false,
      handle: () => ok(s.auth.setupWizard()),
    },
    {
      method: 'POST',
      pattern: `${V1}/authenticate/kba-password-reset`,
      body: 'none',
      auth: false,
      handle: () => ok(s.auth.kbaPasswordReset()),
    },
    { method: 'GET', pattern: `${V1}/authenticate/check-authentication`, body: 'none', auth: true, handle: () => ok(true) },
    {
      method: 'POST',
      pattern: `${V1}/authenticate`,
      body: 'json-patch',
      auth: false,
      handle: (ctx) => ok(s.auth.authenticate(ctx.body)),
    },
    {
      method: 'DELETE',
      pattern: `${V1}/authenticate`,
      body: 'none',
      auth: true,
      handle: (ctx) => {
        s.auth.logout(ctx.principal);
        return noContent;
      },
    },
    {
      method: 'POST',
      pattern: `${V1}/authenticate/renew-token`,
      body: 'json-patch',
      auth: true,
      handle: (ctx) => ok(s.auth.renew(ctx.principal, ctx.body)),
    },
    {
      method: 'POST',
      pattern: `${V1}/authenticate/change-expired-password`,
      body: 'json-patch',
      auth: false,
      handle: (ctx) => {
        s.auth.changeExpiredPassword(ctx.body);
        return noContent;
      },
    },

    // 4.1 Protocol steps (literal sub-paths before {stepId})
    {
      method: 'PUT',
      pattern: `${steps}/reorder-step`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        s.steps.reorder(pid(ctx), ctx.body);
        return noContent;
      },
    },
    {
      method: 'PUT',
      pattern: `${steps}/rename/{stepId}`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        s.steps.rename(pid(ctx), sid(ctx), ctx.body);
        return noContent;
      },
    },
    {
      method: 'PUT',
      pattern: `${steps}/disable/{stepId}`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        s.steps.setDisabled(pid(ctx), sid(ctx), ctx.body);
        return noContent;
      },
    },
    { method: 'POST', pattern: steps, body: 'json-patch', auth: true, handle: (ctx) => ok(s.steps.create(pid(ctx), ctx.body)) },
    { method: 'PUT', pattern: steps, body: 'json', auth: true, handle: (ctx) => ok(s.steps.update(pid(ctx), ctx.body)) },
    { method: 'GET', pattern: steps, body: 'none', auth: true, handle: (ctx) => ok(s.steps.list(pid(ctx), ctx.query)) },
    {
      method: 'GET',
      pattern: `${steps}/{stepId}`,
      body: 'none',
      auth: true,
      handle: (ctx) => ok(s.steps.get(pid(ctx), sid(ctx), ctx.query)),
    },
    {
      method: 'DELETE',
      pattern: `${steps}/{stepId}`,
      body: 'none',
      auth: true,
      handle: (ctx) => {
        s.steps.remove(pid(ctx), sid(ctx));
        return noContent;
      },
    },

    // 4.3 Errors (literal sub-paths before {errorId})
    {
      method: 'GET',
      pattern: `${V1}/errors/check-for-pending-errors`,
      body: 'none',
      auth: true,
      handle: () => ok(s.runtimeErrors.unhandled()),
    },
    {
      method: 'PUT',
      pattern: `${V1}/errors/runtime`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        s.runtimeErrors.answer(ctx.body);
        return noContent;
      },
    },
    {
      method: 'PUT',
      pattern: `${V1}/errors/clear-errors`,
      body: 'none',
      auth: true,
      handle: () => ok(s.runtimeErrors.clearAll()),
    },
    { method: 'GET', pattern: `${V1}/errors`, body: 'none', auth: true, handle: (ctx) => ok(s.runtimeErrors.list(ctx.query)) },
    {
      method: 'GET',
      pattern: `${V1}/errors/{errorId}`,
      body: 'none',
      auth: true,
      handle: (ctx) => ok(s.runtimeErrors.record(ctx.params.errorId)),
    },

    // 4.4 Settings and verification
    {
      method: 'GET',
      pattern: `${V1}/settings/software-settings`,
      body: 'none',
      auth: true,
      handle: () => ok({ ...s.settings.software }),
    },
    {
      method: 'POST',
      pattern: `${V1}/settings/software-settings`,
      body: 'json-patch',
      auth: true,
      handle: (ctx) => {
        s.settings.software = parseSoftwareSettings(ctx.body);
        return noContent;
      },
    },
    {
      method: 'GET',
      pattern: `${V1}/settings/policy-settings`,
      body: 'none',
      auth: true,
      handle: () => ok({ ...s.settings.policy }),
    },
    {
      method: 'GET',
      pattern: `${V1}/verification/service-routines`,
      body: 'none',
      auth: true,
      handle: () => ok(s.routines.list()),
    },
    {
      method: 'PUT',
      pattern: `${V1}/verification/service-routines`,
      body: 'json-patch',
      auth: true,
      handle: (ctx) => {
        s.routines.update(ctx.body);
        return noContent;
      },
    },
    {
      method: 'GET',
      pattern: `${V1}/verification/service-routines/{id}`,
      body: 'none',
      auth: true,
      handle: (ctx) => ok(s.routines.get(parseIdParam(ctx.params.id, 'id'))),
    },

    // protocols, protocol runs and run records (observed beyond interfaces.md)
    ...runRoutes(s.runs),
  ];
}

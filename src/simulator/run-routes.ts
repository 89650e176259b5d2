/** The run routes of interface A: protocols, protocol-run/*, run-data (the state machine is in run-machine.ts). */
import { field, isObject, parseBoolQuery, parseIdParam } from './json-fields';
import type { Reply, RequestContext, Route } from './router';
import type { RunMachine } from './run-machine';
import { pdfReport, pipettingCsv } from './run-records';

const V1 = '/api/v1';

/** The run routes of interface A (literal protocol sub-paths are matched before protocols/{id}). */
export function runRoutes(runs: RunMachine): Route[] {
  const ok = (body: unknown): Reply => ({ status: 200, body });
  const noContent: Reply = { status: 204 };
  const pid = (ctx: RequestContext): number => parseIdParam(ctx.params.protocolId, 'protocolId');
  const file = (body: Buffer, type: string, name: string): Reply => ({
    status: 200,
    body,
    headers: { 'Content-Type': type, 'Content-Disposition': `attachment; filename="${name}"` },
  });
  const safe = (id: string): string => id.replace(/[^A-Za-z0-9._-]/g, '_');
  return [
    { method: 'GET', pattern: `${V1}/protocols/names`, body: 'none', auth: true, handle: () => ok(runs.names()) },
    {
      method: 'GET',
      pattern: `${V1}/protocols/validate/{protocolId}`,
      body: 'none',
      auth: true,
      handle: (ctx) => ok(runs.validate(pid(ctx))),
    },
    {
      method: 'GET',
      pattern: `${V1}/protocols/{protocolId}`,
      body: 'none',
      auth: true,
      handle: (ctx) => ok(runs.protocol(pid(ctx), parseBoolQuery(ctx.query, 'includeFullStepData', true))),
    },
    { method: 'GET', pattern: `${V1}/protocol-run`, body: 'none', auth: true, handle: () => ok(runs.status()) },
    {
      method: 'POST',
      pattern: `${V1}/protocol-run/create`,
      body: 'json',
      auth: true,
      handle: (ctx) => runs.takeCreateFault() ?? ok(runs.create(ctx.body, ctx.principal?.username ?? 'anonymous')),
    },
    {
      method: 'GET',
      pattern: `${V1}/protocol-run/load-instructions`,
      body: 'none',
      auth: true,
      handle: () => ok(runs.loadInstructions()),
    },
    {
      method: 'PUT',
      pattern: `${V1}/protocol-run/load-complete`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        runs.loadComplete(ctx.body);
        return noContent;
      },
    },
    ...(['pause', 'resume', 'abort', 'cleanup-unloading'] as const).map((action): Route => ({
      method: 'PUT',
      pattern: `${V1}/protocol-run/${action}`,
      body: 'none',
      auth: true,
      handle: () => {
        if (action === 'pause') runs.pause();
        else if (action === 'resume') runs.resume();
        else if (action === 'abort') runs.abort();
        else runs.cleanupUnloading();
        return noContent;
      },
    })),
    {
      method: 'GET',
      pattern: `${V1}/protocol-run/simulation-speed`,
      body: 'none',
      auth: true,
      handle: () => ok({ simulationSpeed: runs.speedOnWire }),
    },
    {
      method: 'PUT',
      pattern: `${V1}/protocol-run/simulation-speed`,
      body: 'json',
      auth: true,
      handle: (ctx) => {
        runs.setSpeed(isObject(ctx.body) ? field(ctx.body, 'simulationSpeed') : ctx.body);
        return noContent;
      },
    },
    { method: 'GET', pattern: `${V1}/instruments/global-run-state`, body: 'none', auth: true, handle: () => ok(runs.state) },
    { method: 'GET', pattern: `${V1}/run-data`, body: 'none', auth: true, handle: () => ok(runs.records.list()) },
    {
      method: 'GET',
      pattern: `${V1}/run-data/{id}/pdf`,
      body: 'none',
      auth: true,
      handle: (ctx) => file(pdfReport(runs.records.get(ctx.params.id)), 'application/pdf', `run-${safe(ctx.params.id)}.pdf`),
    },
    {
      method: 'GET',
      pattern: `${V1}/run-data/{id}/pipetting-csv`,
      body: 'none',
      auth: true,
      handle: (ctx) =>
        file(pipettingCsv(runs.records.get(ctx.params.id)), 'text/csv; charset=utf-8', `pipetting-${safe(ctx.params.id)}.csv`),
    },
    {
      method: 'GET',
      pattern: `${V1}/run-data/{id}`,
      body: 'none',
      auth: true,
      handle: (ctx) => {
        const { steps, ...rest } = runs.records.get(ctx.params.id);
        return ok({ ...rest, steps: steps.map(({ fields: _f, ...s }) => s) });
      },
    },
  ];
}

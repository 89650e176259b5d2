/**
 * The package's Prometheus metrics page, `GET {httpAdminRoot}/lh/metrics`, behind Node-RED's admin auth
 * (`lh-server.read`: with `adminAuth` set, a scraper sends a bearer token of a user allowed to read). One registry per
 * process (src/observe/metrics.ts), made with the first lh-server type registered. `guard` runs after the permission
 * check: lh-server's refusal of foreign web pages (the editor app grants every origin a read), for every request but
 * one of a user who logged in.
 */
import { instrumentIdentity } from '../../coordination/instrument-identity';
import { LabMetrics } from '../../observe/metrics';
import type { AdminRequest, AdminResponse, Red } from './node-red';

let metrics: LabMetrics | undefined;

export const METRICS_PATH = '/lh/metrics';

export type AdminGuard = (req: AdminRequest, res: AdminResponse, next: () => void) => void;

export function registerMetricsRoute(RED: Red, guard: AdminGuard): void {
  metrics ??= new LabMetrics(Date.now, instrumentIdentity);
  const page = metrics;
  RED.httpAdmin.get(METRICS_PATH, RED.auth.needsPermission('lh-server.read'), guard, (_req: AdminRequest, res: AdminResponse) => {
    page.render().then(
      ({ contentType, body }) => {
        res.set('Content-Type', contentType);
        res.set('Cache-Control', 'no-store');
        res.send(body);
      },
      () => res.status(500).send('metrics could not be rendered'),
    );
  });
}

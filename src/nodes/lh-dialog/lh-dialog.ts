import { LhError } from '../../client';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { runOperationNode } from '../shared/operation-node';
import { resolveChoice } from '../shared/typed-inputs';
import { viewIdOf } from './view-id';

export = function register(RED: Red): void {
  function LhDialog(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }) => {
      const viewId = viewIdOf(msg);
      if (viewId === undefined) {
        throw new LhError(
          'viewId is required: wire a messagebox event from lh-events (msg.payload.data.viewId) or set msg.viewId',
          {
            kind: 'validation',
            operation: 'close-view',
            field: 'viewId',
          },
        );
      }
      const viewResult = resolveChoice(msg, 'viewResult', config.viewResult);
      if (viewResult === undefined || viewResult === null || viewResult === '') {
        throw new LhError(
          'viewResult is required: choose it in the dialog or set msg.viewResult (Ok, Yes, No, Cancel or Abort)',
          {
            kind: 'validation',
            operation: 'close-view',
            field: 'viewResult',
          },
        );
      }
      const asked = msg.viewResult;
      if (typeof asked === 'string' && asked.trim() !== '' && asked.trim().toLowerCase() !== String(viewResult).toLowerCase()) {
        // the dialog's answer chosen for a msg that asks another: pressing Ok for a rule that decided Cancel could run
        // on what the rule meant to stop; refused, as operation nodes refuse a msg.operation naming another (review41)
        throw new LhError(
          `msg.viewResult is "${asked}" but this node's Answer is "${String(viewResult)}", chosen in its dialog: nothing ` +
            'was sent (choose "from msg.viewResult" in the dialog to take it from the msg, or remove msg.viewResult)',
          { kind: 'validation', operation: 'close-view', field: 'viewResult' },
        );
      }
      // validated before anything is sent; a failed request is never resent: the instrument may have acted on it
      const body = await client.dialogs.closeView({ viewId, viewResult, viewInput: msg.viewInput });
      return { payload: body, status: { key: 'lh-dialog.status.closed', subs: { result: body.viewResult } } };
    });
  }
  RED.nodes.registerType('lh-dialog', LhDialog);
};

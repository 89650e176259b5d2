/**
 * Issue 17 point 2 (review 2): a start whose lh-run node was closed (redeployed, deleted) sends no further write to
 * the instrument. Property: the node is closed at any read of the start (status, validate, run records), on either
 * path (create, confirm loading, stop at loading); no write (create, load-complete) follows the close.
 */
import assert from 'node:assert/strict';

import fc from 'fast-check';

import { RunStateName } from '../../src/client';
import { startRun } from '../../src/nodes/lh-run/start-run';
import { notedWrites, runControl, runStatus, startOptions } from './start-run.support';

describe('lh-run start: nothing is written after the node was closed', function () {
  it('property: closed at any read, no write follows', async function () {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 8 }), fc.constantFrom('create', 'confirm', 'stop'), async (closeAtRead, path) => {
        let reads = 0;
        let closed = false;
        const events: string[] = [];
        const read = (name: string): void => {
          events.push(name);
          if (reads++ === closeAtRead) {
            closed = true;
            events.push('closed');
          }
        };
        const served: RunStateName[] =
          path === 'confirm' ? ['Loading', 'Loading', 'Running'] : ['Idle', 'Scheduling', 'Loading', 'Running'];
        let i = 0;
        const api = runControl({
          status: async () => {
            read('status');
            return runStatus(served[Math.min(i++, served.length - 1)]);
          },
          validateProtocol: async () => {
            read('validate');
            return { protocolId: 1, isValid: true, validationErrors: [] };
          },
          ...notedWrites(events, {}, 'WRITE '),
          loadInstructions: async () => {
            read('load-instructions');
            return [];
          },
          listRunData: async () => {
            read('run-data');
            return [];
          },
        });
        await startRun(
          api,
          startOptions({
            protocol: path === 'confirm' ? undefined : { id: 1 },
            stopAtLoading: path === 'stop',
            confirmLoading: path === 'confirm',
            stopped: () => closed,
          }),
        ).catch(() => undefined);
        const at = events.indexOf('closed');
        if (at >= 0)
          assert.deepEqual(
            events.slice(at).filter((e) => e.startsWith('WRITE')),
            [],
            events.join(', '),
          );
      }),
      { numRuns: 200 },
    );
  });
});

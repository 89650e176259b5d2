import { LhError } from '../../client';
import { snapshotMsgFields } from '../deck/snapshot';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { type OperationResult, runOperationNode } from '../shared/operation-node';
import { isChecked, resolveOperation, resolveSetting } from '../shared/typed-inputs';
import { initializeRefusal, INSTRUMENT_OPERATIONS, instrumentOperation } from './operations';

export = function register(RED: Red): void {
  function LhInstrument(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    runOperationNode(RED, node, config, async ({ client, msg }): Promise<OperationResult> => {
      const operation = instrumentOperation(resolveOperation(msg, config.operation, INSTRUMENT_OPERATIONS, 'lh-instrument'));
      const setting = (name: string): Promise<unknown> =>
        resolveSetting(RED, node, msg, name, config[name], config[`${name}Type`]);
      switch (operation) {
        case 'initialize': {
          // the instrument's start slot, held from the read of the run state to the answer: a run start of this
          // Node-RED under way (its run not yet in progress) is not homed under, nor a run started while it homes
          const starting = client.runStarts.current();
          if (starting) {
            const refusal = initializeRefusal({ protocolRunState: 'Idle', isRunInProgress: false }, starting.what);
            throw new LhError(refusal ?? '', { kind: 'validation', operation, field: 'operation' });
          }
          const claim = client.runStarts.claim('initialize', operation);
          try {
            const refusal = initializeRefusal(await client.runs.status());
            if (refusal) throw new LhError(refusal, { kind: 'validation', operation, field: 'operation' });
            await client.deck.initialize();
          } finally {
            claim.release();
          }
          return { payload: null, status: { key: 'lh-instrument.status.initialize' } };
        }
        case 'heater-start': {
          const target = await client.deck.startTemperatureControl(await setting('temperature'));
          return { payload: { targetTemperature: target }, status: { key: 'lh-instrument.status.heater', subs: { target } } };
        }
        case 'heater-stop':
          await client.deck.stopTemperatureControl();
          return { payload: null, status: { key: 'done' } };
        case 'heater-status': {
          const t = await client.deck.temperatureStatus();
          return {
            payload: t,
            status: {
              key: 'lh-instrument.status.temperature',
              subs: { current: t.currentTemperature ?? '?', target: t.targetTemperature ?? 'off' },
            },
          };
        }
        case 'lights-custom': {
          // the dialog's colour, else msg.colour, else (both empty) msg.payload: a refusal names the one used
          const colour = await setting('colour');
          const given = colour !== undefined && colour !== null && colour !== '';
          const set = await client.deck.setCustomLighting(given ? colour : msg.payload, given ? 'colour' : 'payload');
          return { payload: set, status: { key: 'done' } };
        }
        case 'lights-automatic':
          await client.deck.setAutomaticLighting();
          return { payload: null, status: { key: 'done' } };
        case 'lights-get':
          return { payload: await client.deck.lighting(), status: { key: 'done' } };
        case 'snapshot': {
          const rectified = config.rectified === undefined ? true : isChecked(config.rectified);
          const shot = await client.deck.snapshot(rectified);
          return {
            payload: shot.content,
            status: { key: 'lh-instrument.status.snapshot', subs: { size: shot.content.length } },
            extra: { ...snapshotMsgFields(shot, 'deck'), contentType: shot.contentType },
          };
        }
        case 'deck-scan':
          return { payload: await client.deck.deckScan(await setting('position')), status: { key: 'done' } };
        case 'is-initialized':
          return { payload: await client.deck.isInitialized() };
        case 'is-parked':
          return { payload: await client.deck.isParked() };
        case 'has-tips':
          return { payload: await client.deck.hasTips() };
        case 'traces': {
          const page = await client.deck.traces({
            offset: await setting('offset'),
            limit: await setting('limit'),
            sources: await setting('sources'),
          });
          return {
            payload: page.items,
            extra: { offset: page.offset, limit: page.limit },
            status: { key: 'count', subs: { count: page.items.length } },
          };
        }
      }
    });
  }
  RED.nodes.registerType('lh-instrument', LhInstrument);
};

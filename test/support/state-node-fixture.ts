/** A StateNode (lh-state's behaviour) always emitting, on a model clock, and the documents it sends. */
import { StateNode } from '../../src/nodes/lh-state/state-node';
import type { StateDocument } from '../../src/observe/state-document';
import { ModelClock } from './model-clock';

export const ABOUT = { instrumentKey: 'http://x|', instrument: 'X' };

export function stateNodeOnModelClock(
  perSecond = 1,
  pollWaitMs?: number,
): { node: StateNode; sent: StateDocument[]; clock: ModelClock } {
  const clock = new ModelClock();
  const sent: StateDocument[] = [];
  const node = new StateNode({
    ...ABOUT,
    stateTopic: 's/{{instrument}}',
    eventTopic: 'e/{{instrument}}',
    perSecond,
    emitting: () => true,
    send: (state) => {
      if (state) sent.push(state.payload as StateDocument);
    },
    ...(pollWaitMs === undefined ? {} : { pollWaitMs }),
    ...clock.options,
  });
  return { node, sent, clock };
}

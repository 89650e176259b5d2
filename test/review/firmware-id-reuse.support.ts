/**
 * The firmware-id reuse of the lab-state review tests: lh-state (20 a second) beside an error watch, and a firmware
 * error pushed again and again under one id (each new error ends the one before), as its frame says it (the
 * simulator's own firmware errors never reuse an active id).
 */
import assert from 'node:assert/strict';

import { Simulator } from '../../src/simulator';
import { bServerFlow, pollNode, stateNode } from '../nodes/lh-error-poll.support';
import { helper, loadFlow } from '../support/runtime';
import { until } from '../support/until';

/** Loads `head` (e.g. an lh-coordination node), the server, a listening watch and lh-state; the documents' titles. */
export async function loadStateDocuments(
  sim: Simulator,
  head: Record<string, unknown>[] = [],
  config?: Record<string, unknown>,
): Promise<string[][]> {
  const server = bServerFlow(sim, { withB: false, config });
  await loadFlow(
    [
      ...head,
      ...server.nodes,
      pollNode([[], [], []], { interval: 60 }),
      stateNode([['docs'], []]),
      { id: 'docs', type: 'helper' },
    ],
    server.credentials,
  );
  const documents: string[][] = [];
  helper.getNode('docs').on('input', (msg: { payload: { errors: { list: { title: string }[] } } }) => {
    documents.push(msg.payload.errors.list.map((e) => e.title));
  });
  return documents;
}

/**
 * A frame of `instincterrors` as the instrument pushes it (its shape as the tested client reads it): an error raised,
 * or, with `resolved: true` in `data`, one resolved.
 */
export function firmwareFrame(data: Record<string, unknown>, description = 'Pressure fault'): string {
  return JSON.stringify({ code: data.resolved ? 'ErrorResolved' : 'RuntimeError', description, data });
}

/**
 * Coordinated (lh-coordination on Redis at `url` under `prefix`, a 2 s lease): the server, a listening watch whose
 * raised and resolved msgs go to the helpers `raised` and `resolved`, and lh-state's documents to `docs`.
 */
export function coordinatedWatch(
  sim: Simulator,
  url: string,
  prefix: string,
): { nodes: Record<string, unknown>[]; credentials: Record<string, Record<string, string>> } {
  const server = bServerFlow(sim, { withB: false, config: { coordination: 'coord' } });
  return {
    nodes: [
      { id: 'coord', type: 'lh-coordination', url, prefix, leaseSeconds: 2 },
      ...server.nodes,
      pollNode([['raised'], ['resolved'], []]),
      { id: 'raised', type: 'helper' },
      { id: 'resolved', type: 'helper' },
      stateNode([['docs'], []]),
      { id: 'docs', type: 'helper' },
    ],
    credentials: server.credentials,
  };
}

/** Four firmware errors one after another under the id fw-1; each document since the first lists exactly one. */
export async function reuseFirmwareId(sim: Simulator, documents: string[][]): Promise<void> {
  const push = (title: string): number =>
    sim.publishRawFrame('errors', firmwareFrame({ id: 'fw-1', title, severity: 'Error', source: 'Firmware' }, title));
  let title = 'Pressure fault 0';
  push(title);
  await until(() => documents.some((d) => d.includes(title)), 'a document with the first error', 10000);
  for (let round = 1; round <= 3; round++) {
    await new Promise((resolve) => setTimeout(resolve, 120)); // past lh-state's rate: a document may go at once
    title = `Pressure fault ${round}`;
    push(title); // the same id, another error: the old one is over
    await until(() => documents.some((d) => d.includes(title)), `a document with ${title}`, 10000);
  }
  const first = documents.findIndex((d) => d.length > 0);
  assert.deepEqual(
    documents.slice(first).filter((d) => d.length !== 1),
    [],
    `documents: ${JSON.stringify(documents)}`,
  );
}

/**
 * The flows every chaos replica runs: one lh-coordination node; per instrument an lh-server, an lh-error-poll, an
 * lh-error-policy (walk-away for `[walk …]` titles, semi-automatic after 2 s for `[semi …]`, manual otherwise) and an
 * lh-answer-error that a function node feeds with the `[flow …]` errors; every raised and resolved msg and every answer
 * a node reports goes to the harness' collector (an http request node), with its title, `msg.redelivered` and whether it
 * was sent while Redis was out of reach (`msg.coordination = 'lost'`, documented as "it may come twice").
 */
import type { FlowNode } from '../support/red-replicas';
import { USER } from '../support/runtime';

export const CLIENT_KEY = 'chaoskey1';

export interface FlowInstrument {
  index: number;
  baseUrl: string;
  instrumentUrl?: string;
}

function toCollector(kind: string): string {
  return [
    `const p = msg.payload || {};`,
    `msg.payload = { kind: '${kind}', title: String(p.title || (msg.error && msg.error.message) || ''), id: String(msg.errorId || msg.uuid || ''),`,
    `  redelivered: msg.redelivered === true, lost: msg.coordination === 'lost', reason: msg.redeliveryReason, replica: env.get('LH_REPLICA') };`,
    `msg.headers = { 'content-type': 'application/json' };`,
    `return msg;`,
  ].join('\n');
}

/**
 * The flows of one replica listing `instruments`. `credentials`: put the lh-server credentials in the nodes (what
 * the admin API takes on a deploy); a replica's first start reads them from flows_cred.json instead.
 */
export function chaosFlows(options: {
  redisUrl: string;
  prefix: string;
  leaseSeconds: number;
  pollSeconds: number;
  instruments: readonly FlowInstrument[];
  collectorUrl: string;
  credentials?: boolean;
}): FlowNode[] {
  const flows: FlowNode[] = [
    { id: 'tab', type: 'tab', label: 'chaos' },
    { id: 'coord', type: 'lh-coordination', url: options.redisUrl, prefix: options.prefix, leaseSeconds: options.leaseSeconds },
    { id: 'post', type: 'http request', z: 'tab', method: 'POST', ret: 'txt', url: options.collectorUrl, wires: [[]] },
  ];
  for (const kind of ['raised', 'resolved', 'answered', 'flow-answered'])
    flows.push({ id: `to-${kind}`, type: 'function', z: 'tab', func: toCollector(kind), outputs: 1, wires: [['post']] });
  for (const inst of options.instruments) {
    const i = inst.index;
    flows.push(
      {
        id: `server-${i}`,
        type: 'lh-server',
        baseUrl: inst.baseUrl,
        instrumentUrl: inst.instrumentUrl ?? '',
        simulatorCa: inst.instrumentUrl !== undefined,
        clientKey: CLIENT_KEY,
        timeout: 3000,
        coordination: 'coord',
        ...(options.credentials ? { credentials: { username: USER.username, password: USER.password } } : {}),
      },
      {
        id: `poll-${i}`,
        type: 'lh-error-poll',
        z: 'tab',
        server: `server-${i}`,
        source: inst.instrumentUrl ? 'both' : 'A',
        interval: options.pollSeconds,
        listen: false,
        offlineAfter: 3,
        wires: [['to-raised', `policy-${i}`, `flow-${i}`], ['to-resolved', `policy-${i}`], []],
      },
      {
        id: `policy-${i}`,
        type: 'lh-error-policy',
        z: 'tab',
        server: `server-${i}`,
        // A is answered Retry; B with its default action (the answer left empty)
        rules: [
          { source: 'A', minSeverity: '', pattern: '\\[walk ', code: '', mode: 'walk-away', answer: 'Retry', delay: 0 },
          { source: 'B', minSeverity: '', pattern: '\\[walk ', code: '', mode: 'walk-away', answer: '', delay: 0 },
          { source: 'A', minSeverity: '', pattern: '\\[semi ', code: '', mode: 'semi-automatic', answer: 'Retry', delay: 2 },
          { source: 'B', minSeverity: '', pattern: '\\[semi ', code: '', mode: 'semi-automatic', answer: '', delay: 2 },
          { source: 'any', minSeverity: '', pattern: '', code: '', mode: 'manual', answer: '', delay: 120 },
        ],
        by: 'policy',
        wires: [[], ['to-answered'], []],
      },
      {
        id: `flow-${i}`,
        type: 'function',
        z: 'tab',
        func: `if (msg.source !== 'A' || !String((msg.payload || {}).title).includes('[flow ')) return null;\nmsg.selectedResponse = 'Retry';\nreturn msg;`,
        outputs: 1,
        wires: [[`answer-${i}`]],
      },
      {
        id: `answer-${i}`,
        type: 'lh-answer-error',
        z: 'tab',
        server: `server-${i}`,
        selectedResponse: '',
        selectedResponseType: 'str',
        errorId: '',
        errorIdType: 'str',
        wires: [['to-flow-answered']],
      },
    );
  }
  return flows;
}

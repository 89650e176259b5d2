// Issue 32.7: the debug sidebar shows a message collapsed, cut after 80 characters (a text) or 30 per property (an
// object), and a notification is long: its answer link, appended at the end by the answer page, was cut off. Every
// debug node of the examples that shows a notification after an answer page shows the link within that preview,
// and still shows the whole notification when opened.
import assert from 'assert';
import fs from 'fs';
import path from 'path';

import { exampleFilesIn } from '../support/example-files';

interface FlowNode {
  id: string;
  type: string;
  name?: string;
  wires?: string[][];
  complete?: string;
  targetType?: string;
}

interface Expression {
  evaluate(input: unknown): Promise<unknown>;
}

/**
 * The JSONata of the Node-RED the package is tested with (the debug node evaluates its expression with it): 4.1.15
 * carries its own copy in @node-red/util/lib/jsonata.js, earlier 4.1 releases depend on the jsonata package.
 */
function nodeRedJsonata(): (text: string) => Expression {
  const util = path.dirname(
    require.resolve('@node-red/util/package.json', { paths: [path.dirname(require.resolve('node-red/package.json'))] }),
  );
  const own = path.join(util, 'lib', 'jsonata.js');
  return require(fs.existsSync(own) ? own : require.resolve('jsonata', { paths: [util] })) as (text: string) => Expression;
}
const jsonata = nodeRedJsonata();

/** What the debug sidebar shows of a value before it is opened (Node-RED 4.1, red/utils.js). */
function preview(value: unknown): string {
  if (typeof value === 'string') return value.slice(0, 80);
  if (value && typeof value === 'object')
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${typeof v === 'string' ? v.slice(0, 30) : typeof v}`)
      .join(', ');
  return String(value);
}

/** What the debug node shows of `msg`: the property it names, or its JSONata expression. */
async function shown(node: FlowNode, msg: Record<string, unknown>): Promise<unknown> {
  if (node.targetType === 'jsonata') return jsonata(node.complete ?? '').evaluate(msg);
  if (node.complete === 'true') return msg;
  return (node.complete ?? 'payload').split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], msg);
}

/** The nodes reached from `from`'s output `output` (through any node). */
function downstream(nodes: FlowNode[], from: FlowNode, output: number): FlowNode[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const seen = new Set<string>();
  const queue = [...(from.wires?.[output] ?? [])];
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const out of byId.get(id)?.wires ?? []) queue.push(...out);
  }
  return [...seen].map((id) => byId.get(id)).filter((n): n is FlowNode => n !== undefined);
}

const LINK = 'http://127.0.0.1:1880/lh-answer?t=eyJpIjoiT2JzcBjOHFFdklBNW5wSiIsInMiOiJBIiwiZSI6IjU3YjQ1ODMyIn0.sig';
const NOTIFICATION = [
  'simulator: Warning Clot detected',
  'No liquid was detected while aspirating from the reagent trough.',
  '',
  'Responses: Retry, Abort',
  'Error id: 57b45832-fe06-4a22-bed2-6746d9bb3049',
  'Time: 2026-11-28T03:52:24.488Z',
  `Answer here: ${LINK}`,
].join('\n');

describe('examples: the answer link in the debug preview', function () {
  const examples = exampleFilesIn().map(({ file, full }) => ({
    file,
    nodes: JSON.parse(fs.readFileSync(full, 'utf8')) as FlowNode[],
  }));

  it('every debug node showing a notification after an answer page shows its link before the preview is cut', async function () {
    const msg = { answerUrl: LINK, notification: NOTIFICATION, payload: { text: NOTIFICATION }, topic: 'Clot detected' };
    const checked: string[] = [];
    const problems: string[] = [];
    for (const { file, nodes } of examples) {
      for (const page of nodes.filter((n) => n.type === 'lh-answer-page')) {
        for (const debug of downstream(nodes, page, 0).filter((n) => n.type === 'debug')) {
          const value = await shown(debug, msg);
          const text = typeof value === 'string' ? value : JSON.stringify(value);
          if (!text?.includes('Clot detected')) continue; // not the notification (a status code, an outcome)
          checked.push(`${file}: ${debug.name ?? debug.id}`);
          if (!preview(value).includes(LINK.slice(0, 30)))
            problems.push(`${file}: "${debug.name ?? debug.id}" shows ${preview(value)}`);
          // nothing lost: opened, it shows the whole notification and the whole link
          if (!text.includes(JSON.stringify(NOTIFICATION).slice(1, -1)) && !text.includes(NOTIFICATION))
            problems.push(`${file}: "${debug.name ?? debug.id}" does not show the whole notification`);
          if (!text.includes(LINK)) problems.push(`${file}: "${debug.name ?? debug.id}" does not show the whole link`);
        }
      }
    }
    assert.ok(checked.length >= 3, `found only ${checked.join('; ')}`);
    assert.deepStrictEqual(problems, []);
  });

  it('the check itself: the notification shown as it is cuts the link off', async function () {
    const plain: FlowNode = { id: 'd', type: 'debug', complete: 'notification', targetType: 'msg' };
    const value = await shown(plain, { notification: NOTIFICATION, answerUrl: LINK });
    assert.ok(!preview(value).includes(LINK.slice(0, 30)));
  });
});

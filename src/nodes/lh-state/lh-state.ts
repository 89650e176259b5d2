import { asLhError, LhError } from '../../client';
import { publishLab } from '../../observe/lab-events';
import { topicTemplateOk } from '../../observe/state-document';
import { clippedInTheMiddle, shownInLog } from '../../observe/whole-characters';
import { instrumentInfo } from '../shared/error-records';
import { migrateConfig } from '../shared/migrations';
import { asNode, type NodeConfig, type Red } from '../shared/node-red';
import { requireClient } from '../shared/server-node';
import { Status } from '../shared/status';
import { nameClash, type NamedState } from './name-clash';
import { RetainedTopics } from './retained-topics';
import { StateNode } from './state-node';

/** Bounds of the dialog's numbers (a hand-written flow may say anything). */
const MAX_PER_SECOND = 50;
const MIN_MACHINE_SECONDS = 5;
/** The document again this long after a deploy: the mqtt out node has connected to its broker by then. */
const AFTER_DEPLOY_MS = 2000;
const MIN_REPEAT_MS = 1000;

function clampNumber(value: unknown, fallback: number, min: number, max: number): number {
  const n = Number(value);
  if (value === '' || value === undefined || !Number.isFinite(n)) return fallback;
  return Math.min(max, Math.max(min, n));
}

/**
 * MQTT 5 expiry of a document: three of its repeats, so one nobody sends again (its instrument removed in a full
 * deploy, its Node-RED stopped) leaves the broker instead of saying "online" for ever. None without repeats.
 */
function expiryOf(repeatMs: number): number | undefined {
  return repeatMs > 0 ? Math.ceil((3 * Math.max(MIN_REPEAT_MS, repeatMs)) / 1000) : undefined;
}

export = function register(RED: Red): void {
  /** the instruments of the state nodes running now, by node id (two of one name cannot be told apart) */
  const running = new Map<string, NamedState>();
  /** the document topics of the state nodes, across redeploys */
  const topics = new RetainedTopics();

  function LhState(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const stops: (() => void)[] = [];
    let onClose: ((removed: boolean) => void) | undefined;
    try {
      const topicTemplate = (field: 'topic' | 'eventTopic', fallback: string): string => {
        const value = config[field] === undefined || config[field] === '' ? fallback : String(config[field]);
        if (topicTemplateOk(value)) return value;
        // a hand-written flow (the dialog checks it): a topic the broker refuses would cost every msg of its connection
        const shown = JSON.stringify(shownInLog(clippedInTheMiddle(value, 60)));
        throw new LhError(`${field} ${shown}: ${RED._('lh-state.errors.topic')}`, {
          kind: 'validation',
          operation: 'lh-state',
          field,
        });
      };
      const stateTopic = topicTemplate('topic', 'lab/{{instrument}}/state');
      const eventTopic = topicTemplate('eventTopic', 'lab/{{instrument}}');
      const { server, client } = requireClient(RED, config.server, node.type);
      const instrument = instrumentInfo(server, client);
      const named: NamedState = { instrumentKey: server.instrumentKey, instrument: instrument.name };
      const clash = nameClash(named, running.values());
      if (clash) node.warn(RED._('lh-state.errors.sameName', { name: instrument.name }));
      running.set(node.id, named);
      stops.push(() => running.delete(node.id));
      const coordination = server.coordination;
      const emitting = (): boolean => !coordination || coordination.isHolder || coordination.state.role === 'lost';
      const repeatMs = clampNumber(config.repeat, 60, 0, 86400) * 1000;
      const state = new StateNode({
        instrumentKey: server.instrumentKey,
        instrument: instrument.name,
        stateTopic,
        eventTopic,
        perSecond: clampNumber(config.rate, 2, 0.1, MAX_PER_SECOND),
        expirySeconds: expiryOf(repeatMs),
        emitting,
        send: (doc, event) => {
          node.send([doc, event]);
          if (doc) status.ok('lh-state.status.state', { state: summary(state.document) });
        },
      });
      stops.push(() => state.close());
      const retained = retainedClearing(topics, node.id, state, emitting);
      onClose = (removed) => retained.closed(removed);
      status.follow(server.connection);
      // a document goes out once the errors of a first poll are in (at most 10 s after a deploy or a lease taken
      // over: a flow without an error watch still gets its document)
      state.awaitPoll();
      if (coordination) {
        stops.push(
          coordination.onChange(() => {
            state.roleChanged(); // a new holder, or every replica once Redis is lost: the state once its watch polled
            retained.roleChanged();
            if (!emitting()) status.idle('lh-state.status.standby');
          }),
        );
      }
      // door and system ready: read by the one emitting, every machineInterval seconds (0: never)
      const machineMs = clampNumber(config.machineInterval, 30, 0, 3600) * 1000;
      const about = { instrumentKey: server.instrumentKey, instrument: instrument.name };
      // the password expiry the session knows from its last login: the error watch warns once a day, so a state node
      // deployed alone would say nothing of it until the next warning
      const tellPassword = (): void => {
        const expiresInDays = passwordDaysLeft(client.session.passwordExpiry, Date.now());
        if (expiresInDays !== undefined) state.take({ ...about, kind: 'password', expiresInDays });
      };
      tellPassword();
      if (machineMs > 0) stops.push(readMachine(client, about, emitting, machineMs, tellPassword));
      // after a deploy: the document once the first poll is in (above), again once the mqtt out node beside it has
      // connected (it drops what comes before) and every `repeat` seconds, so a broker that restarted without its
      // retained msgs gets it back
      const settle = setTimeout(() => {
        state.resend();
        retained.settled();
      }, AFTER_DEPLOY_MS);
      const every = repeatMs > 0 ? setInterval(() => state.resend(), Math.max(MIN_REPEAT_MS, repeatMs)) : undefined;
      stops.push(() => {
        clearTimeout(settle);
        clearInterval(every);
      });
      node.on('input', (_msg: unknown, _send: unknown, done: () => void) => {
        state.resend(); // any msg in: the current document out (e.g. when a broker says it restarted), within the rate
        done();
      });
    } catch (err) {
      const error = asLhError(err, node.type);
      status.failed(error);
      node.error(error.message);
      // its lh-server deleted (the node left pointing at it): the document it published is no instrument's now
      const orphan = topics.orphaned(node.id);
      const clear = setTimeout(() => {
        if (orphan !== undefined && !topics.inUse(orphan, node.id))
          node.send([{ topic: orphan, payload: '', retain: true, qos: 1 }, null]);
      }, AFTER_DEPLOY_MS);
      stops.push(() => clearTimeout(clear));
    }
    node.on('close', (removed: boolean, done: () => void) => {
      onClose?.(removed);
      for (const stop of stops.splice(0)) stop();
      done();
    });
  }

  RED.nodes.registerType('lh-state', LhState);
};

/**
 * What a state node clears of the broker's retained documents. Removed from the flows: its document (unless another
 * state node publishes on that topic). Its lh-server renamed: the document under the old name, no longer this
 * instrument's, once it is settled (2 s after the deploy: the mqtt out node beside it has connected, it drops what
 * comes before) and emits. With lh-coordination that may be later: a rename restarts the lh-server, which releases the
 * lease, and the replica holding it 2 s after its deploy may have deployed the rename while it stood by.
 */
function retainedClearing(
  topics: RetainedTopics,
  id: string,
  state: StateNode,
  emitting: () => boolean,
): { settled(): void; roleChanged(): void; closed(removed: boolean): void } {
  const topic = state.topic;
  topics.started(id, topic);
  let settled = false;
  const clearMoved = (): void => {
    const owed = topics.owedBy(id);
    if (owed === undefined || !settled || !emitting()) return;
    if (!topics.inUse(owed, id)) state.clearRetained(owed);
    topics.cleared(id);
  };
  return {
    settled() {
      settled = true;
      clearMoved();
    },
    roleChanged: clearMoved,
    closed(removed) {
      if (removed) {
        settled = true;
        clearMoved();
        if (!topics.inUse(topic, id)) state.clearRetained(topic);
      }
      topics.stopped(id, removed);
    },
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;
type Client = ReturnType<typeof requireClient>['client'];

/**
 * The days left of a password whose expiry is due a warning (as the error watch's warning says it: null in the
 * document otherwise), counted from now: a login's "3 days" is 2 a day later.
 */
function passwordDaysLeft(expiry: Client['session']['passwordExpiry'], now: number): number | undefined {
  if (!expiry?.warn) return undefined;
  return Math.ceil((expiry.expiresAt - now) / DAY_MS);
}

/**
 * Door and system ready, read every `everyMs` by the one emitting, told to the lab (`alongside` runs at each read);
 * returns the call that stops.
 */
function readMachine(
  client: Client,
  about: { instrumentKey: string; instrument: string },
  emitting: () => boolean,
  everyMs: number,
  alongside: () => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const read = async (): Promise<void> => {
    if (emitting()) {
      alongside();
      try {
        const r = await client.machine.startReadiness();
        if (stopped) return;
        publishLab({
          ...about,
          kind: 'machine',
          doorClosed: r.sensors?.isDoorClosed,
          systemReady: r.systemReady ? r.systemReady.isServerReady && r.systemReady.stoppedServices.length === 0 : undefined,
        });
      } catch {
        // the instrument's reachability is lh-server's to show; the document keeps what it knew
      }
    }
    if (!stopped) timer = setTimeout(() => void read(), Math.max(MIN_MACHINE_SECONDS * 1000, everyMs));
  };
  timer = setTimeout(() => void read(), 0);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function summary(doc: { connection: { state: string }; errors: { pending: number }; run: { state: string | null } }): string {
  const run = doc.run.state ? `, run ${doc.run.state}` : '';
  return `${doc.connection.state}, ${doc.errors.pending} pending${run}`;
}

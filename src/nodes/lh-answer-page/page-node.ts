/**
 * One lh-answer-page node at run time (issue 30 point 3: `register` wires, this class behaves): answer links for raised
 * errors (signed, with the photo of the error), the page a link opens (the question, the photo, the outcome) and the
 * answer it posts, the route it serves and the other routes it stands back for. Its decisions are pure
 * (answer-decision.ts, page-view.ts, link-signing.ts); the page's HTML is page-html.ts.
 */
import type { ServerResponse } from 'http';

import {
  CAMERA_TIMEOUT_MS,
  type ErrorIdentity,
  fingerprint,
  fromFingerprint,
  identityOf,
  type InstrumentError,
  LhError,
  type LiquidHandlerClient,
  type PendingError,
  sameError,
  steadyNow,
} from '../../client';
import { findHome, homeOf, slot } from '../../instrument';
import { type LabEvent, labListened, onLabEvent, type PendingErrorView, publishLab } from '../../observe/lab-events';
import { answerAuditMsg } from '../answering/answer-audit';
import { answerA, answerB, type AnswerOutcome, lookupAnswer } from '../answering/answer-error';
import { errorInMsg } from '../answering/error-in-msg';
import { openFirmwareError } from '../answering/open-firmware-errors';
import { PagePhotos, photoAsked, sendPhoto } from '../deck/page-photos';
import { BUSY_REASON, photoRoom, type SnapshotHook, snapshotHook, snapshotIn, snapshotTaker } from '../deck/snapshot';
import { addRunRule, hasPolicy, similarity } from '../runs/run-scope';
import { asNodeActor, httpNodeBasicChecked } from '../shared/audit';
import { type Node, type NodeConfig, type NodeMessage, type Red } from '../shared/node-red';
import { redact, redactDeep } from '../shared/redaction';
import { type LhServerNode, requireClient } from '../shared/server-node';
import { isServerNode } from '../shared/server-node';
import { Status } from '../shared/status';
import { isChecked, lookupFailed, renderTemplate, templateProblem } from '../shared/typed-inputs';
import { zonedTime } from '../shared/zoned-time';
import { type AnswerPlan, errorLabel, planAnswer, showOutcome } from './answer-decision';
import { choicesDigest, looksSecret, readPositions } from './form-choices';
import { FormTokens, MAX_USED_PER_ERROR, MAX_USED_TOKENS, type SharedUsedSet } from './form-tokens';
import { basicAuthUser, MAX_FORM_BYTES, type PageRequest, queryParam, routeClash, servePage } from './http-routes';
import { derivedSecret, linkKey, sharedLinkKey } from './link-key';
import { instrumentDigest, type LinkCheck, signedBy, signLink, unownedReason, verifyLink } from './link-signing';
import { type AnswerFields, answerFields } from './page-fields';
import {
  type ErrorView,
  forbiddenPage,
  outcomePage as outcomeHtml,
  type OutcomeView,
  PAGE_HEADERS,
  questionPage as questionHtml,
} from './page-html';
import { expiryMs, missingPublicUrl, noLinkLine, pageUrl, pathProblem, routePath, statusKey } from './page-links';
import { formSecret, PageSecrets } from './page-secrets';
import { answerInTheWay, answerLabel, answerOptions, errorView, itemChoices, itemProblem } from './page-view';
import { type MadeAt, RecentLists } from './recent-lists';

const OP = 'answer-page';
const DEFAULT_LINK_TEXT = 'Answer: {{answerUrl}}';
const MAX_NAME = 80;
const MAX_REMEMBERED = 1000;
type ErrorRecord = Record<string, unknown>;
type Source = 'A' | 'B';

/** The error a link was made for: its id, and its identity when the link carries one (claim `f`). */
interface LinkedError {
  key: string;
  seen?: ErrorIdentity;
}

/** Where the page keeps what it knows of a linked error: by id and identity, so a reused id is another entry. */
function recordKey(link: LinkedError): string {
  return `${link.key}\n${link.seen ? fingerprint(link.seen) : ''}`;
}

/** Key files this process already warned about (one warning per Node-RED, not per node or link). */
const warnedKeys = new Set<string>();

/**
 * How long a close waits for the raised msgs under way (the photo taken as the link is made: at most 2 s) to be
 * handed to the next instance. Node-RED starts the redeployed node once every node closed.
 */
const CLOSE_WAIT_MS = 3000;
/**
 * The msgs a closed page node had under way, by node id, for its next instance: a full deploy stops the whole flow,
 * so a msg sent by the closed node would be dropped, and lh-error-poll, which took the error as reported, never
 * raises it again (the notification lost for good). The next instance sends them once the flows started.
 */
const handedOver = new Map<string, NodeMessage[]>();
/** The page node of each id now deployed (the one a late hand-over goes to). */
const deployed = new Map<string, AnswerPageNode>();
/**
 * The photos a closed page node kept, by node id, in its instrument's home, for its next instance (README: kept until
 * the link expires): a deploy that restarts the node (a full one restarts every node) would otherwise drop them, and
 * `msg.snapshotUrl` already sent would answer 404. Taken by the next instance of the same instrument with *Deck photo*
 * ticked; one with it unticked lets them go. They still go at their links' expiry meanwhile; a restart of Node-RED
 * forgets them, as it forgets the home.
 */
const PHOTOS_HANDED_OVER = slot('answer-page-photos', () => new Map<string, PagePhotos>());
/**
 * The instrument in whose home each closed page node left its photos, by node id: its next instance may be of another
 * instrument (its lh-server changed or deleted), and then lets them go there (never kept unserved beside its own 200
 * photos / 64 MiB, nor back with the page when it is moved back after *Deck photo* was unticked).
 */
const photosLeftAt = new Map<string, string>();

/**
 * The node's link secrets, the one it signs with first: the secret its dialog stored, and the one derived from the
 * Node-RED's link key (kept in the user dir, see link-key) and the node id. Links survive restarts and redeploys
 * without the dialog ever opened, and a link sent before the dialog stored a secret still answers afterwards.
 */
function localSecrets(RED: Red, node: Node): string[] {
  const source = linkKey(RED.settings.userDir);
  if (!source.persisted && !warnedKeys.has(source.reason)) {
    warnedKeys.add(source.reason);
    node.warn(
      `answer links are signed with a key for this run of Node-RED only (links sent now stop working at a restart): ${source.reason}`,
    );
  }
  const derived = derivedSecret(source.key, node.id);
  const stored = node.credentials?.secret;
  return stored ? [stored, derived] : [derived];
}

/**
 * The page's secrets: with coordination on its lh-server (config nodes start before flow nodes), the instrument's
 * link key shared in Redis signs, so any replica verifies any link; the local ones keep verifying older links.
 */
function pageSecrets(RED: Red, node: Node, serverId: unknown, onShared: (secret: string) => void): PageSecrets {
  const server = typeof serverId === 'string' && serverId !== '' ? RED.nodes.getNode(serverId) : undefined;
  const coordinator = isServerNode(server) && server.coordination ? server.coordinator : undefined;
  const load =
    coordinator && isServerNode(server)
      ? (known?: Buffer) =>
          sharedLinkKey({ secret: (name, candidate) => coordinator.secret(server.instrumentKey, name, candidate) }, known)
      : undefined;
  let warned = '';
  return new PageSecrets(node.id, localSecrets(RED, node), load, onShared, (err) => {
    // said once per reason: links are signed with this replica's own key meanwhile (only it can verify them)
    const reason = redact(err.message);
    if (reason === warned) return;
    warned = reason;
    node.warn(`the answer-link key shared by the replicas cannot be read from Redis (links wait for it): ${reason}`);
  });
}

function readList(client: LiquidHandlerClient, source: Source): Promise<unknown[]> {
  return source === 'A' ? client.prep.pendingErrors() : client.instrument.unhandledErrors();
}

/**
 * `lists`: where page views get the list (shared, see RecentLists); with `fresh`, the list is read afresh (answers,
 * checks) and the views that follow share that newer read, so a page never shows an older state than an answer saw.
 */
async function pendingRecord(
  client: LiquidHandlerClient,
  source: Source,
  key: string,
  lists: RecentLists<string, unknown[]>,
  options: { linkedAt?: MadeAt; fresh?: boolean } = {},
): Promise<ErrorRecord | undefined> {
  const read = (): Promise<unknown[]> => readList(client, source);
  const list: unknown[] = await (options.fresh ? lists.refresh(source, read) : lists.get(source, read, options.linkedAt));
  return list.find((e): e is ErrorRecord => {
    if (!e || typeof e !== 'object') return false;
    const r = e as ErrorRecord;
    return String(source === 'A' ? r.id : r.uuid) === key && r.handled !== true;
  });
}

/**
 * The page as shown: every text of the instrument's (title, message, action, response and item labels, a refusal's
 * reason) and of the flow passes the redaction step first, as msgs do. The form posts positions and a signed state,
 * never the instrument's names or values (form-choices.ts); an input's suggested value is filled in unless it looks
 * like a secret (then it is not shown, and used when the field is left empty).
 */
function questionPage(view: ErrorView, linkToken: string, formToken: string, formState: string): string {
  const shown = redactDeep(view);
  shown.options = shown.options.map((o, i) => ({
    ...o,
    ...(o.inputs
      ? {
          inputs: o.inputs.map((f, j) => {
            const raw = view.options[i].inputs?.[j]?.value;
            return raw !== undefined && looksSecret(raw) ? { ...f, value: undefined, hiddenValue: true } : { ...f, value: raw };
          }),
        }
      : {}),
  }));
  return questionHtml(shown, linkToken, formToken, formState);
}

function outcomePage(view: OutcomeView): string {
  return outcomeHtml(redactDeep(view));
}

function reply(res: ServerResponse, status: number, html: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(html) });
  res.end(html);
}

type Send = (msgs: (NodeMessage | null)[]) => void;

export class AnswerPageNode {
  private readonly status: Status;
  private readonly path: string;
  private readonly lifetime: number;
  private readonly linkText: string;
  /** why the Link line cannot be rendered (the default line is used), and whether Catch nodes were told */
  private readonly linkTextRefusal?: LhError;
  private linkTextReported = false;
  private readonly forms = new FormTokens();
  /** deck photos (issue 33): the one of each linked error until its link expires (src/nodes/deck) */
  private readonly photosOn: boolean;
  private readonly photos: PagePhotos;
  /** the instrument whose photos those are (its lh-server node's at deploy), for the next instance */
  private readonly photosOf: string | undefined;
  private photoHook?: SnapshotHook;
  private readonly secrets: PageSecrets;
  /** why links could not be made, each warned once while deployed (not once per error) */
  private readonly warnedNoLink = new Set<string>();
  /** page views share one read of the error list per source and 2 s: a crawler cannot turn views into reads */
  private readonly lists = new RecentLists<string, unknown[]>();
  /**
   * The records of errors this node linked, for titles on outcome pages once the instrument no longer lists them,
   * by id and the link's identity: a page for a reused id never shows the earlier error's title.
   */
  private readonly records = new Map<string, ErrorRecord>();
  /** when this node last made a link for an error: a view of it never uses a list read before that */
  private readonly linkedAt = new Map<string, number>();
  /** why the configured path is not served (not a page path: Express route syntax), if so */
  private readonly badPath: string | undefined;
  /** the route's removal; false: no HTTP nodes (httpNodeRoot false) or a bad path; undefined: standing back for another route */
  private unroute: (() => void) | false | undefined;
  /** the other route on this path, while the page stands back for it */
  private clash?: string;
  /**
   * Links for errors the watch lists without raising them here (issue 35: with Remember on, a restart raises
   * nothing it saw before, yet the state document and the fleet tab should keep each error's link): an error the
   * error watch lists a second time without a link made by this node gets one, published to lh-state only (no msg,
   * no notification). A raised error was linked through the msg by then. Once per error and identity, bounded.
   */
  private readonly listedBefore = new Set<string>();
  private readonly relinked = new Set<string>();
  private readonly offLab: () => void;
  private readonly onFlowsStarted = (): void => {
    this.started = true;
    this.sendHandedOver();
    this.checkClash();
  };
  /** the flows started since this node did: the nodes it is wired to take msgs (a hand-over is sent from then on) */
  private started = false;
  /** set by close(): what this node sends from then on goes to its next instance (see handedOver) */
  private closing = false;
  /** deleted from the flows: no next instance, what is under way goes with it */
  private removed = false;
  /** the raised msgs whose link (and photo) is being made: a close waits for them (CLOSE_WAIT_MS at most) */
  private readonly underWay = new Set<Promise<void>>();

  constructor(
    private readonly RED: Red,
    private readonly node: Node,
    private readonly config: NodeConfig,
  ) {
    this.status = new Status(node, RED);
    this.path = routePath(config.path);
    this.lifetime = expiryMs(config.expiryHours);
    this.linkText = typeof config.linkText === 'string' ? config.linkText : DEFAULT_LINK_TEXT;
    this.linkTextRefusal = templateProblem(this.linkText, 'linkText', node.type);
    this.photosOn = isChecked(config.snapshot);
    this.photosOf = this.instrumentKey();
    this.photos = this.photosHandedOver();
    this.secrets = pageSecrets(RED, node, config.server, (shared) => this.forms.rekey(formSecret(shared)));
    this.badPath = pathProblem(config.path);
    this.unroute = this.badPath === undefined ? this.mount() : false;
    if (this.badPath !== undefined) {
      const error = new LhError(this.badPath, { kind: 'config', operation: OP, field: 'path' });
      this.status.failed(error);
      this.node.warn(error.message);
    } else if (this.unroute === false) {
      this.status.failed(new LhError(RED._('lh-answer-page.errors.noHttp'), { kind: 'config', operation: OP }));
    } else this.status.idle('lh-answer-page.status.ready', { path: this.path });
    this.checkClash();
    RED.events?.on('flows:started', this.onFlowsStarted);
    this.offLab = onLabEvent((event) => this.onLab(event));
    deployed.set(node.id, this);
  }

  /** The instrument of this node's lh-server node, if it has one. */
  private instrumentKey(): string | undefined {
    const server = this.RED.nodes.getNode(String(this.config.server ?? ''));
    return isServerNode(server) ? server.instrumentKey : undefined;
  }

  /** The photos the closed instance of this node kept, when they are this instrument's and photos are on; else none. */
  private photosHandedOver(): PagePhotos {
    const at = photosLeftAt.get(this.node.id);
    photosLeftAt.delete(this.node.id);
    const kept = at === undefined ? undefined : findHome(at)?.slot(PHOTOS_HANDED_OVER);
    const handed = kept?.get(this.node.id);
    kept?.delete(this.node.id);
    if (handed && this.photosOn && at === this.photosOf) return handed;
    handed?.close();
    return new PagePhotos();
  }

  /** Sends `msg` on output 1, after what a closed instance left; once closing, hands it to the next instance. */
  private passOn(msg: NodeMessage, send: Send): void {
    if (this.closing) {
      if (this.removed) return;
      const list = handedOver.get(this.node.id) ?? [];
      handedOver.set(this.node.id, [...list, msg]);
      deployed.get(this.node.id)?.sendHandedOver(); // a late one: the next instance may be running already
      return;
    }
    this.sendHandedOver();
    send([msg, null]);
  }

  /** What a closed instance of this node handed over: sent first, in its order, once (never from the constructor). */
  private sendHandedOver(): void {
    if (this.closing || !this.started) return;
    const list = handedOver.get(this.node.id);
    if (!list) return;
    handedOver.delete(this.node.id);
    for (const msg of list) this.node.send([msg, null]);
  }

  /** with coordination: the replicas' used-set of form tokens (a form posted to two replicas answers once) */
  private usedForms(): SharedUsedSet | undefined {
    const server = this.RED.nodes.getNode(String(this.config.server ?? ''));
    if (!isServerNode(server) || !server.coordinator || !this.secrets.coordinated) return undefined;
    const once = server.coordinator.once(server.instrumentKey);
    return (mac, expiresAt, errorKey) =>
      once.useForm(this.node.id, errorKey, mac, expiresAt, { maxPerError: MAX_USED_PER_ERROR, maxAll: MAX_USED_TOKENS });
  }

  /** whether forms of the error are refused because the used-set (the replicas' one, with coordination) is full */
  private async formsFull(errorKey: string): Promise<boolean> {
    const server = this.RED.nodes.getNode(String(this.config.server ?? ''));
    if (!isServerNode(server) || !server.coordinator || !this.secrets.coordinated) return this.forms.full(errorKey);
    return server.coordinator
      .once(server.instrumentKey)
      .formsFull(this.node.id, errorKey, { maxPerError: MAX_USED_PER_ERROR, maxAll: MAX_USED_TOKENS });
  }

  /** the check by the secret that signed the token, else why the first refused it */
  private verify(token: unknown): LinkCheck {
    const checks = this.secrets.all.map((s) => verifyLink(token, s, Date.now()));
    return checks.find((c) => c.ok || c.reason !== 'signature') ?? checks[0];
  }

  /**
   * When the link was made, as far as this page can tell: when it made it itself (on the steady clock: a step of the
   * wall clock never dates it before a list read earlier), and (a link another Node-RED made, several of them sharing
   * the key) its expiry less this page's link lifetime, a wall time; a list read before either is not used for it. A
   * signed time ahead of now (a longer lifetime there) is not used: reads stay bounded.
   */
  private madeAt(link: { key: string; expires: number }): MadeAt {
    const here = this.linkedAt.get(link.key);
    const signed = link.expires - this.lifetime;
    return { ...(here === undefined ? {} : { steady: here }), ...(signed > Date.now() ? {} : { wall: signed }) };
  }

  private linked(key: string): void {
    this.linkedAt.delete(key);
    this.linkedAt.set(key, steadyNow());
    if (this.linkedAt.size > MAX_REMEMBERED) this.linkedAt.delete(this.linkedAt.keys().next().value as string);
  }

  private remember(link: LinkedError, record: ErrorRecord): void {
    const key = recordKey(link);
    this.records.delete(key);
    this.records.set(key, record);
    if (this.records.size > MAX_REMEMBERED) this.records.delete(this.records.keys().next().value as string);
  }

  private titleOf(link: LinkedError): string | undefined {
    const title = this.records.get(recordKey(link))?.title;
    return typeof title === 'string' ? title : undefined;
  }

  private instrument(): { server: LhServerNode; client: LiquidHandlerClient; digest: string } {
    const { server, client } = requireClient(this.RED, this.config.server, this.node.type);
    return { server, client, digest: instrumentDigest(server.instrumentKey) };
  }

  private publicBase(msg: NodeMessage): Promise<unknown> {
    const type =
      typeof this.config.publicUrlType === 'string' && this.config.publicUrlType !== '' ? this.config.publicUrlType : 'env';
    const configured = typeof this.config.publicUrl === 'string' ? this.config.publicUrl : '';
    const value = configured === '' ? (type === 'env' ? 'LH_PUBLIC_URL' : '') : configured;
    if (type === 'str') return Promise.resolve(value);
    return new Promise((resolve, reject) =>
      this.RED.util.evaluateNodeProperty(value, type, this.node, msg, (err, result) => (err ? reject(err) : resolve(result))),
    ).catch((err: unknown) => {
      // a context path the msg cannot fill in (`urls[msg.lab.name]`): the no-link line names the setting and why
      throw lookupFailed(OP, 'publicUrl', type, err);
    });
  }

  /**
   * The Link line rendered over `view`. One that cannot be rendered (a tag or section not closed) gives the default line
   * (the link was made: the notification must carry it), and its refusal naming linkText reaches Catch nodes with the
   * first msg of this deploy.
   */
  private linkLine(view: Record<string, unknown>, msg: NodeMessage): string {
    const refusal = this.linkTextRefusal;
    if (refusal === undefined) return renderTemplate(this.linkText, view);
    if (!this.linkTextReported) {
      this.linkTextReported = true;
      this.node.error(refusal, msg); // Node-RED gives Catch nodes a copy: this msg goes on
    }
    return renderTemplate(DEFAULT_LINK_TEXT, view);
  }

  /** A raised error gets its answer link (and photo); anything else passes. */
  input(msg: NodeMessage, send: Send, done: (err?: Error) => void): void {
    const found = msg.event === 'resolved' ? undefined : errorInMsg(msg);
    if (!found) {
      send([msg, null]);
      return done();
    }
    if (this.unroute === false || this.clash) {
      // a link to a path this page does not serve (not a page path, no HTTP nodes, or another route holds it) would lead the person
      // to someone else's route: the msg goes on without one, and the reason reaches Catch nodes
      const why =
        this.badPath ??
        (this.unroute === false
          ? this.RED._('lh-answer-page.errors.noHttp')
          : this.RED._('lh-answer-page.errors.clash', { path: this.path, route: this.clash ?? '' }));
      send([msg, null]);
      return done(new LhError(`no answer link: ${why}`, { kind: 'config', operation: OP, field: 'path' }));
    }
    const work = (async () => {
      const { digest, server } = this.instrument();
      const secret = await this.secrets.signing();
      const given = await this.publicBase(msg);
      const missing = missingPublicUrl(given, this.config.publicUrlType, this.config.publicUrl);
      if (missing) throw new LhError(missing, { kind: 'config', operation: OP, field: 'publicUrl' });
      const base = pageUrl(given, this.RED.settings.httpNodeRoot, this.path);
      const expires = Date.now() + this.lifetime;
      const seen = identityOf(found.record);
      const token = signLink(
        { i: digest, s: found.source, e: found.key, x: expires, ...(seen ? { f: fingerprint(seen) } : {}) },
        secret,
      );
      this.remember({ key: found.key, seen }, found.record);
      this.linked(found.key);
      const answerUrl = `${base}?t=${token}`;
      msg.answerUrl = answerUrl;
      msg.answerExpires = new Date(expires).toISOString();
      if (this.photosOn) await this.keepPhoto(msg, { key: found.key, seen }, expires, answerUrl);
      if (labListened()) {
        const about = { instrumentKey: server.instrumentKey, instrument: server.displayName };
        const answerExpires = new Date(expires).toISOString();
        publishLab({ ...about, kind: 'link', source: found.source, id: found.key, answerUrl, answerExpires });
      }
      if (this.linkText !== '' && typeof msg.notification === 'string') {
        msg.notification = `${msg.notification}\n${this.linkLine({ ...msg, answerExpires: zonedTime(expires) }, msg)}`;
      }
    })().then(
      () => {
        this.status.ok('lh-answer-page.status.linked', { id: statusKey(found.key) });
        this.passOn(msg, send);
        done();
      },
      (err: unknown) => {
        // the notification goes out without the link: a missing decoration never costs the message
        const reason = redact(err instanceof Error ? err.message : String(err));
        if (this.linkText !== '' && typeof msg.notification === 'string')
          msg.notification = `${msg.notification}\n${noLinkLine(reason)}`;
        this.status.warn('lh-answer-page.status.noLink');
        if (!this.warnedNoLink.has(reason)) {
          this.warnedNoLink.add(reason);
          this.node.warn(this.RED._('lh-answer-page.errors.noLink', { reason }));
        }
        this.passOn(msg, send);
        done();
      },
    );
    this.underWay.add(work);
    void work.then(() => this.underWay.delete(work));
  }

  /**
   * The photo of the error for its page: the msg's (lh-error-poll took it), else one taken now (at most 2 s). Kept
   * until the link expires; `msg.snapshotUrl` is the signed link to it (chat takes URLs, not bytes).
   */
  private async keepPhoto(msg: NodeMessage, link: LinkedError, expires: number, url: string): Promise<void> {
    try {
      // lh-error-poll already tried (msg.snapshotError): not asked again, so the notification waits 2 s at most in all
      if (!snapshotIn(msg) && msg.snapshotError === undefined) {
        // under the same cap of camera requests as lh-error-poll's photos (none in a burst, 32 at most in flight)
        this.photoHook ??= snapshotHook(snapshotTaker(this.instrument().client), (text) => this.node.warn(text), photoRoom);
        await this.photoHook.attach([msg]);
      }
      const shot = snapshotIn(msg);
      if (!shot) return;
      this.photos.keep(recordKey(link), shot, expires);
      msg.snapshotUrl = `${url}&photo=raised`;
    } catch (err) {
      msg.snapshotError = redact(err instanceof Error ? err.message : String(err)); // the link goes out all the same
    }
  }

  /** GET ?t=…&photo=raised|fresh: a photo, through the signed link only (a refused link gets the 403 page). */
  private async servePhoto(req: PageRequest, res: ServerResponse): Promise<void> {
    await this.secrets.ready();
    const link = this.checkedLink(queryParam(req, 't'), res);
    if (!link) return;
    const none = (code: number, reason: string): void =>
      reply(res, code, outcomePage({ kind: 'failed', instrument: this.displayName(), errorKey: link.key, reason }));
    if (!this.photosOn) return none(404, 'this answer page shows no deck photos');
    if (photoAsked(queryParam(req, 'photo')) === 'raised') {
      const shot = this.photos.get(recordKey(link));
      return shot ? sendPhoto(res, shot) : none(404, 'no photo of the deck from when the error was raised is kept here');
    }
    // a fresh photo is a live view of the deck: only while the error the link was made for waits for an answer (the
    // page offers the button then only), not for the link's whole life to whoever holds it (a forwarded mail, a chat)
    if (!(await this.stillWaits(link)))
      return none(404, 'no fresh photo of the deck: the error of this link is no longer waiting for an answer');
    const result = await snapshotTaker(this.instrument().client).take(CAMERA_TIMEOUT_MS, photoRoom);
    if ('snapshot' in result) return sendPhoto(res, result.snapshot);
    if (result.error === BUSY_REASON)
      return none(
        503,
        'no fresh photo of the deck now: this Node-RED is busy (many errors or cameras at once); try again shortly',
      );
    none(503, `no fresh photo of the deck: ${redact(result.error)}`);
  }

  /**
   * Whether the error the link was made for still waits for an answer, as the question page tells it: not answered
   * by this Node-RED, listed (or an open firmware error) under its id, and the same error as linked.
   */
  private async stillWaits(link: LinkedError & { source: Source; expires: number }): Promise<boolean> {
    const { client } = this.instrument();
    if (this.alreadyView(client, link)) return false;
    let record = await this.currentRecord(client, link, { linkedAt: this.madeAt(link) });
    if (record && client.answers.lookupPast(link.key)) record = await this.currentRecord(client, link, { fresh: true });
    return record !== undefined && this.changedView(link, record) === undefined;
  }

  /** The checked link, or undefined after a 403 was sent. */
  private checkedLink(token: unknown, res: ServerResponse): (LinkedError & { source: Source; expires: number }) | undefined {
    let digest: string;
    try {
      digest = this.instrument().digest;
    } catch {
      reply(
        res,
        503,
        outcomePage({ kind: 'failed', instrument: '', errorKey: '', reason: 'the instrument is not configured in Node-RED' }),
      );
      return undefined;
    }
    const check = this.verify(token);
    if (!check.ok || check.claims.i !== digest) {
      reply(res, 403, forbiddenPage(check.ok ? 'instrument' : check.reason, this.lifetime));
      return undefined;
    }
    const seen = check.claims.f === undefined ? undefined : fromFingerprint(check.claims.e, check.claims.f);
    return { source: check.claims.s, key: check.claims.e, expires: check.claims.x, seen };
  }

  private displayName(): string {
    try {
      return this.instrument().server.displayName;
    } catch {
      return '';
    }
  }

  /**
   * The answer this Node-RED gave to the error the link was made for (never to another error under its id);
   * `past`: also an answer to an error the instrument no longer lists (asked once the error is known not pending).
   */
  private alreadyView(
    client: LiquidHandlerClient,
    link: LinkedError & { source: Source },
    past = false,
  ): OutcomeView | undefined {
    const { key, seen, source } = link;
    const given = lookupAnswer(client, key, seen) ?? (past ? client.answers.lookupPast(key, seen) : undefined);
    if (!given || given.outcome !== 'answered') return undefined;
    const record = this.records.get(recordKey(link));
    return {
      kind: 'already-answered',
      instrument: this.displayName(),
      errorKey: key,
      title: typeof record?.title === 'string' ? record.title : undefined,
      answer: answerLabel(source, record, given.response),
      by: given.by,
      at: zonedTime(given.at),
    };
  }

  private async showQuestion(req: PageRequest, res: ServerResponse): Promise<void> {
    const token = queryParam(req, 't');
    await this.secrets.ready();
    const link = this.checkedLink(token, res);
    if (!link) return;
    const { client } = this.instrument();
    const already = this.alreadyView(client, link);
    if (already) return reply(res, 200, outcomePage(already));
    let record = await this.currentRecord(client, link, { linkedAt: this.madeAt(link) });
    // the shared read may be older than an answer this Node-RED gave meanwhile (a later read no longer listed the
    // error): read afresh then, so the page never offers a form for an answered error (bounded: only answered ids)
    if (record && client.answers.lookupPast(link.key)) record = await this.currentRecord(client, link, { fresh: true });
    if (!record) {
      const over = this.alreadyView(client, link, true);
      return reply(res, 200, outcomePage(over ?? { kind: 'not-pending', instrument: this.displayName(), errorKey: link.key }));
    }
    const changed = this.changedView(link, record);
    if (changed) return reply(res, 200, outcomePage(changed));
    this.remember(link, record);
    const view = errorView(link.source, link.key, record, this.displayName(), link.expires);
    view.runScope = hasPolicy(this.instrument().server.instrumentKey);
    if (this.photosOn) {
      const kept = this.photos.get(recordKey(link));
      const fresh = queryParam(req, 'view') === 'fresh';
      view.photo = { raised: !!kept, takenAt: kept?.takenAt, fresh, nonce: Date.now() };
    }
    const state = this.forms.state(recordKey(link), choicesDigest({ options: view.options, items: view.items ?? [] }));
    reply(res, 200, questionPage(view, String(token), this.forms.issue(recordKey(link)), state));
  }

  /**
   * The error under the link's id now: the listed one, else (A) an open firmware error an lh-error-poll node of this
   * instrument raised from the socket (the instrument never lists those, and still waits for an answer).
   */
  private async currentRecord(
    client: LiquidHandlerClient,
    link: LinkedError & { source: Source },
    options: { linkedAt?: MadeAt; fresh?: boolean },
  ): Promise<ErrorRecord | undefined> {
    const listed = await pendingRecord(client, link.source, link.key, this.lists, options);
    if (listed || link.source !== 'A') return listed;
    return openFirmwareError(this.instrument().server.instrumentKey, link.key) as ErrorRecord | undefined;
  }

  /** The error listed under the link's id now is not the one the link was made for: the page says so. */
  private changedView(link: LinkedError, record: ErrorRecord): OutcomeView | undefined {
    const now = identityOf(record);
    if (!link.seen || !now || sameError(link.seen, now)) return undefined;
    return {
      kind: 'changed',
      instrument: this.displayName(),
      errorKey: link.key,
      title: this.titleOf(link),
      reason: errorLabel(record),
    };
  }

  /**
   * Sends the answer `plan` chose, or gives its outcome when it sends nothing. The audit trail records this page node
   * and the httpNodeAuth user as the actor of the answer it sends.
   */
  private sendPlanned(
    req: PageRequest,
    plan: AnswerPlan,
    link: LinkedError,
    by: string | undefined,
    fields: AnswerFields,
  ): Promise<AnswerOutcome> {
    if (plan.send === false) return Promise.resolve(plan.outcome);
    const { client, server } = this.instrument();
    const seen = link.seen ?? identityOf(plan.record);
    const send = (): Promise<AnswerOutcome> =>
      plan.send === 'A'
        ? answerA(client, plan.record as PendingError, plan.response, by, seen, fields.items)
        : answerB(client, plan.record as InstrumentError, plan.actionId, server.clientKey || null, by, seen, {
            values: fields.inputs,
          });
    return asNodeActor(this.node, { req } as unknown as NodeMessage, send, httpNodeBasicChecked(this.RED));
  }

  /**
   * What the form chose, by the instrument's names: a form of positions (it carries the signed state `o`) is mapped
   * back through the choices the error offers now, which must be the ones the page showed; a form shown before
   * positions (no state) posts the names themselves, and a choice that is not a position is taken as a name.
   */
  private postedChoice(
    form: URLSearchParams,
    link: LinkedError & { source: Source },
    record: ErrorRecord | undefined,
  ): { chosen?: string | null; fields: AnswerFields; problem?: string } {
    const field = link.source === 'A' ? 'response' : 'action';
    const state = form.get('o');
    if (state === null || !/^#\d+$/.test(form.get(field) ?? '')) {
      const chosen = form.get(field);
      return { chosen, fields: answerFields(form, chosen) };
    }
    if (!record) return { fields: { inputs: {} } };
    const offered = { options: answerOptions(link.source, record), items: itemChoices(link.source, record) };
    if (!this.forms.stateHolds(state, recordKey(link), choicesDigest(offered)))
      return {
        fields: { inputs: {} },
        problem: 'the answers this error offers are not the ones this page showed: open the link again to answer',
      };
    return readPositions(form, field, offered);
  }

  private async takeAnswer(req: PageRequest, res: ServerResponse, form: URLSearchParams): Promise<void> {
    const token = form.get('t') ?? queryParam(req, 't');
    await this.secrets.ready();
    const link = this.checkedLink(token, res);
    if (!link) return;
    const title = this.titleOf(link);
    const base: OutcomeView = { kind: 'form-used', instrument: this.displayName(), errorKey: link.key, title };
    // a form token is bound to the error it was shown for (id and identity): never usable with another error's link
    if (!(await this.forms.useShared(form.get('form'), recordKey(link), this.usedForms()))) {
      // full of forms posted earlier (someone with the link, or a script): opening it again would not help
      if (await this.formsFull(recordKey(link)).catch(() => false))
        return reply(res, 429, outcomePage({ ...base, kind: 'forms-full' }));
      return reply(res, 403, outcomePage(base));
    }
    const typed = (form.get('by') ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_NAME);
    // the user httpNodeAuth checked is who answered; a typed name never replaces it (it goes into `name`)
    const user = httpNodeBasicChecked(this.RED) ? basicAuthUser(req) : undefined;
    const by = user ?? (typed !== '' ? typed : undefined);
    const { client, server } = this.instrument();
    const already = this.alreadyView(client, link);
    const record = already ? undefined : await this.currentRecord(client, link, { fresh: true });
    // the choice, the chosen action's input fields (B) and the per-item answers (A) the form carries
    const { chosen, fields, problem } = this.postedChoice(form, link, record ?? this.records.get(recordKey(link)));
    const plan = planAnswer({
      source: link.source,
      key: link.key,
      chosen,
      already: !!already,
      record,
      changedTo: record ? this.changedView(link, record)?.reason : undefined,
      choiceProblem: problem,
      itemProblem: record && link.source === 'A' && chosen ? itemProblem(record, chosen, fields.items) : undefined,
    });
    const given = await this.sendPlanned(req, plan, link, by, fields);
    const shown = showOutcome(given);
    const outcome = shown.outcome;
    // a changed error keeps the title the link was made for: the new error under the id is not what was answered
    if (record && outcome.outcome !== 'changed') this.remember(link, record);
    const shownRecord =
      outcome.outcome === 'changed' ? this.records.get(recordKey(link)) : (record ?? this.records.get(recordKey(link)));
    const view: OutcomeView = {
      ...base,
      title: typeof shownRecord?.title === 'string' ? shownRecord.title : title,
      kind: shown.kind,
      ...(shown.reason !== undefined ? { reason: shown.reason } : {}),
      ...(shown.unconfirmed ? { unconfirmed: true } : {}),
    };
    const runScoped =
      outcome.outcome === 'answered' && form.get('scope') === 'run' && !!shownRecord && hasPolicy(server.instrumentKey);
    if (outcome.outcome === 'answered') {
      Object.assign(view, {
        answer: answerLabel(link.source, shownRecord, outcome.answer.response),
        by: outcome.answer.by,
        at: zonedTime(outcome.answer.at),
      });
      if (runScoped && shownRecord && chosen) {
        // "the same for similar errors until this run ends": the error policy of this instrument applies it
        addRunRule(server.instrumentKey, {
          source: link.source,
          match: similarity(shownRecord),
          answer: chosen,
          ...(Object.keys(fields.inputs).length > 0 ? { inputs: fields.inputs } : {}),
          ...(fields.items ? { items: fields.items } : {}),
          by: by ?? null,
          at: Date.now(),
          errorKey: link.key,
        });
        view.runScope = true;
      }
    } else if (outcome.outcome === 'already-answered') {
      const previous = answerInTheWay(outcome.previous, link.seen);
      const prior = previous
        ? { answer: answerLabel(link.source, shownRecord, previous.response), by: previous.by, at: zonedTime(previous.at) }
        : {};
      Object.assign(view, prior, this.alreadyView(client, link) ?? {});
    }
    if (shown.status === 'answered') this.status.ok('lh-answer-page.status.answered', { id: statusKey(link.key) });
    else if (shown.status === 'notAnswered') this.status.warn('lh-answer-page.status.notAnswered', { id: statusKey(link.key) });
    this.node.send([
      null,
      answerAuditMsg({
        source: link.source,
        errorKey: link.key,
        response: chosen ?? null,
        outcome,
        error: shownRecord ?? null,
        details: {
          ...(Object.keys(fields.inputs).length > 0 ? { inputs: fields.inputs } : {}),
          ...(fields.items ? { items: fields.items } : {}),
          ...(runScoped ? { runScoped: true } : {}),
          by: by ?? null,
          name: typed !== '' ? typed : null,
        },
      }),
    ]);
    reply(res, shown.httpStatus, outcomePage(view));
  }

  private failed(res: ServerResponse): (err: unknown) => void {
    return (err: unknown) => {
      const e = redact(err instanceof Error ? err.message : String(err));
      this.node.warn(this.RED._('lh-answer-page.errors.page', { message: e }));
      reply(res, 502, outcomePage({ kind: 'failed', instrument: this.displayName(), errorKey: '', reason: e }));
    };
  }

  private mount(): (() => void) | false {
    return servePage(
      this.RED,
      this.path,
      {
        owns: (token) => this.secrets.all.some((s) => signedBy(token, s)),
        awaiting: () => this.secrets.pending,
        ready: () => this.secrets.ready(),
        get: (req, res) =>
          void (photoAsked(queryParam(req, 'photo')) ? this.servePhoto(req, res) : this.showQuestion(req, res)).catch(
            this.failed(res),
          ),
        post: (req, res, form) => void this.takeAnswer(req, res, form).catch(this.failed(res)),
      },
      (res, why, token) =>
        why === 'cross-site'
          ? reply(
              res,
              403,
              outcomePage({
                kind: 'invalid',
                instrument: '',
                errorKey: '',
                reason: 'the form was posted from another web site; answers are taken from the answer page itself',
              }),
            )
          : why === 'unavailable'
            ? reply(
                res,
                503,
                outcomePage({
                  kind: 'failed',
                  instrument: '',
                  errorKey: '',
                  reason:
                    'the answer pages cannot check links until Redis answers (lh-coordination): reload the page in a moment',
                }),
              )
            : why === 'too-large'
              ? reply(
                  res,
                  413,
                  outcomePage({
                    kind: 'failed',
                    instrument: '',
                    errorKey: '',
                    reason: `the form is larger than ${MAX_FORM_BYTES / 1024} KiB`,
                  }),
                )
              : reply(res, 403, forbiddenPage(unownedReason(token), this.lifetime)),
    );
  }

  /**
   * Another route on the page's path (a user's http in node) would silently shadow the page or be shadowed by it:
   * the page stands back, says so (status and log) and comes back once the path is free. Checked at deploy, when
   * every node of the flows has registered its routes.
   */
  private checkClash(): void {
    if (this.unroute === false) return;
    const other = routeClash(this.RED, this.path);
    if (other && !this.clash) {
      this.clash = other;
      if (this.unroute) this.unroute();
      this.unroute = undefined;
      const error = new LhError(this.RED._('lh-answer-page.errors.clash', { path: this.path, route: other }), {
        kind: 'config',
        operation: OP,
        field: 'path',
      });
      this.status.failed(error);
      this.node.warn(error.message);
    } else if (!other && this.clash) {
      this.clash = undefined;
      this.unroute = this.mount();
      this.status.idle('lh-answer-page.status.ready', { path: this.path });
    }
  }

  /** Remembers `key` in `set`, at most MAX_REMEMBERED (the oldest goes). */
  private static remembered(set: Set<string>, key: string): void {
    set.add(key);
    if (set.size > MAX_REMEMBERED) set.delete(set.values().next().value as string);
  }

  /** A listed error's identity: the watch's fingerprint of it, else its id, title and severity. */
  private static seenOf(e: PendingErrorView): ErrorIdentity | undefined {
    const whole = e.seen === undefined ? undefined : fromFingerprint(e.id, e.seen);
    // a clipped or redacted title is not the instrument's: left out of the identity
    const title = e.titleClipped ? undefined : e.title;
    return whole ?? identityOf({ [e.source === 'A' ? 'id' : 'uuid']: e.id, title, severity: e.severity });
  }

  private async labLink(e: PendingErrorView, server: LhServerNode, digest: string): Promise<void> {
    const given = await this.publicBase({} as NodeMessage);
    if (missingPublicUrl(given, this.config.publicUrlType, this.config.publicUrl)) return; // the msg path says why
    const secret = await this.secrets.signing();
    const expires = Date.now() + this.lifetime;
    // the whole identity the watch saw (time stamp and group too, as a link made from a raised msg): never one that
    // a later error under the id with the same title and severity also has
    const seen = AnswerPageNode.seenOf(e);
    const claims = { i: digest, s: e.source, e: e.id, x: expires, ...(seen ? { f: fingerprint(seen) } : {}) };
    const answerUrl = `${pageUrl(given, this.RED.settings.httpNodeRoot, this.path)}?t=${signLink(claims, secret)}`;
    this.linked(e.id);
    const about = { instrumentKey: server.instrumentKey, instrument: server.displayName };
    const answerExpires = new Date(expires).toISOString();
    publishLab({ ...about, kind: 'link', source: e.source, id: e.id, answerUrl, answerExpires });
  }

  private onLab(event: LabEvent): void {
    if (event.kind !== 'errors' || this.unroute === false || this.clash) return;
    let found: { server: LhServerNode; digest: string };
    try {
      found = this.instrument();
    } catch {
      return;
    }
    if (event.instrumentKey !== found.server.instrumentKey) return;
    for (const e of event.pending) {
      const seen = AnswerPageNode.seenOf(e);
      const key = JSON.stringify([e.source, e.id, seen ? fingerprint(seen) : '']);
      if (!this.listedBefore.has(key)) {
        AnswerPageNode.remembered(this.listedBefore, key);
        continue;
      }
      // made once per error: here, or from its raised msg (which names this very error)
      if (this.relinked.has(key) || this.records.has(recordKey({ key: e.id, seen }))) continue;
      AnswerPageNode.remembered(this.relinked, key);
      this.labLink(e, found.server, found.digest).catch(() => undefined); // no link: the document shows none
    }
  }

  /**
   * A redeploy or a stop hands the raised msgs under way to the next instance (within CLOSE_WAIT_MS; one that comes
   * later is handed over all the same); a node deleted from the flows has none, and its msgs go with it.
   */
  close(removed: boolean, done: () => void): void {
    this.closing = true;
    this.removed = removed;
    if (deployed.get(this.node.id) === this) deployed.delete(this.node.id);
    if (removed) handedOver.delete(this.node.id);
    this.offLab();
    this.RED.events?.removeListener('flows:started', this.onFlowsStarted);
    this.secrets.close();
    // kept for the next instance (a photo still being taken joins them), unless the node is deleted
    if (removed || this.photosOf === undefined || !this.photosOn) this.photos.close();
    else {
      homeOf(this.photosOf).slot(PHOTOS_HANDED_OVER).set(this.node.id, this.photos);
      photosLeftAt.set(this.node.id, this.photosOf);
    }
    if (this.unroute) this.unroute();
    if (removed || this.underWay.size === 0) return done();
    let closed = false;
    const finish = (): void => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      done();
    };
    const timer = setTimeout(finish, CLOSE_WAIT_MS);
    void Promise.all(this.underWay).then(finish);
  }
}

import { redact } from '../shared/secrets';
import { randomBytes } from 'crypto';
import type { ServerResponse } from 'http';
import { InstrumentError, LhError, LiquidHandlerClient, PendingError } from '../../client';
import { answerA, answerB, AnswerOutcome, lookupAnswer } from '../shared/answer-error';
import { asNode, Node, NodeConfig, NodeMessage, Red } from '../shared/node-red';
import { fail } from '../shared/operation-node';
import { LhServerNode, requireClient } from '../shared/server-node';
import { renderTemplate } from '../shared/settings';
import { Status } from '../shared/status';
import { zonedTime } from '../shared/zoned-time';
import { FormTokens } from './form-tokens';
import { basicAuthUser, PageRequest, queryParam, servePage } from './http-routes';
import { instrumentDigest, signedBy, signLink, verifyLink } from './link-signing';
import { answerLabel, errorView } from './page-view';
import { expiryMs, pageUrl, routePath } from './page-links';
import { errorInMsg } from '../shared/error-in-msg';
import { forbiddenPage, OutcomeView, outcomePage, PAGE_HEADERS, questionPage } from './page-html';
import { migrateConfig } from '../shared/migrations';

const OP = 'answer-page';
const DEFAULT_LINK_TEXT = 'Answer: {{answerUrl}}';
const MAX_NAME = 80;
const MAX_REMEMBERED = 1000;
const NO_CONFIRMATION = 'no confirmation received: it may have been applied; check the instrument before answering again';

/** A timeout, a reset or a 5xx: the instrument may have applied the answer without confirming it. */
function mayHaveApplied(err: LhError): boolean {
  return err.kind === 'network' || err.kind === 'timeout' || (err.statusCode ?? 0) >= 500;
}

type ErrorRecord = Record<string, unknown>;
type Source = 'A' | 'B';

/** Secrets generated for nodes deployed without one (kept across redeploys; the dialog stores one for good). */
const generatedSecrets = new Map<string, string>();

function secretOf(node: Node): string {
  const stored = node.credentials?.secret;
  if (stored) return stored;
  let secret = generatedSecrets.get(node.id);
  if (!secret) generatedSecrets.set(node.id, (secret = randomBytes(32).toString('base64url')));
  return secret;
}

async function pendingRecord(client: LiquidHandlerClient, source: Source, key: string): Promise<ErrorRecord | undefined> {
  const list: unknown[] = source === 'A' ? await client.prep.pendingErrors() : await client.instrument.unhandledErrors();
  return list.find((e): e is ErrorRecord => {
    if (!e || typeof e !== 'object') return false;
    const r = e as ErrorRecord;
    return String(source === 'A' ? r.id : r.uuid) === key && r.handled !== true;
  });
}

function reply(res: ServerResponse, status: number, html: string): void {
  if (res.headersSent) return;
  res.writeHead(status, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(html) });
  res.end(html);
}

export = function register(RED: Red): void {
  function LhAnswerPage(this: unknown, config: NodeConfig): void {
    config = migrateConfig(config);
    RED.nodes.createNode(this, config);
    const node = asNode(this);
    const status = new Status(node, RED);
    const path = routePath(config.path);
    const lifetime = expiryMs(config.expiryHours);
    const linkText = typeof config.linkText === 'string' ? config.linkText : DEFAULT_LINK_TEXT;
    const forms = new FormTokens();
    /** the records of errors this node linked, for titles on outcome pages once the instrument no longer lists them */
    const records = new Map<string, ErrorRecord>();

    function remember(key: string, record: ErrorRecord): void {
      records.delete(key);
      records.set(key, record);
      if (records.size > MAX_REMEMBERED) records.delete(records.keys().next().value as string);
    }

    function instrument(): { server: LhServerNode; client: LiquidHandlerClient; digest: string } {
      const { server, client } = requireClient(RED, config.server, node.type);
      return { server, client, digest: instrumentDigest(server.instrumentKey) };
    }

    function publicBase(msg: NodeMessage): Promise<unknown> {
      const type = typeof config.publicUrlType === 'string' && config.publicUrlType !== '' ? config.publicUrlType : 'env';
      const configured = typeof config.publicUrl === 'string' ? config.publicUrl : '';
      const value = configured === '' ? (type === 'env' ? 'LH_PUBLIC_URL' : '') : configured;
      if (type === 'str') return Promise.resolve(value);
      return new Promise((resolve, reject) =>
        RED.util.evaluateNodeProperty(value, type, node, msg, (err, result) => (err ? reject(err) : resolve(result))),
      );
    }

    node.on('input', (msg, send, done) => {
      const found = msg.event === 'resolved' ? undefined : errorInMsg(msg);
      if (!found) {
        send([msg, null]);
        return done();
      }
      (async () => {
        const { digest } = instrument();
        const base = pageUrl(await publicBase(msg), RED.settings.httpNodeRoot, path);
        const expires = Date.now() + lifetime;
        const token = signLink({ i: digest, s: found.source, e: found.key, x: expires }, secretOf(node));
        remember(found.key, found.record);
        msg.answerUrl = `${base}?t=${token}`;
        msg.answerExpires = new Date(expires).toISOString();
        if (linkText !== '' && typeof msg.notification === 'string') {
          msg.notification = `${msg.notification}\n${renderTemplate(linkText, { ...msg, answerExpires: zonedTime(expires) })}`;
        }
      })().then(
        () => {
          status.ok('lh-answer-page.status.linked', { id: found.key });
          send([msg, null]);
          done();
        },
        (err: unknown) => fail(node, status, msg, err, done),
      );
    });

    /** The checked link, or undefined after a 403 was sent. */
    function checkedLink(token: unknown, res: ServerResponse): { source: Source; key: string; expires: number } | undefined {
      let digest: string;
      try {
        digest = instrument().digest;
      } catch {
        reply(res, 503, outcomePage({ kind: 'failed', instrument: '', errorKey: '', reason: 'the instrument is not configured in Node-RED' }));
        return undefined;
      }
      const check = verifyLink(token, secretOf(node), Date.now());
      if (!check.ok || check.claims.i !== digest) {
        reply(res, 403, forbiddenPage());
        return undefined;
      }
      return { source: check.claims.s, key: check.claims.e, expires: check.claims.x };
    }

    function displayName(): string {
      try {
        return instrument().server.displayName;
      } catch {
        return '';
      }
    }

    /** `past`: also an answer to an error the instrument no longer lists (asked once the error is known not pending). */
    function alreadyView(client: LiquidHandlerClient, source: Source, key: string, past = false): OutcomeView | undefined {
      const given = lookupAnswer(client, key) ?? (past ? client.answers.lookupPast(key) : undefined);
      if (!given || given.outcome !== 'answered') return undefined;
      const record = records.get(key);
      return {
        kind: 'already-answered',
        instrument: displayName(),
        errorKey: key,
        title: typeof record?.title === 'string' ? record.title : undefined,
        answer: answerLabel(source, record, given.response),
        by: given.by,
        at: zonedTime(given.at),
      };
    }

    async function showQuestion(req: PageRequest, res: ServerResponse): Promise<void> {
      const token = queryParam(req, 't');
      const link = checkedLink(token, res);
      if (!link) return;
      const { client } = instrument();
      const already = alreadyView(client, link.source, link.key);
      if (already) return reply(res, 200, outcomePage(already));
      const record = await pendingRecord(client, link.source, link.key);
      if (!record) {
        const over = alreadyView(client, link.source, link.key, true);
        return reply(res, 200, outcomePage(over ?? { kind: 'not-pending', instrument: displayName(), errorKey: link.key }));
      }
      remember(link.key, record);
      const view = errorView(link.source, link.key, record, displayName(), link.expires);
      reply(res, 200, questionPage(view, String(token), forms.issue(link.key)));
    }

    async function takeAnswer(req: PageRequest, res: ServerResponse, form: URLSearchParams): Promise<void> {
      const token = form.get('t') ?? queryParam(req, 't');
      const link = checkedLink(token, res);
      if (!link) return;
      const title = typeof records.get(link.key)?.title === 'string' ? String(records.get(link.key)?.title) : undefined;
      const base: OutcomeView = { kind: 'form-used', instrument: displayName(), errorKey: link.key, title };
      if (!forms.use(form.get('form'), link.key)) return reply(res, 403, outcomePage(base));
      const typed = (form.get('by') ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_NAME);
      // the user httpNodeAuth checked is who answered; a typed name never replaces it (it goes into `name`)
      const user = RED.settings.httpNodeAuth ? basicAuthUser(req) : undefined;
      const by = user ?? (typed !== '' ? typed : undefined);
      const chosen = link.source === 'A' ? form.get('response') : form.get('action');
      const { client, server } = instrument();

      let outcome: AnswerOutcome;
      let record: ErrorRecord | undefined;
      const already = alreadyView(client, link.source, link.key);
      if (already) outcome = { outcome: 'already-answered', message: 'already answered' };
      else {
        record = await pendingRecord(client, link.source, link.key);
        if (!record) outcome = { outcome: 'not-pending', message: `error ${link.key} is not pending` };
        else if (chosen === undefined || chosen === null || chosen === '') {
          outcome = { outcome: 'refused', message: 'no answer was chosen', error: new LhError('no answer was chosen', { kind: 'validation', operation: OP }) };
        } else if (link.source === 'A') outcome = await answerA(client, record as PendingError, chosen, by);
        else {
          const id = Number(chosen);
          outcome = Number.isInteger(id)
            ? await answerB(client, record as InstrumentError, id, server.clientKey || null, by)
            : { outcome: 'refused', message: 'the action is not a number', error: new LhError('the action is not a number', { kind: 'validation', operation: OP }) };
        }
      }
      if (record) remember(link.key, record);
      const shownRecord = record ?? records.get(link.key);
      const view: OutcomeView = { ...base, title: typeof shownRecord?.title === 'string' ? shownRecord.title : title, kind: outcome.outcome };
      if (outcome.outcome === 'answered') {
        Object.assign(view, { answer: answerLabel(link.source, shownRecord, outcome.answer.response), by: outcome.answer.by, at: zonedTime(outcome.answer.at) });
        status.ok('lh-answer-page.status.answered', { id: link.key });
      } else if (outcome.outcome === 'already-answered') {
        const previous = outcome.previous;
        const prior = previous ? { answer: answerLabel(link.source, shownRecord, previous.response), by: previous.by, at: zonedTime(previous.at) } : {};
        Object.assign(view, prior, alreadyView(client, link.source, link.key) ?? {});
      } else if (outcome.outcome === 'failed' && mayHaveApplied(outcome.error)) {
        outcome = { ...outcome, message: `${NO_CONFIRMATION} (${outcome.message})` };
        Object.assign(view, { reason: outcome.message, unconfirmed: true });
        status.warn('lh-answer-page.status.notAnswered', { id: link.key });
      } else if (outcome.outcome === 'refused' || outcome.outcome === 'failed') {
        view.reason = outcome.message;
        status.warn('lh-answer-page.status.notAnswered', { id: link.key });
      }
      node.send([
        null,
        {
          topic: `${outcome.outcome}: ${link.key}`,
          payload: {
            source: link.source,
            errorKey: link.key,
            response: chosen ?? null,
            by: by ?? null,
            name: typed !== '' ? typed : null,
            at: new Date().toISOString(),
            outcome: outcome.outcome,
            ...(outcome.outcome === 'answered' ? {} : { reason: outcome.message }),
          },
          outcome: outcome.outcome,
          source: link.source,
          ...(link.source === 'A' ? { errorId: link.key } : { uuid: link.key }),
          error: shownRecord ?? null,
        },
      ]);
      reply(res, outcome.outcome === 'answered' || outcome.outcome === 'already-answered' || outcome.outcome === 'not-pending' ? 200 : 502, outcomePage(view));
    }

    const failed = (res: ServerResponse) => (err: unknown) => {
      const e = redact(err instanceof Error ? err.message : String(err));
      node.warn(RED._('lh-answer-page.errors.page', { message: e }));
      reply(res, 502, outcomePage({ kind: 'failed', instrument: displayName(), errorKey: '', reason: e }));
    };
    const unroute = servePage(
      RED,
      path,
      {
        owns: (token) => signedBy(token, secretOf(node)),
        get: (req, res) => void showQuestion(req, res).catch(failed(res)),
        post: (req, res, form) => void takeAnswer(req, res, form).catch(failed(res)),
      },
      (res) => reply(res, 403, forbiddenPage()),
    );
    if (unroute === false) {
      status.failed(new LhError(RED._('lh-answer-page.errors.noHttp'), { kind: 'config', operation: OP }));
    } else status.idle('lh-answer-page.status.ready', { path });

    node.on('close', (_removed: boolean, done: () => void) => {
      if (unroute) unroute();
      done();
    });
  }

  RED.nodes.registerType('lh-answer-page', LhAnswerPage, { credentials: { secret: { type: 'password' } } });
};

import { randomUUID } from 'crypto';

import type { AuditedRequest, AuditHook, AuditIntent, AuditOutcome } from '../client';
import { redactText, redactValue, secretsIn } from '../contract/redaction';
import { currentActor } from './actor';
import { canonicalJson, sha256Hex } from './canonical';
import { OutcomeOrder } from './outcome-order';
import { type Actor, type AuditRecord, type RecordFields, type What, type Who } from './record';

/** Bodies (and old values, whys) larger than this are left out of a record; their SHA-256 stays. */
export const MAX_RECORDED_BODY_BYTES = 64 * 1024;

/** Where a chain is kept: a JSON Lines file per instrument (AuditLog) or a Redis stream shared by replicas (RedisAuditLog). */
export interface AuditAppender {
  /**
   * Seals the record into the chain; resolves once it is durable (on disk, or acknowledged by Redis). `lazy`: the
   * record may wait for the next fsync another record needs (a file chain; an outcome, which nobody waits on).
   */
  append(fields: RecordFields, options?: { lazy?: boolean }): Promise<AuditRecord>;
  /** Makes every record appended so far durable (a file chain's lazy records); none when appends are durable. */
  flush?(): Promise<void>;
  close(): Promise<void>;
  on(event: 'record', listener: (record: AuditRecord) => void): unknown;
}

export interface AuditTrailOptions {
  /** The instrument's identity as records name it (its URLs). */
  instrument: string;
  /** Who acts when nobody said (e.g. the lh-server node). */
  fallback?: Actor;
  /** The configured secrets, taken out of every record besides the secret-named fields. */
  secrets?: () => readonly string[];
  /**
   * The chain's order of outcomes and intents, shared by every trail on the same chain (the lh-server nodes of one
   * instrument); a trail of its own without it.
   */
  order?: OutcomeOrder;
}

/**
 * The transport's audit hook: an intent record before a request goes out (durable before it is sent), an outcome
 * record after it, linked by one id; who acts comes from withActor. Every record passes the redaction step. The
 * chain keeps the order (outcome-order.ts): an outcome after the caller's next step, before the chain's next intent.
 */
export class AuditTrail implements AuditHook {
  private readonly order: OutcomeOrder;
  /** Per intent id: what its request sent under a secret's name (a typed new password), taken out of its outcome too. */
  private readonly sent = new Map<string, string[]>();

  constructor(
    readonly log: AuditAppender,
    private readonly options: AuditTrailOptions,
  ) {
    this.order = options.order ?? new OutcomeOrder();
  }

  /** Seals the intent record; the request waits for `durable` before anything of it is sent. */
  intent(request: AuditedRequest): AuditIntent {
    // the outcomes of earlier requests go first: a flow's next action never shows before the answer it acted on
    this.order.flush();
    const id = randomUUID();
    const secrets = this.options.secrets?.() ?? [];
    const { why, old, ...who } = redactValue({ ...this.options.fallback, ...currentActor() }, secrets);
    const what = whatOf(request, secrets);
    const sent = secretsIn(request.body);
    if (sent.length > 0) this.sent.set(id, sent);
    const durable = this.log.append({
      phase: 'intent',
      id,
      at: new Date().toISOString(),
      instrument: this.options.instrument,
      who: boundedWho(who),
      what,
      ...(why === undefined ? {} : { why: bounded(why) }),
      ...(old === undefined ? {} : { old: bounded(old) }),
    });
    return { id, durable };
  }

  /** Every record written so far made durable (the outcomes written lazily too). */
  async flush(): Promise<void> {
    await this.log.flush?.();
  }

  /** Appends the outcome record once the caller has the answer (see OutcomeOrder); resolves once it is written. */
  outcome(id: string, operation: string, outcome: AuditOutcome): Promise<void> {
    return this.order.defer(() => this.appendOutcome(id, operation, outcome));
  }

  private async appendOutcome(id: string, operation: string, outcome: AuditOutcome): Promise<void> {
    const sent = this.sent.get(id) ?? [];
    this.sent.delete(id);
    const secrets = [...sent, ...(this.options.secrets?.() ?? [])];
    const clean =
      outcome.reason === undefined ? outcome : { ...outcome, reason: redactText(outcome.reason, secrets).slice(0, 2000) };
    // lazy: durable with the next intent's fsync (or shortly after): an action waits for one fsync, its intent's
    await this.log.append(
      {
        phase: 'outcome',
        id,
        at: new Date().toISOString(),
        instrument: this.options.instrument,
        operation,
        outcome: clean,
      },
      { lazy: true },
    );
  }
}

/**
 * A value a record keeps beside the body (the old value, the why): as it is up to MAX_RECORDED_BODY_BYTES, else left
 * out with its size and SHA-256 (a routine read from the instrument is as large as the body that replaces it).
 */
function bounded(value: unknown): unknown {
  const text = canonicalJson(value);
  const bytes = Buffer.byteLength(text);
  return bytes <= MAX_RECORDED_BODY_BYTES ? value : { omitted: true, bytes, sha256: sha256Hex(text) };
}

/** Longest text of a who field (a name, a user, a meaning) a record keeps; longer ones are cut, saying how long. */
export const MAX_WHO_CHARS = 1024;

/** Who, with each text cut to MAX_WHO_CHARS (a flow can put anything in a signer's name or an answer's meaning). */
function boundedWho(who: Who): Who {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(who)) {
    out[field] =
      typeof value === 'string' && value.length > MAX_WHO_CHARS
        ? `${value.slice(0, MAX_WHO_CHARS)}… (${value.length} characters)`
        : value;
  }
  return out as Who;
}

/** The request as recorded: redacted first, so not even a digest of a secret enters a record. */
function whatOf(request: AuditedRequest, secrets: readonly string[]): What {
  const what: What = {
    api: request.api,
    method: request.method,
    operation: request.operation,
    path: redactText(request.path, secrets),
  };
  if (request.query && Object.keys(request.query).length > 0) what.query = redactValue(request.query, secrets);
  if (request.body !== undefined) {
    const body = redactValue(request.body, secrets);
    const text = canonicalJson(body);
    if (Buffer.byteLength(text) <= MAX_RECORDED_BODY_BYTES) what.body = body;
    else {
      what.bodySha256 = sha256Hex(text);
      what.bodyOmitted = true;
    }
  }
  return what;
}

/**
 * The answer page as HTML: every text from the instrument or a person is escaped; no script; one inline style
 * sheet allowed by its hash in the Content-Security-Policy.
 */
import { createHash } from 'crypto';

import { FORM_TOKEN_LIFETIME_MS } from './form-tokens';

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:1rem;background:#f4f5f7;color:#1d2733;line-height:1.4}
main{max-width:34rem;margin:0 auto;background:#fff;border-radius:8px;padding:1rem 1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.25rem;margin:.2rem 0 .8rem}
.meta{color:#55606e;font-size:.9rem;margin:.2rem 0}
.message{white-space:pre-wrap;background:#f8f8f8;border-left:4px solid #c0392b;padding:.6rem .8rem;margin:.8rem 0}
label{display:block;font-size:.9rem;margin:.8rem 0 .3rem}
input[type=text],input[type=number],select{width:100%;box-sizing:border-box;padding:.6rem;font-size:1rem;border:1px solid #b8c0ca;border-radius:6px}
button{display:block;width:100%;margin:.5rem 0;padding:.8rem;font-size:1.05rem;border-radius:6px;border:1px solid #2d5f8a;background:#e9f1f8;color:#17324a;cursor:pointer}
button.default{background:#2d5f8a;color:#fff}
.outcome{font-size:1.1rem;padding:.8rem;border-radius:6px;margin:.8rem 0}
.ok{background:#e3f4e6}.warn{background:#fff4d6}.bad{background:#fde2e0}
figure{margin:.8rem 0}figure img{display:block;width:100%;height:auto;border-radius:6px;border:1px solid #b8c0ca}
figcaption{color:#55606e;font-size:.85rem;margin-top:.2rem}
a.button{display:block;box-sizing:border-box;width:100%;margin:.5rem 0;padding:.8rem;font-size:1.05rem;text-align:center;text-decoration:none;border-radius:6px;border:1px solid #55606e;background:#f4f5f7;color:#1d2733}
`;

/** The Content-Security-Policy of every page: nothing but this style sheet and forms posting back here. */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;

/** Headers every reply of the page carries. */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
}

export interface AnswerOption {
  /** the response (A) or the action id (B); never in the page: the form posts the option's position (`#<n>`) */
  value: string;
  label: string;
  isDefault?: boolean;
  /** B: the inputs the action needs, one field each (named `input.#<position>.<input>`) */
  inputs?: InputField[];
}

/** A field for an input an action declares: its type and range shown, checked again before sending. */
export interface InputField {
  id: number;
  label: string;
  kind: 'number' | 'text';
  min?: number;
  max?: number;
  /** 'any' for numbers with decimals, '1' for whole numbers */
  step?: string;
  /** the instrument's suggestion, filled in */
  value?: string;
  /** the instrument's suggestion looks like a secret: not shown, and used when the field is left empty */
  hiddenValue?: boolean;
  /** "a number from 0.5 to 10 mm" */
  hint: string;
  required: boolean;
}

/** An A error's item (errorData) that offers responses of its own: answered on its own (named `item.#<position>`). */
export interface ItemChoice {
  id: string;
  label: string;
  options: string[];
}

export interface ErrorView {
  instrument: string;
  source: 'A' | 'B';
  errorKey: string;
  title: string;
  message: string;
  severity: string;
  /** with its time zone */
  time: string;
  options: AnswerOption[];
  /** A: items that offer their own responses (answered per item; empty: every item takes the main answer) */
  items?: ItemChoice[];
  /** offer "the same for similar errors until this run ends" (an error policy applies it) */
  runScope?: boolean;
  /** when the link stops working, with its time zone */
  expires: string;
  /** the deck photos the page offers (issue 33): kept from when the error was raised, and a fresh one asked for */
  photo?: PhotoView;
}

export interface PhotoView {
  /** a photo taken when the error was raised is kept for this link */
  raised: boolean;
  /** when it was taken, with its time zone */
  takenAt?: string;
  /** the person asked for a fresh photo: shown too (taken as the page loads it) */
  fresh: boolean;
  /** distinguishes fresh photos of one page (ms) */
  nonce: number;
}

/** The deck photos of the page, served through the same signed link (relative URLs: the page's own path). */
function photoSection(p: PhotoView | undefined, linkToken: string): string {
  if (!p) return '';
  const t = encodeURIComponent(linkToken);
  const raised = p.raised
    ? `<figure><img src="?t=${escapeHtml(t)}&amp;photo=raised" alt="The deck when the error was raised"><figcaption>The deck when the error was raised${p.takenAt ? ` (${escapeHtml(p.takenAt)})` : ''}</figcaption></figure>`
    : '<p class="meta">No photo of the deck from when the error was raised is kept here.</p>';
  const fresh = p.fresh
    ? `<figure><img src="?t=${escapeHtml(t)}&amp;photo=fresh&amp;n=${p.nonce}" alt="The deck now"><figcaption>The deck now</figcaption></figure>`
    : '';
  // a link styled as a button (a GET that changes nothing): the page's form keeps only the answer buttons
  return `${raised}
${fresh}<a class="button" href="?t=${escapeHtml(t)}&amp;view=fresh">Take a fresh photo of the deck</a>`;
}

function errorHeader(e: Pick<ErrorView, 'instrument' | 'title' | 'severity' | 'time' | 'message' | 'errorKey'>): string {
  return `<h1>${escapeHtml(e.severity)}: ${escapeHtml(e.title)}</h1>
<p class="meta">Instrument: ${escapeHtml(e.instrument)}</p>
<p class="meta">Raised: ${escapeHtml(e.time)}</p>
<p class="meta">Error: ${escapeHtml(e.errorKey)}</p>
${e.message ? `<div class="message">${escapeHtml(e.message)}</div>` : ''}`;
}

/** The fields of the inputs of the action at `at`, above its button. */
function inputFields(at: number, fields: InputField[]): string {
  return fields
    .map((f) => {
      const id = `input-${at}-${f.id}`;
      const attrs = [
        f.kind === 'number' ? 'type="number"' : 'type="text" maxlength="200"',
        f.min !== undefined ? `min="${f.min}"` : '',
        f.max !== undefined ? `max="${f.max}"` : '',
        f.step ? `step="${escapeHtml(f.step)}"` : '',
        f.value !== undefined ? `value="${escapeHtml(f.value)}"` : '',
      ].filter((a) => a !== '');
      const hidden = f.hiddenValue ? "; the instrument's suggested value is not shown here, left empty it is used" : '';
      return `<label for="${id}">${escapeHtml(f.label)} (${escapeHtml(f.hint)}${f.required ? ', required' : ''}${hidden})</label>
<input ${attrs.join(' ')} id="${id}" name="input.#${at}.${f.id}">`;
    })
    .join('\n');
}

/** One choice per item that offers responses of its own; "as the main answer" leaves it to the button. */
function itemChoices(items: ItemChoice[]): string {
  if (items.length === 0) return '';
  const selects = items
    .map((item, k) => {
      const id = `item-${k}`;
      const options = item.options.map((o, j) => `<option value="#${j}">${escapeHtml(o)}</option>`).join('');
      return `<label for="${id}">${escapeHtml(item.label)}: offers ${escapeHtml(item.options.join(', '))}</label>
<select id="${id}" name="item.#${k}"><option value="">as the answer below</option>${options}</select>`;
    })
    .join('\n');
  return `<p class="meta">Some parts of this error offer their own answers. An item left "as the answer below" gets the button's answer, which it must offer.</p>\n${selects}`;
}

/**
 * The question: the error and one button per response or action, posting back with the one-time form token and the
 * form's signed state. Buttons, inputs and item choices post positions (`#<n>`), never the instrument's names or
 * values (form-choices.ts): the page's HTML holds only the texts it shows, redacted by the caller.
 */
export function questionPage(e: ErrorView, linkToken: string, formToken: string, formState: string): string {
  const field = e.source === 'A' ? 'response' : 'action';
  const buttons = e.options
    .map((o, i) => {
      const button = `<button type="submit" name="${field}" value="#${i}"${o.inputs?.length ? '' : ' formnovalidate'}${o.isDefault ? ' class="default"' : ''}>${escapeHtml(o.label)}${o.isDefault ? ' (default)' : ''}</button>`;
      return o.inputs?.length ? `${inputFields(i, o.inputs)}\n${button}` : button;
    })
    .join('\n');
  const runScope = e.runScope
    ? '<label><input type="checkbox" name="scope" value="run"> The same for similar errors until this run ends</label>'
    : '';
  return page(
    `${e.severity}: ${e.title}`,
    `${errorHeader(e)}
${photoSection(e.photo, linkToken)}
<form method="post">
<input type="hidden" name="t" value="${escapeHtml(linkToken)}">
<input type="hidden" name="form" value="${escapeHtml(formToken)}">
<input type="hidden" name="o" value="${escapeHtml(formState)}">
<label for="by">Your name (for the record, optional)</label>
<input type="text" id="by" name="by" maxlength="80" autocomplete="name">
${itemChoices(e.items ?? [])}
${runScope}
<p class="meta">Choose how the instrument goes on:</p>
${buttons || '<p>The error offers no answer here.</p>'}
</form>
<p class="meta">This link works until ${escapeHtml(e.expires)}.</p>`,
  );
}

export type OutcomeKind =
  | 'answered'
  | 'already-answered'
  | 'not-pending'
  | 'refused'
  | 'failed'
  | 'form-used'
  | 'forms-full'
  | 'changed'
  | 'ambiguous'
  | 'invalid';

export interface OutcomeView {
  kind: OutcomeKind;
  instrument: string;
  errorKey: string;
  title?: string;
  /** the answer given (answered, already answered) */
  answer?: string;
  by?: string;
  /** when it was given, with its time zone */
  at?: string;
  /** the instrument's or the client's words (refused, failed) */
  reason?: string;
  /** failed without a confirmation (timeout, reset): the instrument may have applied the answer */
  unconfirmed?: boolean;
  /** answered, and chosen for similar errors until the run ends */
  runScope?: boolean;
}

function who(v: OutcomeView): string {
  const parts = [
    v.answer ? `with <b>${escapeHtml(v.answer)}</b>` : '',
    v.by ? `by ${escapeHtml(v.by)}` : '',
    v.at ? `at ${escapeHtml(v.at)}` : '',
  ];
  return parts.filter((p) => p !== '').join(' ');
}

/** What happened after the button, or what a second visit finds. */
/** A form's lifetime in minutes, as the page says it. */
const FORM_MINUTES = Math.round(FORM_TOKEN_LIFETIME_MS / 60_000);

export function outcomePage(v: OutcomeView): string {
  const head = `<h1>${escapeHtml(v.title ?? 'Instrument error')}</h1><p class="meta">Instrument: ${escapeHtml(v.instrument)}</p><p class="meta">Error: ${escapeHtml(v.errorKey)}</p>`;
  let text: string;
  switch (v.kind) {
    case 'answered':
      text = `<div class="outcome ok">Answered ${who(v)}. The instrument accepted it.</div>${
        v.runScope ? '<p>Similar errors get the same answer until this run ends (by the error policy).</p>' : ''
      }`;
      break;
    case 'already-answered':
      text = `<div class="outcome warn">Already answered${who(v) ? ` ${who(v)}` : ''}. Nothing more was sent.</div>`;
      break;
    case 'not-pending':
      text = `<div class="outcome warn">This error is no longer pending on the instrument (answered there, cleared or resolved). Nothing was sent.</div>`;
      break;
    case 'refused':
      text = `<div class="outcome bad">The instrument refused the answer: ${escapeHtml(v.reason)}</div><p>The error is still pending. Reload the page to try again.</p>`;
      break;
    case 'failed':
      text = v.unconfirmed
        ? `<div class="outcome bad">No confirmation received: the answer may have been applied. Check the instrument before answering again.</div><p class="meta">${escapeHtml(v.reason)}</p>`
        : `<div class="outcome bad">The answer could not be delivered: ${escapeHtml(v.reason)}</div><p>Reload the page to try again.</p>`;
      break;
    case 'invalid':
      text = `<div class="outcome bad">Nothing was sent: ${escapeHtml(v.reason)}</div><p>Open the link again to answer.</p>`;
      break;
    case 'form-used':
      text = `<div class="outcome warn">This form was already used or has expired. Nothing was sent.</div><p>Open the link again to answer.</p>`;
      break;
    case 'forms-full':
      text =
        `<div class="outcome bad">Too many answer forms were posted for this error (or this page) in the last ${FORM_MINUTES} minutes. Nothing was sent.</div>` +
        `<p>Answer on the instrument. The page takes answers for this error again once the forms posted earlier expire (within ${FORM_MINUTES} minutes).</p>`;
      break;
    case 'ambiguous':
      text =
        `<div class="outcome bad">Nothing was sent: the instrument lists several different errors under this number${v.reason ? ` (${escapeHtml(v.reason)})` : ''}, ` +
        'so it could not tell which one the answer is for.</div><p>Answer this error on the instrument.</p>';
      break;
    case 'changed':
      text =
        `<div class="outcome bad">The instrument now lists a different error under this number${v.reason ? `: ${escapeHtml(v.reason)}` : ''}. ` +
        'Nothing was sent.</div><p>The error this link was made for is over. Answer the new error from its own notification, or on the instrument.</p>';
      break;
  }
  return page(v.title ?? 'Instrument error', `${head}${text}`);
}

/** Why a link is refused: expired, cut or mangled, signed by no answer page here now, or for another instrument. */
export type RefusedLink = 'expired' | 'malformed' | 'signature' | 'instrument';

const REFUSED_TEXT: Record<RefusedLink, (hours: string) => string> = {
  expired: (hours) => `It has expired: answer links are valid for ${hours} after the notification.`,
  malformed: () =>
    'It is incomplete: the address may have been cut or changed when it was copied. Open it again straight from the notification.',
  signature: () =>
    'It was not made by an answer page of this Node-RED as it is now: the answer page may have been deleted or replaced, ' +
    'its link secret changed, or the link comes from another Node-RED.',
  instrument: () => 'It was made for an instrument this answer page no longer serves (its address in Node-RED changed).',
};

/** The page a refused link gets: why, as far as it can be told, and what to do instead. Says nothing about the error. */
export function forbiddenPage(why: RefusedLink = 'signature', lifetimeMs = 24 * 3_600_000): string {
  const hours = lifetimeMs / 3_600_000;
  const text = REFUSED_TEXT[why](`${Number.isInteger(hours) ? hours : hours.toFixed(1)} ${hours === 1 ? 'hour' : 'hours'}`);
  return page(
    'Link not valid',
    `<h1>This link is not valid</h1><p>${escapeHtml(text)}</p>` +
      '<p>If the error is still waiting for an answer: answer it in the Node-RED editor or on the instrument, or use the link of a newer notification.</p>',
  );
}

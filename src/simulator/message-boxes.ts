/**
 * Instrument dialogs (message boxes): opened through /sim, pushed on `instinctevents` as `messagebox` events,
 * closed with `POST maintenance/close-view {viewId, viewResult, viewInput}`.
 *
 * Choices where no source says: view ids are 32 hex digits (like other maintenance ids); an unknown or already
 * closed view is 404; a viewResult that is not one of Ok, Yes, No, Cancel, Abort, or not one of the box's
 * buttons, is 400.
 */
import { randomBytes } from 'crypto';

import { field, isObject, requireObject, requireString } from './json-fields';
import { badRequest, HttpProblem, notFound } from './problem';
import type { Route } from './router';

export const VIEW_RESULTS = ['Ok', 'Yes', 'No', 'Cancel', 'Abort'] as const;
export type ViewResult = (typeof VIEW_RESULTS)[number];

export interface MessageBox {
  viewId: string;
  title: string;
  message: string;
  buttons: ViewResult[];
}

export interface ClosedView {
  viewId: string;
  viewResult: ViewResult;
  viewInput: unknown;
  time: number;
}

const MAX_CLOSED = 1000;

function viewResultOf(value: unknown): ViewResult | undefined {
  if (typeof value !== 'string') return undefined;
  return VIEW_RESULTS.find((r) => r.toLowerCase() === value.trim().toLowerCase());
}

export class MessageBoxBook {
  readonly open = new Map<string, MessageBox>();
  readonly closed: ClosedView[] = [];

  clear(): void {
    this.open.clear();
    this.closed.length = 0;
  }

  /** Body of POST /sim/message-box: {title?, text?, buttons?} (buttons default ['Ok']). */
  openBox(body: unknown): MessageBox {
    const obj = isObject(body) ? body : {};
    const rawButtons = field(obj, 'buttons');
    let buttons: ViewResult[] = ['Ok'];
    if (rawButtons !== undefined) {
      if (!Array.isArray(rawButtons) || rawButtons.length === 0)
        throw badRequest('buttons', `buttons must be a non-empty array of ${VIEW_RESULTS.join(', ')}.`);
      buttons = rawButtons.map((b: unknown, i: number) => {
        const r = viewResultOf(b);
        if (!r) throw badRequest(`buttons[${i}]`, `each button is one of ${VIEW_RESULTS.join(', ')}.`);
        return r;
      });
    }
    const title = field(obj, 'title');
    const text = field(obj, 'text') ?? field(obj, 'message');
    const box: MessageBox = {
      viewId: randomBytes(16).toString('hex'),
      title: typeof title === 'string' ? title : 'Instrument',
      message: typeof text === 'string' ? text : '',
      buttons,
    };
    this.open.set(box.viewId, box);
    return { ...box, buttons: [...buttons] };
  }

  /** POST maintenance/close-view */
  close(body: unknown): ClosedView {
    const obj = requireObject(body);
    const viewId = requireString(obj, 'viewId', { nonEmpty: true });
    const rawResult = requireString(obj, 'viewResult', { nonEmpty: true });
    const viewResult = viewResultOf(rawResult);
    if (!viewResult) throw badRequest('viewResult', `viewResult must be one of ${VIEW_RESULTS.join(', ')}.`);
    const box = this.open.get(viewId);
    if (!box) throw notFound(`No open view with id '${viewId}'.`);
    if (!box.buttons.includes(viewResult)) {
      throw new HttpProblem(400, `View '${viewId}' offers ${box.buttons.join(', ')}, not ${viewResult}.`, {
        errors: { viewResult: [`one of ${box.buttons.join(', ')}`] },
      });
    }
    this.open.delete(viewId);
    const closed: ClosedView = { viewId, viewResult, viewInput: field(obj, 'viewInput') ?? null, time: Date.now() };
    this.closed.push(closed);
    if (this.closed.length > MAX_CLOSED) this.closed.shift();
    return closed;
  }
}

export function messageBoxRoutes(book: MessageBoxBook): Route[] {
  return [
    {
      method: 'POST',
      pattern: '/api/v1/maintenance/close-view',
      body: 'json',
      auth: true,
      handle: (ctx) => {
        book.close(ctx.body);
        return { status: 200 };
      },
    },
  ];
}

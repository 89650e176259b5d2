/** Instrument dialogs (message boxes pushed as `messagebox` events): answered with `POST maintenance/close-view`. */
import { LhError, validationError } from './errors';
import { type Sender } from './prep';
import { MEDIA_JSON } from './transport';

export const VIEW_RESULTS = ['Ok', 'Yes', 'No', 'Cancel', 'Abort'] as const;
export type ViewResult = (typeof VIEW_RESULTS)[number];

export interface CloseViewInput {
  viewId: unknown;
  viewResult: unknown;
  viewInput?: unknown;
}

/**
 * The body sent, as the hardware-tested client sends it (an ASP.NET model with non-nullable strings refuses null):
 * the view id as text, the result spelled as the instrument expects it, the input as text (`""` when none).
 */
export interface CloseViewBody {
  viewId: string;
  viewResult: ViewResult;
  viewInput: string;
}

const OP = 'close-view';
const MAX_INPUT_BYTES = 64 * 1024;

/** Checks a close-view request before anything is sent; `viewResult` is matched case-insensitively. */
export function closeViewBody(input: CloseViewInput): CloseViewBody {
  const { viewId, viewResult, viewInput } = input;
  let id: string;
  if (typeof viewId === 'string' && /^[\x21-\x7e]{1,200}$/.test(viewId.trim())) id = viewId.trim();
  else if (typeof viewId === 'number' && Number.isSafeInteger(viewId) && viewId >= 0) id = String(viewId);
  else
    throw validationError(
      OP,
      'viewId',
      'must be the id of the dialog (1 to 200 printable ASCII characters without spaces, or an integer)',
      viewId,
    );
  const result =
    typeof viewResult === 'string' ? VIEW_RESULTS.find((r) => r.toLowerCase() === viewResult.trim().toLowerCase()) : undefined;
  if (!result) throw validationError(OP, 'viewResult', `must be one of ${VIEW_RESULTS.join(', ')}`, viewResult);
  if (typeof viewInput === 'function' || typeof viewInput === 'symbol' || typeof viewInput === 'bigint') {
    throw validationError(OP, 'viewInput', 'must be text, a number, a boolean, an object or an array');
  }
  if (viewInput !== undefined && Buffer.byteLength(JSON.stringify(viewInput) ?? '') > MAX_INPUT_BYTES) {
    throw validationError(OP, 'viewInput', `must be at most ${MAX_INPUT_BYTES} bytes as JSON`);
  }
  return { viewId: id, viewResult: result, viewInput: inputText(viewInput) };
}

/** The input as text: `""` when none, text as given, anything else as its JSON text. */
function inputText(viewInput: unknown): string {
  if (viewInput === undefined || viewInput === null) return '';
  return typeof viewInput === 'string' ? viewInput : (JSON.stringify(viewInput) ?? '');
}

export class DialogApi {
  constructor(private readonly sendA: Sender) {}

  /** Closes (answers) a dialog. Never resent automatically: the instrument may have acted on the first one. */
  async closeView(input: CloseViewInput): Promise<CloseViewBody> {
    const body = closeViewBody(input);
    try {
      await this.sendA({
        api: 'A',
        method: 'POST',
        path: '/maintenance/close-view',
        operation: OP,
        body,
        mediaType: MEDIA_JSON,
        idempotent: false,
      });
    } catch (err) {
      if (err instanceof LhError && err.statusCode === 404) {
        throw new LhError(
          `close-view: the instrument has no open dialog ${String(body.viewId)}: it may have been closed already`,
          {
            kind: 'http',
            operation: OP,
            statusCode: 404,
            body: err.body,
            field: 'viewId',
          },
        );
      }
      throw err;
    }
    return body;
  }
}

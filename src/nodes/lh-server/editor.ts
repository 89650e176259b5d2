import { requestError } from '../../editor/fields';
import { type EditorNode, type Validator } from '../../editor/red';
import { registerNode, text } from '../../editor/register';
import { timeoutSetting } from './timeout';

/** What Test connection and Change password report. */
interface Report {
  checks?: { ok: boolean; message: string }[];
  error?: string;
}

// `${NAME}` and `${NAME:-default}`, as the lh-server expands them when it starts (env-url.ts).
const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,127})(?::-([^}]{0,512}))?\}/g;

// The rules of the runtime (src/client/url-checks.ts): http(s), no user:password@ in the URL, no query or fragment, B over https
// unless "allow unencrypted B (tests only)" is ticked. A URL with environment variables is checked as their defaults give
// it; one that starts with a variable without a default takes its scheme from the environment, which only the
// lh-server knows (it checks the expanded URL when it starts and names the field in its status).
function urlProblem(v: unknown, httpsOnly: boolean): string {
  const written = typeof v === 'string' ? v.trim() : '';
  if (/^\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}/.test(written)) return '';
  const text = written.replace(ENV_REFERENCE, (_whole, _name: string, fallback?: string) => fallback ?? 'env');
  const m = /^(https?):\/\/([^\s/?#]+)/i.exec(text);
  if (!m) return 'url';
  if (m[2].includes('@')) return 'userinfo';
  if (/[?#]/.test(text)) return 'query';
  if (httpsOnly && m[1].toLowerCase() !== 'https') return 'insecureB';
  return '';
}

function insecureAllowed(node: EditorNode): boolean {
  const box = $('#node-config-input-allowInsecureInstrument');
  return box.length > 0 ? box.is(':checked') : node.allowInsecureInstrument === true;
}

/** A field check (the URLs, the client key, the timeout): `problem` names what is wrong (a key under lh-server.errors), or ''. */
function urlCheck(problem: (node: EditorNode, v: unknown) => string): Validator {
  return function (v, opt) {
    const found = problem(this, v);
    return !found || (opt ? text(this, 'errors.' + found) : false);
  };
}

const field = (key: string): JQuery => $('#node-config-input-' + key);

function show(report: Report): void {
  const list = $('#lh-server-test-result').empty();
  for (const c of report.checks ?? []) {
    $('<div>')
      .css('color', c.ok ? '#2e7d32' : '#c62828')
      .text((c.ok ? '\u2714 ' : '\u2716 ') + c.message)
      .appendTo(list);
  }
  if (report.error) {
    $('<div>')
      .css('color', '#c62828')
      .text('\u2716 ' + report.error)
      .appendTo(list);
  }
}

function post(url: string, body: unknown): JQuery.jqXHR {
  return $.ajax({ url, type: 'POST', contentType: 'application/json', data: JSON.stringify(body) });
}

registerNode('lh-server', {
  category: 'config',
  server: false,
  rules: {
    baseUrl: { value: 'http://127.0.0.1:8090', required: true, validate: urlCheck((_n, v) => urlProblem(v, false)) },
    instrumentUrl: {
      validate: urlCheck((node, v) => {
        const problem = v ? urlProblem(v, !insecureAllowed(node)) : '';
        return problem === 'url' ? 'httpsUrl' : problem;
      }),
    },
    clientKey: { validate: urlCheck((_n, v) => (!v || /^[A-Za-z0-9]{1,128}$/.test(String(v)) ? '' : 'clientKey')) },
    tls: { type: 'tls-config', required: false },
    timeout: { validate: urlCheck((_n, v) => (timeoutSetting(v) === undefined ? 'timeout' : '')) },
    coordination: { type: 'lh-coordination', required: false },
  },
  credentials: { username: { type: 'text' }, password: { type: 'password' }, instrumentToken: { type: 'password' } },
  label() {
    return this.name || (typeof this.baseUrl === 'string' && this.baseUrl) || 'lh-server';
  },
  prepare() {
    $('#lh-server-test').on('click', () => {
      $('#lh-server-test-result').text(text(this, 'test.running'));
      const tls = String(field('tls').val() ?? '');
      post('lh-server/test-connection', {
        id: this.id,
        baseUrl: field('baseUrl').val(),
        instrumentUrl: field('instrumentUrl').val(),
        tls: tls === '_ADD_' ? '' : tls,
        timeout: field('timeout').val(),
        simulatorCa: field('simulatorCa').is(':checked'),
        allowInsecureInstrument: field('allowInsecureInstrument').is(':checked'),
        username: field('username').val(),
        password: field('password').val(),
        instrumentToken: field('instrumentToken').val(),
      })
        .done(show)
        .fail((xhr: JQuery.jqXHR) => show({ error: requestError(xhr) }));
    });
    // account actions of the deployed node: what the instrument answered is shown, never a token
    const account = (button: string, action: string, body: () => Record<string, unknown>): void => {
      $(button).on('click', () => {
        post('lh-server/' + encodeURIComponent(this.id) + '/' + action, body())
          .done((r: { message: string }) => show({ checks: [{ ok: true, message: r.message }] }))
          .fail((xhr: JQuery.jqXHR) => show({ error: requestError(xhr) }));
      });
    };
    account('#lh-server-change-password', 'change-expired-password', () => ({ newPassword: $('#lh-server-new-password').val() }));
    account('#lh-server-setup-wizard', 'setup-wizard', () => ({}));
    account('#lh-server-kba-reset', 'kba-password-reset', () => ({}));
  },
});

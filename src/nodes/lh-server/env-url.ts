/**
 * Environment variables inside the lh-server's URLs, with defaults: `http://${LH_SIM_HOST:-127.0.0.1}:${LH_SIM_PORT:-8090}`.
 *
 * Node-RED itself replaces a property only when the whole text is one `${NAME}`, and leaves it as written when NAME is
 * not set, so it cannot give a host from the environment and a port by default, nor a default at all. The lh-server
 * expands its URLs itself when it starts (and when the dialog's Test connection checks them), in the shell's
 * notation: `${NAME}` is NAME's value, `${NAME:-default}` is NAME's value when it is set and not empty, else the
 * default. A `${NAME}` without a default and with NAME unset is an error naming the field and the variable, never an
 * empty host. Pure: the caller passes the lookup (Node-RED's env: the global environment of settings.js, then the
 * process's).
 */

/** The longest URL text expanded (what the edit dialog holds is bounded, but a flow can be written by hand). */
export const MAX_URL_TEXT = 2048;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,127})(?::-([^}]{0,512}))?\}/g;

export type EnvLookup = (name: string) => string | undefined;

export class EnvUrlError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = 'EnvUrlError';
  }
}

/** Whether `text` refers to an environment variable (then the URL as written is not the URL used). */
export function hasEnvReference(text: string): boolean {
  return new RegExp(REFERENCE.source).test(text);
}

/** `text` with every `${NAME}` and `${NAME:-default}` replaced; throws EnvUrlError naming `field` and the rule. */
export function expandEnvUrl(field: string, text: string, lookup: EnvLookup): string {
  if (text.length > MAX_URL_TEXT) throw new EnvUrlError(field, `longer than ${MAX_URL_TEXT} characters`);
  const expanded = text.replace(REFERENCE, (_whole, name: string, fallback: string | undefined) => {
    // a default ends at its first }: one that refers to a variable would leave a ${...} in the URL as text
    if (fallback?.includes('${')) {
      throw new EnvUrlError(field, `the default of \${${name}:-...} refers to a variable: a default is plain text`);
    }
    const value = lookup(name);
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new EnvUrlError(field, `the environment variable ${name} is not set (write \${${name}:-value} to give it a default)`);
  });
  if (text.replace(REFERENCE, '').includes('${')) {
    throw new EnvUrlError(field, 'a ${...} that is not ${NAME} or ${NAME:-default} (NAME: letters, digits, _)');
  }
  return expanded;
}

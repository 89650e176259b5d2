/**
 * The reshaping steps of the config migrations, by name, with no import: a migration table names its transform
 * (`transform: 'rulesToLadders'`), so the table stays plain data that the build hands to the edit dialogs, and the
 * runtime and the dialogs run this same code.
 */

/**
 * lh-error-policy 1 → 2: a rule's single answer (`mode`, `answer`, `delay`) becomes a one-step recovery ladder
 * (`steps`), which behaves exactly as the rule did. Rules that already have steps are left as they are.
 */
export function rulesToLadders(config: Record<string, unknown>): void {
  if (!Array.isArray(config.rules)) return;
  config.rules = config.rules.map((rule: unknown) => {
    if (!rule || typeof rule !== 'object' || Array.isArray(rule)) return rule;
    const { mode, answer, delay, inputs, ...rest } = rule as Record<string, unknown>;
    if (Array.isArray(rest.steps)) return rest;
    const step: Record<string, unknown> = {
      mode: mode ?? 'manual',
      answer: answer ?? '',
      delay: delay ?? 120,
      inputs: inputs ?? '',
    };
    return { ...rest, steps: [step] };
  });
}

/**
 * lh-error-poll 2 → 3: *Remember* (`persist`) is on by default, so a restart of Node-RED notifies no error twice.
 * Nodes saved before had `false` as the dialog's default, which hardly anyone changed: they get it on too (the memory
 * goes to a file in the user directory unless they chose a context store). Untick it to forget on restart.
 */
export function rememberSeenErrors(config: Record<string, unknown>): void {
  if (config.persist === true || config.persist === 'true') return; // on already: kept as written
  config.persist = true;
}

export const TRANSFORMS = { rulesToLadders, rememberSeenErrors } as const;

/** The name a migration step gives its transform. */
export type TransformName = keyof typeof TRANSFORMS;

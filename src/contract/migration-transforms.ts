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

/** FNV-1a (32 bits) of `text` from `seed`, as 8 hex digits: a short, stable digest that needs no import. */
function fnv1a(text: string, seed: number): string {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** What a rule matches on, as the text its derived id is made from (never its position in the list). */
function matchText(rule: Record<string, unknown>): string {
  const field = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
  return JSON.stringify([field(rule.source) || 'any', field(rule.minSeverity), field(rule.pattern), field(rule.code)]);
}

/**
 * The id a rule saved without one gets: a digest of what it matches (source, minimum severity, pattern, code), so that
 * the same saved rule gets the same id on every start and replica, wherever it stands in the list. A second rule that
 * matches the same errors gets `-2`, a third `-3`, … (in list order; the first one of them is the one that decides).
 */
export function derivedRuleId(rule: Record<string, unknown>, earlier: ReadonlySet<string>): string {
  const text = matchText(rule);
  const base = `r${fnv1a(text, 0x811c9dc5)}${fnv1a(text, 0x01000193)}`;
  let id = base;
  for (let n = 2; earlier.has(id); n++) id = `${base}-${n}`;
  return id;
}

/**
 * lh-error-policy 2 → 3: every rule gets a stable `id` (the recovery ladders count per rule id, so a rule added above
 * or moved keeps its counts). A rule saved without one gets the id derived from what it matches (derivedRuleId).
 */
export function ruleIds(config: Record<string, unknown>): void {
  if (!Array.isArray(config.rules)) return;
  const used = new Set<string>();
  for (const rule of config.rules as unknown[])
    if (rule && typeof rule === 'object' && typeof (rule as { id?: unknown }).id === 'string')
      used.add((rule as { id: string }).id);
  config.rules = config.rules.map((rule: unknown) => {
    if (!rule || typeof rule !== 'object' || Array.isArray(rule)) return rule;
    const r = rule as Record<string, unknown>;
    if (typeof r.id === 'string' && r.id !== '') return r;
    const id = derivedRuleId(r, used);
    used.add(id);
    return { id, ...r };
  });
}

export const TRANSFORMS = { rulesToLadders, rememberSeenErrors, ruleIds } as const;

/** The name a migration step gives its transform. */
export type TransformName = keyof typeof TRANSFORMS;

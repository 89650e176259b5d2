import { rulesToLadders } from '../../contract/migration-transforms';
import { check, contextStoreSelect } from '../../editor/fields';
import { type EditorNode } from '../../editor/red';
import { registerNode, text } from '../../editor/register';

const MODES = ['manual', 'semi-automatic', 'walk-away'];
const DELAY = 120;
/** Most steps a ladder may have (the runtime's limit, src/nodes/lh-error-policy/rules.ts). */
const MAX_STEPS = 10;
/** Most rules a policy may have (the runtime's limit, src/nodes/lh-error-policy/rules.ts). */
const MAX_RULES = 200;
const INPUTS = /^\s*(-?\d+\s*=[^,;]*)([,;]\s*-?\d+\s*=[^,;]*)*\s*$/;

/** One step of a rule's ladder, as the dialog edits it (the runtime's shape, src/nodes/lh-error-policy/rules.ts). */
interface Step {
  mode: string;
  answer: string;
  delay: number | string;
  /** B: "id=value, …" in the dialog; an object { id: value } in a flow written otherwise. */
  inputs: string | Record<string, string>;
}

interface Rule {
  /** stable: the ladder counts are kept under it (a rule added above keeps its counts) */
  id: string;
  source: string;
  minSeverity: string;
  pattern: string;
  code: string;
  steps: Step[];
}

const NEW_STEP: Step = { mode: 'manual', answer: '', delay: DELAY, inputs: '' };

/** A step's line: its fields side by side, never wrapped. */
const STEP_LINE = { display: 'flex', flexWrap: 'nowrap', alignItems: 'center', gap: '4px', marginTop: '4px' };
const SHRINKING_INPUT = { flex: '1 1 80px', minWidth: '40px', width: 'auto', margin: '0' };
const SHRINKING_TEXT = { flex: '0 4 auto', minWidth: '1em', overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' };

/** Longest pattern (the runtime's limit, src/nodes/lh-error-policy/rules.ts MAX_PATTERN_LENGTH). */
const MAX_PATTERN_LENGTH = 500;
/** Whether the pattern has what RE2 cannot match in linear time, refused at deploy: lookaround, backreferences. */
function notRe2(pattern: string): boolean {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return true;
      i++; // an escaped character is itself
    } else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(' && /^\?<?[=!]/.test(pattern.slice(i + 1, i + 4))) return true;
  }
  return false;
}

/**
 * A pattern the runtime compiles: JavaScript syntax, at most MAX_PATTERN_LENGTH characters, nothing RE2 refuses
 * (the size of the compiled program is checked at deploy only).
 */
function validPattern(pattern: string): boolean {
  if (pattern.length > MAX_PATTERN_LENGTH || notRe2(pattern)) return false;
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

function stepValid(rule: Partial<Rule>, s: Partial<Step>): boolean {
  if (!MODES.includes(String(s.mode))) return false;
  if (rule.source === 'B' && s.answer && !/^-?\d+$/.test(s.answer)) return false;
  if (s.inputs && typeof s.inputs === 'string' && !INPUTS.test(s.inputs)) return false;
  const d = Number(s.delay);
  return s.delay === '' || s.delay === undefined || (!isNaN(d) && d >= 0 && d <= 604800);
}

/**
 * Each rule a valid pattern and a ladder of 1 to MAX_STEPS valid steps; a rule saved before 0.3 (mode, answer,
 * delay) is read as the one-step ladder the migration makes of it, so a node not yet opened is checked as it runs.
 */
function rulesValid(saved: unknown): boolean {
  const config: Record<string, unknown> = { rules: saved };
  rulesToLadders(config);
  const rules = config.rules;
  if (!Array.isArray(rules) || rules.length > MAX_RULES) return false;
  return rules.every((r: Partial<Rule>) => {
    if (r.pattern && !validPattern(r.pattern)) return false;
    const steps = Array.isArray(r.steps) ? r.steps : [];
    return steps.length > 0 && steps.length <= MAX_STEPS && steps.every((s) => stepValid(r, s));
  });
}

function select(cls: string, values: string[], labels: string[], value: string): JQuery {
  const s = $('<select>').addClass(cls).css({ width: 'auto', marginRight: '4px' });
  values.forEach((v, i) => s.append($('<option>').val(v).text(labels[i])));
  return s.val(value);
}

function input(cls: string, placeholder: string, css: Record<string, string>, value: string | number): JQuery {
  return $("<input type='text'>").addClass(cls).attr('placeholder', placeholder).css(css).val(value);
}

function button(icon: string, label = ''): JQuery {
  return $("<button type='button' class='red-ui-button red-ui-button-small'>").append($('<i>').addClass('fa fa-' + icon), label);
}

function inputsText(inputs: Step['inputs']): string {
  return typeof inputs === 'string'
    ? inputs
    : Object.entries(inputs ?? {})
        .map(([k, v]) => k + '=' + v)
        .join(', ');
}

/** The ladder of a rule: step 1 answers the 1st matching error in a run, step 2 the 2nd, …; the last repeats. */
function addLadder(node: EditorNode, row: JQuery, steps: Partial<Step>[]): void {
  const ladder = $('<div>').addClass('rule-steps').appendTo(row);
  const number = (): void => {
    ladder.children().each(function (i) {
      $(this)
        .find('.rule-step-number')
        .text(i + 1 + '.');
    });
  };
  const addStep = (step: Partial<Step>): void => {
    const s = { ...NEW_STEP, ...step };
    // One line whatever the dialog's width (it opens as wide as what it holds, so a rule added to a new policy lands
    // in a narrow one): the fields shrink, the remove button stays at the end of its step's line.
    const line = $('<div>').addClass('rule-step').css(STEP_LINE).appendTo(ladder);
    $('<span>').addClass('rule-step-number').css({ flex: '0 0 20px' }).appendTo(line);
    const modes = MODES.map((m) => text(node, 'mode.' + m));
    select('rule-mode', MODES, modes, s.mode).css({ flex: '0 4 auto', minWidth: '90px', margin: '0' }).appendTo(line);
    input('rule-answer', text(node, 'rule.answer'), SHRINKING_INPUT, s.answer).appendTo(line);
    input('rule-delay', String(DELAY), { flex: '0 0 50px', width: '50px', margin: '0' }, s.delay).appendTo(line);
    const seconds = text(node, 'rule.seconds');
    $('<span>').addClass('rule-seconds').attr('title', seconds).css(SHRINKING_TEXT).text(seconds).appendTo(line);
    input('rule-inputs', text(node, 'rule.inputs'), SHRINKING_INPUT, inputsText(s.inputs)).appendTo(line);
    button('times')
      .addClass('rule-step-remove')
      .css({ flex: 'none', margin: '0' })
      .on('click', () => {
        if (ladder.children().length > 1) {
          line.remove();
          number();
        }
      })
      .appendTo(line);
    number();
  };
  (steps.length > 0 ? steps : [{}]).forEach(addStep);
  button('plus', ' ' + text(node, 'rule.addStep'))
    .css({ marginTop: '4px' })
    .attr('title', text(node, 'rule.laterSteps'))
    .on('click', () => {
      if (ladder.children().length < MAX_STEPS) addStep({});
    })
    .appendTo(row);
}

/** A new rule's id: unique among the rules of any flow in practice (time and randomness). */
function newRuleId(): string {
  return 'r' + Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
}

function addRule(node: EditorNode, row: JQuery, rule: Partial<Rule> | undefined): void {
  const r = { source: 'any', minSeverity: '', pattern: '', code: '', ...rule };
  // a rule keeps the id it was saved with (the dialog's migration gave rules saved without one their derived id)
  row.data('rule-id', typeof r.id === 'string' && r.id !== '' ? r.id : newRuleId());
  const line1 = $('<div>').appendTo(row);
  select('rule-source', ['any', 'A', 'B'], [text(node, 'rule.anySource'), 'A', 'B'], r.source).appendTo(line1);
  const severities = [text(node, 'rule.anySeverity'), '≥ Warning', '≥ Error', 'Fatal'];
  select('rule-minSeverity', ['', 'Warning', 'Error', 'Fatal'], severities, r.minSeverity).appendTo(line1);
  input('rule-pattern', text(node, 'rule.pattern'), { width: '30%' }, r.pattern).appendTo(line1);
  input('rule-code', text(node, 'rule.code'), { width: '70px', marginLeft: '4px' }, r.code).appendTo(line1);
  addLadder(node, row, Array.isArray(r.steps) ? r.steps : []);
}

function readRule(row: JQuery): Rule {
  const field = (from: JQuery, cls: string): string => String(from.find('.' + cls).val() ?? '');
  const steps: Step[] = [];
  row.find('.rule-step').each(function () {
    const line = $(this);
    const delay = field(line, 'rule-delay');
    steps.push({
      mode: field(line, 'rule-mode'),
      answer: field(line, 'rule-answer'),
      delay: delay === '' ? DELAY : Number(delay),
      inputs: field(line, 'rule-inputs'),
    });
  });
  return {
    id: String(row.data('rule-id')),
    source: field(row, 'rule-source'),
    minSeverity: field(row, 'rule-minSeverity'),
    pattern: field(row, 'rule-pattern'),
    code: field(row, 'rule-code'),
    steps,
  };
}

registerNode('lh-error-policy', {
  icon: 'lh-error-policy.svg',
  outputs: 3,
  outputLabels: ['notify', 'auto', 'escalate'],
  rules: { rules: { validate: check(rulesValid, 'lh-error-policy.errors.rules') } },
  // The rules shown are the migrated ones: a rule saved before 0.3 (mode, answer, delay) is a one-step ladder.
  prepare(config) {
    const list = $('#node-input-rule-container');
    list.css('min-height', '200px').editableList<Partial<Rule>>({
      addItem: (row, _index, rule) => addRule(this, row, rule),
      sortable: true,
      removable: true,
    });
    const rules = Array.isArray(config.rules) ? (config.rules as Partial<Rule>[]) : [];
    for (const rule of rules) list.editableList('addItem', rule);
    contextStoreSelect('store', text(this, 'hint.store'), config.store);
  },
  save() {
    const rules: Rule[] = [];
    $('#node-input-rule-container')
      .editableList('items')
      .each(function () {
        rules.push(readRule($(this)));
      });
    this.rules = rules;
  },
  resize(size) {
    let height = size.height;
    $('#dialog-form>div:not(.node-input-rule-container-row)').each(function () {
      height -= $(this).outerHeight(true) ?? 0;
    });
    $('#node-input-rule-container').editableList('height', Math.max(200, height - 30));
  },
});

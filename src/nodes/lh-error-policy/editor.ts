import { check, contextStoreSelect } from '../../editor/fields';
import { EditorNode } from '../../editor/red';
import { registerNode, text } from '../../editor/register';

const MODES = ['manual', 'semi-automatic', 'walk-away'];
const DELAY = 120;

/** One rule as the dialog edits it (the runtime's rule shape, src/nodes/lh-error-policy/rules.ts). */
interface Rule {
  source: string;
  minSeverity: string;
  pattern: string;
  code: string;
  mode: string;
  answer: string;
  delay: number | string;
}

const NEW_RULE: Rule = { source: 'any', minSeverity: '', pattern: '', code: '', mode: 'manual', answer: '', delay: DELAY };

function validPattern(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

function rulesValid(rules: unknown): boolean {
  if (!Array.isArray(rules)) return false;
  return rules.every((r: Partial<Rule>) => {
    if (!MODES.includes(String(r.mode))) return false;
    if (r.pattern && !validPattern(r.pattern)) return false;
    if (r.source === 'B' && r.answer && !/^-?\d+$/.test(r.answer)) return false;
    const d = Number(r.delay);
    return r.delay === '' || r.delay === undefined || (!isNaN(d) && d >= 0 && d <= 604800);
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

function addRule(node: EditorNode, row: JQuery, rule: Partial<Rule>): void {
  const r = { ...NEW_RULE, ...rule };
  const line1 = $('<div>').appendTo(row);
  select('rule-source', ['any', 'A', 'B'], [text(node, 'rule.anySource'), 'A', 'B'], r.source).appendTo(line1);
  const severities = [text(node, 'rule.anySeverity'), '≥ Warning', '≥ Error', 'Fatal'];
  select('rule-minSeverity', ['', 'Warning', 'Error', 'Fatal'], severities, r.minSeverity).appendTo(line1);
  input('rule-pattern', text(node, 'rule.pattern'), { width: '30%' }, r.pattern).appendTo(line1);
  input('rule-code', text(node, 'rule.code'), { width: '70px', marginLeft: '4px' }, r.code).appendTo(line1);
  const line2 = $('<div>').css({ marginTop: '4px' }).appendTo(row);
  const modes = MODES.map((m) => text(node, 'mode.' + m));
  select('rule-mode', MODES, modes, r.mode).appendTo(line2);
  input('rule-answer', text(node, 'rule.answer'), { width: '30%' }, r.answer).appendTo(line2);
  input('rule-delay', String(DELAY), { width: '60px', marginLeft: '4px' }, r.delay).appendTo(line2);
  $('<span>')
    .text(' ' + text(node, 'rule.seconds'))
    .appendTo(line2);
}

function readRule(row: JQuery): Rule {
  const field = (cls: string): string => String(row.find('.' + cls).val() ?? '');
  const delay = field('rule-delay');
  return {
    source: field('rule-source'),
    minSeverity: field('rule-minSeverity'),
    pattern: field('rule-pattern'),
    code: field('rule-code'),
    mode: field('rule-mode'),
    answer: field('rule-answer'),
    delay: delay === '' ? DELAY : Number(delay),
  };
}

registerNode('lh-error-policy', {
  icon: 'lh-error-policy.svg',
  outputs: 3,
  outputLabels: ['notify', 'auto', 'escalate'],
  rules: {
    rules: { validate: check(rulesValid, 'lh-error-policy.errors.rules') },
  },
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

import { check } from '../../editor/fields';
import { registerNode, text } from '../../editor/register';

const KNOWN = ['messagebox', 'maintenancedata', 'finished', 'runstatus', 'timeremaining'];

/** The event codes of a comma, semicolon or space separated list, lower case. */
function split(v: unknown): string[] {
  return String(v ?? '')
    .split(/[\s,;]+/)
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '');
}

registerNode('lh-events', {
  icon: 'lh-events.svg',
  inputs: 0,
  outputs: 2,
  outputLabels: ['events', 'connection'],
  rules: { codes: { validate: check((v) => split(v).every((c) => /^[a-z0-9._-]{1,64}$/.test(c)), 'lh-events.errors.codes') } },
  label() {
    const codes = split(this.codes);
    return this.name || (codes.length > 0 ? text(this, 'paletteLabel') + ': ' + codes.join(', ') : text(this, 'paletteLabel'));
  },
  prepare(config) {
    const codes = split(config.codes);
    const list = $('#lh-events-known');
    for (const code of KNOWN) {
      const id = 'lh-events-code-' + code;
      const row = $('<div>').css({ 'margin-left': '105px' });
      $("<input type='checkbox'>")
        .attr('id', id)
        .val(code)
        .css({ width: 'auto', 'vertical-align': 'top', 'margin-right': '6px' })
        .prop('checked', codes.includes(code))
        .appendTo(row);
      $('<label>')
        .attr('for', id)
        .css({ width: 'auto' })
        .text(text(this, 'codes.' + code))
        .appendTo(row);
      row.appendTo(list);
    }
    $('#lh-events-other').val(codes.filter((c) => !KNOWN.includes(c)).join(', '));
  },
  save() {
    const chosen: string[] = [];
    $('#lh-events-known input:checked').each(function () {
      chosen.push(String($(this).val()));
    });
    for (const c of split($('#lh-events-other').val())) if (!chosen.includes(c)) chosen.push(c);
    $('#node-input-codes').val(chosen.join(','));
    this.codes = chosen.join(',');
  },
});

'use strict';
// The edit dialogs' common rows, written once: a template line `<lh-row ...>` in src/nodes/<type>/<type>.html becomes
// the row's markup in the html Node-RED serves (scripts/build.js). Texts are the node's own: <type>.label.<field>,
// <type>.placeholder.<field>, <type>.<field>.<value> for a select's options, <type>.pick.button.
//   <lh-row server>                     the lh-server select (Node-RED builds it from the `server` default)
//   <lh-row name>                       the node's name
//   <lh-row field="f" icon="i" ...>     a text input; with `typed`: a typedInput ("from msg"), its type in fType;
//                                       `placeholder`: its placeholder text; `width="55%"`; `pick`: a "pick from the
//                                       instrument" button and list (src/editor/fields.ts picker); `class="…"`: row classes
//   <lh-row field="f" icon="i" select="a b c">   a select of those values
//   <lh-row field="f" check ...>        a checkbox: with `icon`, beside its label; without, under an empty label with
//                                       its label after it; `hint`: the text <type>.hint.<f> after it
const ROW = /^([ \t]*)<lh-row\b([^>]*)>[ \t]*$/gm;

function attributes(text) {
  const attrs = {};
  for (const m of text.matchAll(/([\w-]+)(?:="([^"]*)")?/g)) attrs[m[1]] = m[2] === undefined ? true : m[2];
  return attrs;
}

const label = (type, field, icon) =>
  `<label for="node-input-${field}"><i class="fa fa-${icon}"></i> <span data-i18n="${type}.label.${field}"></span></label>`;

function rowLines(type, a) {
  if (a.server)
    return [
      '<div class="form-row">',
      `    ${label(type, 'server', 'flask')}`,
      '    <input type="text" id="node-input-server">',
      '</div>',
    ];
  if (a.name)
    return [
      '<div class="form-row">',
      `    ${label(type, 'name', 'tag')}`,
      `    <input type="text" id="node-input-name" data-i18n="[placeholder]${type}.label.name">`,
      '</div>',
    ];
  const { field, icon } = a;
  const cls = a.class ? ` ${a.class}` : '';
  if (field && a.check) return checkLines(type, field, icon, cls, a.hint);
  if (!field || !icon) throw new Error(`${type}.html: <lh-row> needs field and icon (or server, name)`);
  const width = a.width || '70%';
  const lines = [`<div class="form-row${cls}">`, `    ${label(type, field, icon)}`];
  if (typeof a.select === 'string') {
    lines.push(`    <select id="node-input-${field}" style="width: ${width}">`);
    for (const value of a.select.split(/\s+/).filter(Boolean))
      lines.push(`        <option value="${value}" data-i18n="${type}.${field}.${value}"></option>`);
    lines.push('    </select>');
  } else {
    const placeholder = a.placeholder ? ` data-i18n="[placeholder]${type}.placeholder.${field}"` : '';
    lines.push(`    <input type="text" id="node-input-${field}" style="width: ${width}"${placeholder}>`);
    if (a.typed) lines.push(`    <input type="hidden" id="node-input-${field}Type">`);
    if (a.pick)
      lines.push(
        `    <button type="button" class="red-ui-button" id="${type}-pick"><i class="fa fa-search"></i> <span data-i18n="${type}.pick.button"></span></button>`,
      );
  }
  lines.push('</div>');
  if (a.pick)
    lines.push(
      `<div class="form-row${cls}">`,
      '    <label>&nbsp;</label>',
      `    <select id="${type}-pick-list" style="width: 70%; display: none"></select>`,
      `    <div id="${type}-pick-hint" class="form-tips" style="width: 70%; display: none"></div>`,
      '</div>',
    );
  return lines;
}

function checkLines(type, field, icon, cls, hint) {
  const box = `<input type="checkbox" id="node-input-${field}" style="display: inline-block; width: auto; vertical-align: top;">`;
  if (icon)
    return [
      `<div class="form-row${cls}">`,
      `    ${label(type, field, icon)}`,
      `    ${box}`,
      ...(hint ? [`    <span data-i18n="${type}.hint.${field}"></span>`] : []),
      '</div>',
    ];
  return [
    `<div class="form-row${cls}">`,
    '    <label>&nbsp;</label>',
    `    ${box}`,
    `    <label for="node-input-${field}" style="width: auto" data-i18n="${type}.label.${field}"></label>`,
    ...(hint ? [`    <div class="form-tips" data-i18n="${type}.hint.${field}"></div>`] : []),
    '</div>',
  ];
}

/** The template of `type` with each <lh-row> line expanded. */
function expandRows(html, type) {
  return html.replace(ROW, (_m, indent, text) =>
    rowLines(type, attributes(text))
      .map((line) => indent + line)
      .join('\n'),
  );
}

module.exports = { expandRows };

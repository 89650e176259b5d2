/**
 * Texts as messages, labels and documents show them: cut to a length in UTF-16 units without cutting a character in
 * two (a lone surrogate half is refused by strict JSON readers and shown as U+FFFD in a metric label), and without the
 * characters that would forge a log line.
 */

/** The longest start of `text` of whole characters within `max` UTF-16 units. */
export function wholeCharactersWithin(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  for (const c of text) {
    if (out.length + c.length > max) break;
    out += c;
  }
  return out;
}

/** `text` in at most `max` UTF-16 units, "…" in the last place where it was cut (a document's, a page's text). */
export function clippedWithin(text: string, max: number): string {
  return text.length <= max ? text : `${wholeCharactersWithin(text, max - 1)}…`;
}

/** At most `max` whole characters of `text` (see wholeCharactersWithin), then "…" where it was cut (a message's). */
export function clippedText(text: string, max: number): string {
  const cut = wholeCharactersWithin(text, max);
  return cut.length < text.length ? `${cut}…` : cut;
}

/**
 * `text` in at most `max` UTF-16 units of whole characters: its start and its end with "…" between, where a message
 * puts what it echoes (a key, a name) between the field it names and the rule.
 */
export function clippedInTheMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = wholeCharactersWithin(text, Math.ceil(max * 0.6));
  let tail = text.slice(text.length - (max - head.length - 1));
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1); // the second half of a character cut in two
  return `${head}…${tail}`;
}

/**
 * `text` with every control and format character, line and paragraph separator and lone surrogate half as U+FFFD: a
 * text from elsewhere (a file, a step's key) that a message shows starts no forged log line, escape sequence or bidi
 * override.
 */
export function shownInLog(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu, '\ufffd');
}

/**
 * Texts cut to a length in UTF-16 units without cutting a character in two: a lone surrogate half is refused by
 * strict JSON readers and shown as U+FFFD in a metric label.
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

/**
 * Instrument text made one line for a msg.topic (an e-mail subject, a chat title, a console log line): line breaks and
 * blanks (U+0085 NEXT LINE too, which `\s` leaves out) as one space; any other control character (an escape sequence,
 * a NUL), a bidirectional override or isolate (U+202E shows the rest of the subject reversed: "Fatal" read as
 * something else), an invisible zero-width character that is no part of a script or an emoji (U+200B, U+2060, U+FEFF;
 * U+200C and U+200D are kept) and a lone surrogate (no character: an encoder turns it into garbage or fails) as
 * U+FFFD, so what the subject shows is what the instrument wrote.
 */
const NOT_SHOWN = /[\p{Cc}\p{Cs}\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/gu;

export function oneLine(value: string): string {
  return value
    .replace(/[\s\u0085]+/g, ' ')
    .trim()
    .replace(NOT_SHOWN, '\ufffd');
}

/** The operations of lh-instrument (the runtime's checks and the edit dialog's choices; no imports, so both can use it). */
export const INSTRUMENT_OPERATIONS = [
  'initialize',
  'heater-start',
  'heater-stop',
  'heater-status',
  'lights-custom',
  'lights-automatic',
  'lights-get',
  'snapshot',
  'deck-scan',
  'is-initialized',
  'is-parked',
  'has-tips',
  'traces',
] as const;

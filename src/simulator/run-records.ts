/**
 * Run records (GET run-data…): what the simulator keeps of every finished run, its PDF report and its
 * pipetting CSV. The PDF is written by hand (one page, Helvetica text objects, a correct cross-reference
 * table) so that no PDF library is needed at run time.
 */
import { notFound } from './problem';

/** The words the simulator's runs end with; a run scripted with `endNext` records any word given (a real instrument's words are not documented). */
export type RunResult = 'Completed' | 'Aborted' | 'Failed' | (string & Record<never, never>);

export interface StepLog {
  name: string;
  stepType: string;
  startTime: string;
  endTime: string | null;
  status: 'Done' | 'Interrupted' | 'NotRun';
  /** the step's variant fields (destinations, volumes…) for the pipetting CSV */
  fields: Record<string, unknown>;
}

export interface RunErrorLog {
  id: string;
  title: string;
  time: string;
  selectedResponse: string | null;
}

/** An entry of GET run-data (the observed fields plus endTime and protocolId). */
export interface RunRecordSummary {
  id: string;
  protocolId: number;
  protocolName: string;
  startTime: string;
  endTime: string;
  runResult: RunResult;
  userName: string;
}

/** One run as the simulator keeps it: the summary and what the report and the pipetting CSV are made from. */
export interface RunRecord extends RunRecordSummary {
  isSimulation: boolean;
  steps: StepLog[];
  errors: RunErrorLog[];
}

/** Bounded like the error history: a simulator left running for months stays small. */
export const MAX_RUN_RECORDS = 1000;

export class RunRecordBook {
  private records: RunRecord[] = [];

  clear(): void {
    this.records = [];
  }

  get all(): readonly RunRecord[] {
    return this.records;
  }

  add(record: RunRecord): void {
    this.records.push(record);
    if (this.records.length > MAX_RUN_RECORDS) this.records.shift();
  }

  /** Newest first. */
  list(): RunRecordSummary[] {
    return [...this.records].reverse().map((r) => ({
      id: r.id,
      protocolId: r.protocolId,
      protocolName: r.protocolName,
      startTime: r.startTime,
      endTime: r.endTime,
      runResult: r.runResult,
      userName: r.userName,
    }));
  }

  get(id: string): RunRecord {
    const r = this.records.find((x) => x.id === id);
    if (!r) throw notFound(`Run data '${id}' was not found.`);
    return JSON.parse(JSON.stringify(r)) as RunRecord;
  }
}

// ---- PDF report ------------------------------------------------------------------------------------

const PAGE_LINES = 52;

/** A PDF string literal: Latin-1 printable text with \, ( and ) escaped; anything else becomes '?'. */
function pdfText(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return `(${printable.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

function reportLines(r: RunRecord): string[] {
  const lines = [
    `Protocol: ${r.protocolName} (id ${r.protocolId})`,
    `Run: ${r.id}`,
    `Result: ${r.runResult}${r.isSimulation ? ' (simulated run)' : ''}`,
    `Started: ${r.startTime}`,
    `Ended: ${r.endTime}`,
    `User: ${r.userName}`,
    '',
    'Steps:',
    ...r.steps.map((s, i) => `  ${i + 1}. ${s.name} [${s.stepType}] ${s.status}${s.endTime ? ` at ${s.endTime}` : ''}`),
    '',
    r.errors.length === 0 ? 'Errors: none' : 'Errors:',
    ...r.errors.map((e) => `  ${e.time} ${e.title}: ${e.selectedResponse ?? 'not answered'}`),
  ];
  if (lines.length <= PAGE_LINES) return lines;
  return [...lines.slice(0, PAGE_LINES - 1), `... ${lines.length - PAGE_LINES + 1} more lines`];
}

/** The run report as a one-page PDF. */
export function pdfReport(r: RunRecord): Buffer {
  const content = [
    'BT',
    '/F1 16 Tf',
    '50 790 Td',
    `${pdfText('Run report')} Tj`,
    '/F1 10 Tf',
    '14 TL',
    'T*',
    ...reportLines(r).map((line) => `T* ${pdfText(line)} Tj`),
    'ET',
  ].join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    `<< /Title ${pdfText(`Run report ${r.protocolName}`)} /Producer ${pdfText('lh-simulator')} >>`,
  ];
  // The binary comment after the header marks the file as binary for transfer tools, as PDF writers do.
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const chunk = Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`, 'latin1');
    parts.push(chunk);
    offset += chunk.length;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f \n' +
      offsets
        .map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)
        .join('')
        .replace(/\n$/, ''),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>`,
    'startxref',
    String(offset),
    '%%EOF',
    '',
  ].join('\n');
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

// ---- pipetting CSV ---------------------------------------------------------------------------------

const CSV_HEADER = ['Time', 'Step', 'StepType', 'Channel', 'Labware', 'Wells', 'VolumeUl', 'Status'];

/** A CSV field: quoted when needed; a leading =, +, - or @ is defused so spreadsheets do not run it as a formula. */
function csvField(value: unknown): string {
  let text = value === undefined || value === null ? '' : String(value);
  if (/^[=+\-@]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

interface Destination {
  labware: unknown;
  wells: unknown;
}

function destinationsOf(fields: Record<string, unknown>): Destination[] {
  const raw = fields.destinations;
  if (!Array.isArray(raw)) return [];
  return raw.map((d: unknown) => {
    const o = d && typeof d === 'object' ? (d as Record<string, unknown>) : {};
    return { labware: o.labware ?? o.Labware ?? '', wells: o.wells ?? o.Wells ?? '' };
  });
}

/** One row per destination of every pipetting step that ran (or was interrupted). */
export function pipettingCsv(r: RunRecord): Buffer {
  const rows = [CSV_HEADER];
  for (const s of r.steps) {
    if (s.status === 'NotRun') continue;
    const volume = typeof s.fields.volume === 'number' ? s.fields.volume : 50;
    destinationsOf(s.fields).forEach((d, i) => {
      rows.push([
        s.endTime ?? s.startTime,
        s.name,
        s.stepType,
        String(i + 1),
        String(d.labware),
        String(d.wells),
        String(volume),
        s.status,
      ]);
    });
  }
  return Buffer.from(rows.map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n', 'utf8');
}

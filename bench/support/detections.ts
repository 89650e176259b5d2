/** A msg on lh-error-poll's output 1: the error's key and when it arrived (preciseNow). */
export interface Detection {
  key: string;
  time: number;
}

export interface DetectionTally {
  /** for each injected error detected: its first detection − its injection, ms */
  latencies: number[];
  /** injected errors never detected */
  missed: number;
  /** how many times each key was detected, injected or not */
  counts: Map<string, number>;
}

/** Matches what lh-error-poll emitted with what the simulators injected (both timestamped with preciseNow). */
export function tallyDetections(raised: Detection[], injected: Detection[]): DetectionTally {
  const firstSeen = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const r of raised) {
    counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
    if (!firstSeen.has(r.key)) firstSeen.set(r.key, r.time);
  }
  const latencies: number[] = [];
  let missed = 0;
  for (const inj of injected) {
    const seen = firstSeen.get(inj.key);
    if (seen === undefined) missed++;
    else latencies.push(seen - inj.time);
  }
  return { latencies, missed, counts };
}

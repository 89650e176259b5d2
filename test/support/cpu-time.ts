/** The CPU time (user and system, every thread of this process) `f` takes, in ms: for cost checks against a busy machine's wall clock. */
export function cpuMs(f: () => void): number {
  const start = process.cpuUsage();
  f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

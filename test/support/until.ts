/**
 * Resolves once `check` holds (checked every 5 ms), or fails naming what was awaited.
 *
 * The bound only decides how long a test that is failing already takes to say so: it never makes a passing test pass.
 * It is 15 s by default, under mocha's 20 s, so a machine five times slower than a quiet one (CI's three lanes at once
 * on 2 cores, load 8 and more) still sees what takes a second or two on a quiet one (a reconnect after a back-off, a
 * TLS handshake, a redeploy): at 5 s the default was that second's margin, not five times it. A test that needs
 * "nothing more comes" waits for an event and counts, never for this bound to run out.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

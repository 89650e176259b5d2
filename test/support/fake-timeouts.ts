import FakeTimers from '@sinonjs/fake-timers';

type Clock = ReturnType<typeof FakeTimers.install>;

/**
 * Fake setTimeout and clearTimeout for a test, put back after each test: call the function returned inside a test to
 * install them (real I/O, setImmediate and Date stay real, so Redis and the replicas' clocks go on).
 */
export function useFakeTimeouts(): () => Clock {
  let clock: Clock | undefined;
  afterEach(function () {
    clock?.uninstall();
    clock = undefined;
  });
  return () => (clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout'] }));
}

import { StoreRedis } from '../../src/coordination/stores';

/** Redis as one replica reaches it: a call for which `fails` returns an error is refused with it, the rest go through. */
export function failingWhen(redis: StoreRedis, fails: (command: PropertyKey, args: unknown[]) => Error | undefined): StoreRedis {
  return new Proxy(redis, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const error = fails(prop, args);
        if (error) return Promise.reject(error);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** Redis as one replica reaches it: `down` makes every call fail (a blip or a partition of that replica alone). */
export function reachable(redis: StoreRedis): { redis: StoreRedis; down: boolean } {
  const link = { down: false, redis };
  link.redis = failingWhen(redis, () => (link.down ? new Error('connect ECONNREFUSED (test: Redis unreachable)') : undefined));
  return link;
}

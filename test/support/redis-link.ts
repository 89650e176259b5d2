import { StoreRedis } from '../../src/coordination/stores';

/** Redis as one replica reaches it: `down` makes every call fail (a blip or a partition of that replica alone). */
export function reachable(redis: StoreRedis): { redis: StoreRedis; down: boolean } {
  const link = { down: false, redis };
  link.redis = new Proxy(redis, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        if (link.down) return Promise.reject(new Error('connect ECONNREFUSED (test: Redis unreachable)'));
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return link;
}

// Cached objects are shared by every reader: freezing them makes an accidental mutation
// throw (in strict-mode ESM) instead of silently corrupting the cache.

export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  for (const field of Object.values(value)) deepFreeze(field);
  return Object.freeze(value);
}

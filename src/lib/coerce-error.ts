// `catch (e: unknown)` lands here: whatever was thrown becomes an Error, so callers can read `.message`
// without casting (a rejected promise may carry a string, an object, or nothing at all).
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  try {
    return new Error(`Non-error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`Non-error thrown: ${String(thrown)}`);
  }
}

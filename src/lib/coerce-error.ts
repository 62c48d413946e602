// `catch (e: unknown)` lands here: whatever was thrown becomes an Error, so callers can read `.message`
// without casting (a rejected promise may carry a string, an object, or nothing at all). Errors made in
// another realm (undici's inside jest's VM context, a worker thread's) fail `instanceof Error` but are still
// errors: they keep their own message and name.
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === 'string') return new Error(thrown);
  if (thrown && typeof thrown === 'object' && typeof (thrown as { message?: unknown }).message === 'string') {
    const foreign = thrown as { message: string; name?: unknown; cause?: unknown };
    const error = new Error(foreign.message, { cause: foreign.cause });
    if (typeof foreign.name === 'string') error.name = foreign.name;
    return error;
  }
  try {
    return new Error(`Non-error thrown: ${JSON.stringify(thrown)}`);
  } catch {
    return new Error(`Non-error thrown: ${String(thrown)}`);
  }
}

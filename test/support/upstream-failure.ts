// The UpstreamError a call to the service's clients rejects with; anything else (a success, another error) fails
// the test that expected one.
import { UpstreamError } from '../../src/upstream/errors.js';

export async function upstreamFailure(call: Promise<unknown>): Promise<UpstreamError> {
  try {
    await call;
  } catch (e: unknown) {
    if (e instanceof UpstreamError) return e;
    throw e;
  }
  throw new Error('call succeeded');
}

import { isAppError } from '../errors.ts';

/** What `read` finds, or null when it throws not-found: a nullable field or entity for what is absent or hidden. */
export async function nullWhenNotFound<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (error) {
    if (isAppError(error) && error.code === 'not-found') return null;
    throw error;
  }
}

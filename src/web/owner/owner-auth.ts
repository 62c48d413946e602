// Who is looking at /me: the owner of the connection their session cookie is bound to (owner-sessions.ts),
// signed in with Calendbook, never with a password of ours. The cookie is HttpOnly and SameSite=Lax, not
// Strict: a Strict cookie set by the OAuth callback would not be sent on the redirect that follows it, which
// a cross-site navigation (the way back from Calendbook) started. Lax still keeps it off other sites' form
// posts, and every unsafe request must also come from our own origin (the admin's check).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http-error.js';
import { OWNER_COOKIE, type OwnerSessions } from './owner-sessions.js';

export interface OwnerAuth {
  /** The signed-in owner's connection id, or undefined. */
  connectionOf(request: FastifyRequest): Promise<string | undefined>;
  /** The owner's connection id; a 401 page offering sign-in otherwise. */
  requireOwner(request: FastifyRequest): Promise<string>;
  signIn(reply: FastifyReply, connectionId: string): Promise<void>;
  signOut(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Ends every session of the connection, and clears this browser's cookie. */
  signOutEverywhere(reply: FastifyReply, connectionId: string): Promise<void>;
}

export function createOwnerAuth(options: {
  sessions: OwnerSessions;
  publicBaseUrl: string;
  sessionSeconds: number;
}): OwnerAuth {
  const secure = options.publicBaseUrl.startsWith('https:');
  const cookieOptions = { path: '/', httpOnly: true, sameSite: 'lax', secure } as const;
  const cookieOf = (request: FastifyRequest) => request.cookies[OWNER_COOKIE];

  async function connectionOf(request: FastifyRequest): Promise<string | undefined> {
    const id = cookieOf(request);
    return id === undefined ? undefined : options.sessions.connectionOf(id);
  }

  return {
    connectionOf,
    async requireOwner(request) {
      const connectionId = await connectionOf(request);
      if (connectionId === undefined) {
        throw new HttpError(401, 'Sign in with Calendbook to see your page.', { title: 'Sign in' });
      }
      return connectionId;
    },
    async signIn(reply, connectionId) {
      const id = await options.sessions.start(connectionId);
      reply.setCookie(OWNER_COOKIE, id, { ...cookieOptions, maxAge: options.sessionSeconds });
    },
    async signOut(request, reply) {
      const id = cookieOf(request);
      if (id !== undefined) await options.sessions.end(id);
      reply.clearCookie(OWNER_COOKIE, cookieOptions);
    },
    async signOutEverywhere(reply, connectionId) {
      await options.sessions.endAll(connectionId);
      reply.clearCookie(OWNER_COOKIE, cookieOptions);
    },
  };
}

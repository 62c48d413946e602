// The connections slotfeed's outgoing requests (CalDAV writes, webhook deliveries) go out on, kept open between
// requests to the same server. A push is a few requests, and a worker pushes many destinations on one server (an
// iCloud, a Fastmail, a company's own) one after another; a webhook endpoint gets every event of an installation:
// without keep-alive each request paid a new TCP connection and, over https, a TLS handshake, on both sides.
// request-filtering-agent's own shared agents (useAgent) are plain http.Agents without keep-alive, so the agents
// are made here, one pair per process and policy, with it on.
//
// The address filter stays where it was: request-filtering-agent checks the address a name resolves to when a
// connection is made, and a kept connection only ever goes to the address it was checked for. An idle connection
// is closed after IDLE_SOCKET_MS, below the shortest keep-alive of common servers (Apache's 5 s), or sooner when the
// server says so (Keep-Alive: timeout=); a request sent on one the server closed first fails at once, before any
// answer (closedWhileKept), and its sender sends it again.
import http from 'node:http';
import https from 'node:https';
import {
  RequestFilteringHttpAgent,
  RequestFilteringHttpsAgent,
  type RequestFilteringAgentOptions,
} from 'request-filtering-agent';

/** How long an idle connection to a server is kept for the next request. */
export const IDLE_SOCKET_MS = 4_000;

export interface KeepAliveAgents {
  agentFor(url: URL): http.Agent;
}

const keepAlive = { keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' } as const;

/**
 * Agents for one target policy: private addresses refused after DNS unless `allowPrivateTargets`; `filter` adds
 * to request-filtering-agent's settings and the https trust (a test's allowed loopback address, a bench's own
 * certificate authority).
 */
export function createKeepAliveAgents(options: {
  allowPrivateTargets: boolean;
  filter?: RequestFilteringAgentOptions & Pick<https.AgentOptions, 'ca'>;
}): KeepAliveAgents {
  const [plain, secure] = options.allowPrivateTargets
    ? [new http.Agent(keepAlive), new https.Agent(keepAlive)]
    : [
        new RequestFilteringHttpAgent({ ...keepAlive, ...options.filter }),
        new RequestFilteringHttpsAgent({ ...keepAlive, ...options.filter }),
      ];
  return { agentFor: (url) => (url.protocol === 'https:' ? secure : plain) };
}

const shared = new Map<boolean, KeepAliveAgents>();

/** The process's agents for a policy: every account opened with it shares their connections. */
export function sharedKeepAliveAgents(allowPrivateTargets: boolean): KeepAliveAgents {
  let agents = shared.get(allowPrivateTargets);
  if (!agents) {
    agents = createKeepAliveAgents({ allowPrivateTargets });
    shared.set(allowPrivateTargets, agents);
  }
  return agents;
}

const CLOSED_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** A request is sent again at most this often on a closed kept connection: each try takes another, or a new one. */
export const STALE_CONNECTION_RETRIES = 3;

/**
 * The request failed on a kept connection before any answer began (`answering` false): the server had closed the
 * connection while it sat idle, and never saw the request.
 */
export const closedWhileKept = (request: http.ClientRequest, answering: boolean, error: unknown): boolean =>
  request.reusedSocket &&
  !answering &&
  CLOSED_CONNECTION_CODES.has((error as { code?: unknown } | undefined)?.code as string);

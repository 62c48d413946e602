// What `slotfeed simulator` prints at start: everything needed to point a client at it.
import { CONTROL_PREFIX } from './control-routes.js';
import type { RunningSimulator } from './types.js';

export function formatSimulatorBanner(sim: RunningSimulator): string {
  const users = sim.users.map((u) => `  ${u.email.padEnd(36)} ${u.timezone.padEnd(22)} ${u.id}`);
  return [
    'Calendbook simulator',
    `  API base URL:   ${sim.baseUrl}`,
    `  Auth URL:       ${sim.authUrl}`,
    `  Client id:      ${sim.clientId}`,
    // The simulator's secret is a local, well-known test value; printing it is the point of the banner.
    `  Client secret:  ${sim.clientSecret}`,
    `  Redirect URIs:  ${sim.redirectUris.join(', ')}`,
    `  Control API:    ${sim.origin}${CONTROL_PREFIX}/`,
    'Users (log in at the auth URL, or pass login_hint=<email>):',
    ...users,
  ].join('\n');
}

// The admin's "API and webhooks" page and its actions: API keys (create, shown once; revoke) and webhook
// endpoints (create, secret shown once; delete; enable a disabled one again; send a test event, which the page
// then shows queued in the endpoint's log). Connections are named by e-mail address or id, teams by name or id,
// as elsewhere on the admin's pages.
import type { FastifyInstance } from 'fastify';
import { ApiKeyNotFoundError, InvalidApiKeyScopeError } from '../../store/api-keys.js';
import { ConnectionNotFoundError } from '../../store/connections.js';
import { TeamNotFoundError } from '../../store/teams.js';
import { WebhookEndpointNotFoundError, WebhookTargetError } from '../../store/webhooks.js';
import {
  ADMIN_API,
  adminApiPage,
  API_NOTICES,
  secretShownOncePage,
  testedLocation,
} from './admin-api-pages.js';
import { field, fieldValues, formActions, seeOther } from '../form-replies.js';
import { html } from '../html.js';
import { asSentence, HttpError } from '../http-error.js';
import type { WebDeps } from '../web-deps.js';

function asHttpError(thrown: unknown): unknown {
  if (thrown instanceof ApiKeyNotFoundError) return new HttpError(404, 'No such API key.');
  if (thrown instanceof WebhookEndpointNotFoundError) return new HttpError(404, 'No such webhook endpoint.');
  if (
    thrown instanceof InvalidApiKeyScopeError ||
    thrown instanceof WebhookTargetError ||
    thrown instanceof ConnectionNotFoundError ||
    thrown instanceof TeamNotFoundError
  ) {
    return new HttpError(400, asSentence(thrown.message));
  }
  return thrown;
}

export function registerAdminApiRoutes(app: FastifyInstance, deps: WebDeps): void {
  const keys = deps.apiKeys;
  const teams = deps.teams;

  app.get(ADMIN_API, async (request, reply) => {
    const [allKeys, endpoints, allTeams] = await Promise.all([
      keys.list(),
      deps.webhooks.list(),
      teams.list(),
    ]);
    const connectionIds = [
      ...new Set([
        ...allKeys.flatMap((k) => k.connectionIds),
        ...endpoints.flatMap((e) => e.connectionId ?? []),
      ]),
    ];
    const connections = new Map(
      (await deps.connectionAdmin.contacts(connectionIds)).map((c) => [
        c.id,
        c.email ?? c.displayName ?? c.id,
      ]),
    );
    const teamNames = new Map(allTeams.map((t) => [t.id, t.name]));
    const nameOf = (ids: string[], names: Map<string, string>) =>
      ids.map((id) => names.get(id) ?? `${id} (gone)`);
    const notice = API_NOTICES[field(request.query, 'notice')];
    const tested = field(request.query, 'tested');
    return adminApiPage(reply, {
      keys: allKeys.map((key) => ({
        key,
        scope: [
          ...nameOf(key.connectionIds, connections),
          ...nameOf(key.teamIds, teamNames).map((name) => `team ${name}`),
        ].join(', '),
      })),
      endpoints: await Promise.all(
        endpoints.map(async (endpoint) => ({
          endpoint,
          ownerName:
            endpoint.teamId !== null
              ? `team ${teamNames.get(endpoint.teamId) ?? endpoint.teamId}`
              : (connections.get(endpoint.connectionId ?? '') ?? String(endpoint.connectionId)),
          deliveries: await deps.webhooks.deliveries(endpoint.id, 20),
        })),
      ),
      teams: allTeams.map((t) => ({ id: t.id, name: t.name })),
      now: deps.now(),
      ...(notice === undefined ? {} : { notice }),
      ...(tested === '' ? {} : { tested }),
    });
  });

  const action = formActions(app, asHttpError);

  action(`${ADMIN_API}/keys`, async (request, reply) => {
    const refs = field(request.body, 'connections')
      .split(/[\s,;]+/)
      .filter((ref) => ref !== '');
    const connectionIds = await Promise.all(
      refs.map(async (ref) => (await deps.connectionAdmin.byIdOrEmail(ref)).id),
    );
    const { key, secret } = await keys.create({
      label: field(request.body, 'label'),
      connectionIds,
      teamIds: fieldValues(request.body, 'teams'),
    });
    request.log.info({ apiKeyId: key.id }, 'admin created an API key');
    return secretShownOncePage(reply, {
      title: 'API key created',
      label: 'API key',
      secret,
      explanation: html`<p>
        Programs send it as <code>Authorization: Bearer ${secret.slice(0, 8)}…</code>.
      </p>`,
      back: ADMIN_API,
    });
  });

  action(`${ADMIN_API}/keys/:id/revoke`, async (request, reply) => {
    await keys.revoke(request.params.id, deps.now());
    request.log.info({ apiKeyId: request.params.id }, 'admin revoked an API key');
    return seeOther(reply, `${ADMIN_API}?notice=key-revoked`);
  });

  action(`${ADMIN_API}/webhooks`, async (request, reply) => {
    const ownerRef = field(request.body, 'owner');
    if (ownerRef === '')
      throw new HttpError(400, 'Say whose events the endpoint gets: a connection or a team.');
    // A team by its name or id, else a connection by its e-mail address or id.
    const team = await teams.find(ownerRef).catch((thrown: unknown) => {
      if (thrown instanceof TeamNotFoundError) return undefined;
      throw thrown;
    });
    const owner = team
      ? { teamId: team.id }
      : { connectionId: (await deps.connectionAdmin.byIdOrEmail(ownerRef)).id };
    const { endpoint, secret } = await deps.webhooks.create({
      owner,
      url: field(request.body, 'url'),
      events: fieldValues(request.body, 'events'),
    });
    request.log.info({ webhookEndpointId: endpoint.id }, 'admin added a webhook endpoint');
    return secretShownOncePage(reply, {
      title: 'Webhook endpoint added',
      label: 'Signing secret',
      secret,
      explanation: html`<p>
        Deliveries to <code>${endpoint.url}</code> are signed with it per the Standard Webhooks specification
        (headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>);
        verify them with any Standard Webhooks library.
      </p>`,
      back: ADMIN_API,
    });
  });

  action(`${ADMIN_API}/webhooks/:id/delete`, async (request, reply) => {
    await deps.webhooks.delete(request.params.id);
    return seeOther(reply, `${ADMIN_API}?notice=endpoint-deleted`);
  });

  action(`${ADMIN_API}/webhooks/:id/enable`, async (request, reply) => {
    await deps.webhooks.enable(request.params.id);
    return seeOther(reply, `${ADMIN_API}?notice=endpoint-enabled`);
  });

  action(`${ADMIN_API}/webhooks/:id/test`, async (request, reply) => {
    const delivery = await deps.webhooks.sendTestEvent(request.params.id, deps.now());
    request.log.info(
      { webhookEndpointId: delivery.endpointId, webhookDeliveryId: delivery.id },
      'admin sent a webhook test event',
    );
    return seeOther(reply, testedLocation(delivery.endpointId));
  });
}

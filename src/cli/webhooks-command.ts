// `slotfeed webhooks list|create|delete|enable|deliveries|test`: webhook endpoints of connections and teams
// (store/webhooks.ts). An endpoint's signing secret is printed once, at creation; making one needs
// TOKEN_ENCRYPTION_KEY (secrets are kept sealed), listing does not. `test` queues a webhook.test for a worker to
// deliver (it signs, so this command needs no key), and with --wait reads the delivery's row until its first
// attempt: exit 0 on a 2xx, 1 otherwise.
import { Option, type Command } from 'commander';
import { loadConfig } from '../config.js';
import { Releasers } from '../lib/releasers.js';
import { formatTable, terminalWidth } from '../lib/text-table.js';
import { createLoggerFor } from '../log.js';
import { openCommandDatabase } from '../composition/command-stores.js';
import { WEBHOOK_EVENT_TYPES } from '../store/webhook-events.js';
import { attemptAnswer, firstAttemptOf, type FirstAttempt } from '../webhooks/first-attempt.js';
import { OUTPUT_FORMATS, uuidOf, wholeNumber, type OutputFormat } from './argument-parsers.js';
import type { Output } from './commands.js';

type Env = Record<string, string | undefined>;
type Stdout = Output & { isTTY: boolean; columns?: number };

export type WebhooksAction =
  | { kind: 'list'; format: OutputFormat }
  | {
      kind: 'create';
      connectionId?: string;
      team?: string;
      url: string;
      events: string[];
      format?: OutputFormat;
    }
  | { kind: 'delete' | 'enable' | 'deliveries'; endpointId: string }
  | { kind: 'test'; endpointId: string; wait: boolean; timeoutSeconds: number };

const minute = (date: Date | null) => (date ? date.toISOString().replace(/:\d\d\.\d{3}Z$/, 'Z') : '—');

/** How a test's first attempt went: said on stdout when it was delivered, else thrown (exit 1). */
function reportFirstAttempt(out: Output, attempt: FirstAttempt, endpointId: string, waitedSeconds: number) {
  const log = `see \`slotfeed webhooks deliveries ${endpointId}\``;
  switch (attempt.kind) {
    case 'gone':
      throw new Error('the test delivery is gone: its endpoint was deleted meanwhile');
    case 'waiting':
      throw new Error(
        `no attempt within ${waitedSeconds} s: is a worker (\`slotfeed worker\` or \`slotfeed start\`) running ` +
          `on this database? The test event stays queued; ${log}`,
      );
    case 'done': {
      const { delivery } = attempt;
      if (delivery.deliveredAt !== null) {
        out.write(`Delivered: ${attemptAnswer(delivery)} in ${delivery.lastLatencyMs ?? '?'} ms.\n`);
        return;
      }
      if (delivery.attempts === 0)
        throw new Error(`the test event was given up: ${delivery.lastError ?? ''}; ${log}`);
      const next = delivery.givenUpAt !== null ? 'not retried' : 'retried with backoff';
      throw new Error(`the test event was not delivered: ${attemptAnswer(delivery)}; ${next}, ${log}`);
    }
  }
}

export async function runWebhooks(env: Env, action: WebhooksAction, out: Stdout): Promise<void> {
  const config = loadConfig(
    env,
    action.kind === 'create' ? ['database', 'log', 'vault', 'webhooks'] : ['database', 'log'],
  );
  const logger = createLoggerFor(config.log);
  const releasers = new Releasers();
  try {
    const { teams, webhooks } = openCommandDatabase(config, releasers, logger);
    switch (action.kind) {
      case 'list': {
        const list = await webhooks.list();
        if (action.format === 'json') {
          out.write(JSON.stringify({ endpoints: list }, null, 2) + '\n');
          return;
        }
        const rows = list.map((e) => [
          e.id,
          e.connectionId ?? `team ${e.teamId}`,
          e.url,
          e.events.join(' '),
          e.disabledAt
            ? `disabled ${minute(e.disabledAt)}`
            : e.failingSince
              ? `failing since ${minute(e.failingSince)}`
              : 'active',
        ]);
        out.write(
          formatTable(
            ['endpoint', 'connection / team', 'url', 'events', 'state'],
            rows,
            'No webhook endpoints.',
            {
              width: terminalWidth(out),
              keepWhole: [0],
            },
          ),
        );
        return;
      }
      case 'create': {
        if ((action.connectionId === undefined) === (action.team === undefined)) {
          throw new Error('give exactly one of --connection and --team');
        }
        const owner =
          action.team !== undefined
            ? { teamId: (await teams.find(action.team)).id }
            : { connectionId: action.connectionId! };
        const { endpoint, secret } = await webhooks.create({ owner, url: action.url, events: action.events });
        if (action.format === 'json') {
          // For a script that hands the secret to its receiver: shown here once, as in the table format.
          out.write(JSON.stringify({ endpoint, secret }, null, 2) + '\n');
          return;
        }
        out.write(
          `Webhook endpoint ${endpoint.id} → ${endpoint.url} (${endpoint.events.join(', ')})\n` +
            `Signing secret — shown only now; keep it secret:\n  ${secret}\n`,
        );
        return;
      }
      case 'delete':
        await webhooks.delete(action.endpointId);
        out.write(`Webhook endpoint ${action.endpointId} deleted.\n`);
        return;
      case 'test': {
        const { url } = await webhooks.get(action.endpointId);
        const delivery = await webhooks.sendTestEvent(action.endpointId, new Date());
        out.write(`Test event queued for ${url}: delivery ${delivery.id}.\n`);
        if (!action.wait) {
          out.write(`How it went: \`slotfeed webhooks deliveries ${action.endpointId}\`.\n`);
          return;
        }
        const attempt = await firstAttemptOf(webhooks.delivery, delivery.id, {
          timeoutMs: action.timeoutSeconds * 1000,
        });
        reportFirstAttempt(out, attempt, action.endpointId, action.timeoutSeconds);
        return;
      }
      case 'enable':
        await webhooks.enable(action.endpointId);
        out.write(`Webhook endpoint ${action.endpointId} enabled again.\n`);
        return;
      case 'deliveries': {
        const rows = (await webhooks.deliveries(action.endpointId)).map((d) => [
          d.id,
          d.eventType,
          minute(d.createdAt),
          d.deliveredAt ? 'delivered' : d.givenUpAt ? 'given up' : d.attempts > 0 ? 'retrying' : 'queued',
          String(d.attempts),
          d.lastStatus === null ? '—' : String(d.lastStatus),
          d.lastLatencyMs === null ? '—' : `${d.lastLatencyMs} ms`,
        ]);
        out.write(
          formatTable(
            ['delivery', 'event', 'created', 'state', 'attempts', 'status', 'latency'],
            rows,
            'No deliveries.',
            {
              width: terminalWidth(out),
              keepWhole: [0],
            },
          ),
        );
        return;
      }
    }
  } finally {
    await releasers.releaseAll(logger);
  }
}

export function registerWebhooksCommand(program: Command, env: Env, stdout: Stdout): void {
  const webhooks = program
    .command('webhooks')
    .description(
      'Webhook endpoints of connections and teams: list, create, delete, enable, deliveries, test.',
    );
  webhooks
    .command('list')
    .description('List webhook endpoints and their state.')
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(async (o: { format: OutputFormat }) =>
      runWebhooks(env, { kind: 'list', format: o.format }, stdout),
    );
  webhooks
    .command('create')
    .description('Add an endpoint and print its signing secret (shown only once).')
    .addOption(new Option('--connection <id>', 'a connection’s events').argParser(uuidOf('connection')))
    .option('--team <team>', 'the events of a team’s members (id or name)')
    .requiredOption('--url <url>', 'where to POST them (http or https)')
    .option(
      '--event <type>',
      `one of ${WEBHOOK_EVENT_TYPES.join(', ')} (repeatable; default: all)`,
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addOption(new Option('--format <format>', 'output format').choices(OUTPUT_FORMATS).default('table'))
    .action(
      async (o: {
        connection?: string;
        team?: string;
        url: string;
        event?: string[];
        format: OutputFormat;
      }) =>
        runWebhooks(
          env,
          {
            kind: 'create',
            connectionId: o.connection,
            team: o.team,
            url: o.url,
            events: o.event ?? [],
            format: o.format,
          },
          stdout,
        ),
    );
  for (const [kind, description] of [
    ['delete', 'Delete an endpoint and its delivery log.'],
    ['enable', 'Enable an endpoint that was disabled after a day of failures.'],
    ['deliveries', 'The latest deliveries to an endpoint: state, attempts, status, latency.'],
  ] as const) {
    webhooks
      .command(kind)
      .description(description)
      .argument('<endpoint-id>', 'the endpoint', uuidOf('webhook endpoint'))
      .action(async (endpointId: string) => runWebhooks(env, { kind, endpointId }, stdout));
  }
  webhooks
    .command('test')
    .description(
      'Send an endpoint a webhook.test (signed, logged and retried like any delivery; a disabled endpoint gets ' +
        'one attempt) and print its delivery id.',
    )
    .argument('<endpoint-id>', 'the endpoint', uuidOf('webhook endpoint'))
    .option('--wait', 'wait for the first attempt: exit 0 when the receiver answered 2xx, 1 otherwise')
    .addOption(
      new Option('--timeout <seconds>', 'how long --wait waits').argParser(wholeNumber(1, 3600)).default(60),
    )
    .action(async (endpointId: string, o: { wait?: boolean; timeout: number }) =>
      runWebhooks(
        env,
        { kind: 'test', endpointId, wait: o.wait ?? false, timeoutSeconds: o.timeout },
        stdout,
      ),
    );
}

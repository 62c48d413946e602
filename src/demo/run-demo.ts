// `slotfeed demo`: the whole system on a machine that has Node only. Postgres and Redis are found or started
// (local-postgres.ts, local-redis.ts), the Calendbook simulator runs in-process, the daemon's three roles start
// through the composition root exactly as `slotfeed start` starts them, three simulated accounts connect
// through the real OAuth flow, and once their first syncs have landed the feed URLs are printed, with the
// command line that points the CLI at the demo (through .slotfeed/demo.env, cli-env-file.ts). On a fresh
// database the accounts connect weeks in the past, and a history is recorded up to the present through the real
// syncs (one clock for the simulator and slotfeed, demo-clock.ts; demo-history.ts), so that the reports have
// something to show. When Radicale or Xandikos is installed, one starts beside Postgres and the first account's
// free time is written into its calendar (local-caldav.ts). It then runs until SIGINT/SIGTERM and releases
// everything it started, newest first: web, workers, scheduler, clients, simulator, then the Redis, Postgres and
// CalDAV servers it started itself.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import type { Output } from '../lib/output.js';
import { untilShutdownSignal } from '../lib/shutdown-signal.js';
import { claimDataDir, describeStoppedLeftovers } from './data-dir-claim.js';
import { untilParentGone } from './parent-watch.js';
import { describeListener } from './process-table.js';
import { loadConfig } from '../config.js';
import { feedCalendarName } from '../feeds/describe-feed.js';
import { Releasers } from '../lib/releasers.js';
import { createLogger } from '../log.js';
import { DAEMON_SECTIONS } from '../composition/daemon-config.js';
import { composeSlotfeed, startRoles } from '../main.js';
import { startSimulator } from '../simulator/index.js';
import { enqueueSyncs } from '../sync/queues.js';
import { feedLinksFor } from '../web/feed-links.js';
import { cliEnvFileText, cliInvocation, fromCwd, removeCliEnvFile, writeCliEnvFile } from './cli-env-file.js';
import { connectDemoAccount, type ConnectedAccount } from './connect-demo-account.js';
import { createDemoClock } from './demo-clock.js';
import {
  DEMO_HISTORY,
  describeHistory,
  describeHistoryPlan,
  historyResumesAt,
  type HistoryPlan,
  planHistory,
  replayHistory,
  resumeHistoryPlan,
} from './demo-history.js';
import { readHistoryRecord, writeHistoryRecord, type HistoryRecord } from './history-record.js';
import { loadOrCreateDemoSecrets } from './demo-secrets.js';
import {
  DEMO_CALDAV_USER,
  describeLocalCalDav,
  resolveLocalCalDav,
  setUpDemoCalendar,
} from './local-caldav.js';
import { demoEnvironment, demoRedisPrefix, demoPaths, PROJECT_ROOT } from './demo-env.js';
import { DEMO_WORLD } from './demo-world.js';
import { describePostgres, describeRedis, formatDemoSummary } from './demo-summary.js';
import { waitForFirstSyncs } from './first-syncs.js';
import { chooseDemoWebPort, requestedWebPort } from './demo-port.js';
import { holdFreeLoopbackPort, holdLoopbackPort } from './free-port.js';
import { resolveLocalPostgres } from './local-postgres.js';
import { resolveLocalRedis } from './local-redis.js';
import { recordedRelocation } from './relocated-cluster.js';
import { switchableFetch } from './switchable-fetch.js';

type Env = Record<string, string | undefined>;

export interface DemoOptions {
  /** Simulated accounts to connect. Default 3. */
  accounts?: number;
  /** How long to wait for the first syncs before printing the feeds anyway. Default 120. */
  syncTimeoutSeconds?: number;
  /** Days of history recorded on a fresh database (demo-history.ts); 0 for none. Default 21. */
  historyDays?: number;
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** Whether a cluster exists for `postgresDir`: in it, or where it was moved to (relocated-cluster.ts). */
async function hasCluster(postgresDir: string): Promise<boolean> {
  const moved = await recordedRelocation(postgresDir);
  return exists(path.join(moved ?? postgresDir, 'PG_VERSION'));
}

function historyRecordOf(plan: HistoryPlan, roundsDone: number): HistoryRecord {
  return {
    startsAt: plan.startsAt.toISOString(),
    stepMs: plan.stepMs,
    syncsPerDay: plan.syncsPerDay,
    days: plan.days,
    roundsDone,
    finished: roundsDone >= plan.rounds + 1,
  };
}

export async function runDemo(
  env: Env,
  out: Output & { isTTY: boolean; columns?: number },
  options: DemoOptions = {},
): Promise<void> {
  // stdout is the demo's display; logs (warnings and errors unless LOG_LEVEL says otherwise) go to stderr.
  const { level } = loadConfig({ LOG_LEVEL: env.LOG_LEVEL || 'warn' }, ['log']).log;
  const logger = createLogger({ level, destination: pino.destination({ fd: 2, sync: true }) });
  const releasers = new Releasers();
  // A signal, or the parent that started the demo gone (parent-watch.ts).
  let signal: NodeJS.Signals | 'parent gone' | undefined;
  const shutdown = Promise.race([untilShutdownSignal(logger), untilParentGone()]).then(
    (received) => (signal = received),
  );
  const stopRequested = () => signal !== undefined;

  try {
    const paths = demoPaths(env);
    const usesEmbedded = !env.DATABASE_URL;
    const hadCluster = usesEmbedded && (await hasCluster(paths.postgresDir));
    const { secrets, created } = await loadOrCreateDemoSecrets(paths.secretsFile);
    if (created && hadCluster) {
      throw new Error(
        `${paths.postgresDir} holds a database from an earlier run, but ${paths.secretsFile} (its password and ` +
          `token key) is gone. Delete ${paths.dataDir} to start the demo afresh.`,
      );
    }
    out.write(`Starting the slotfeed demo (data in ${paths.dataDir})\n`);
    const claim = await claimDataDir(paths.dataDir);
    releasers.add('data folder', () => claim.release());
    const leftovers = describeStoppedLeftovers(claim.stoppedLeftovers);
    if (leftovers !== undefined) out.write(`${leftovers}\n`);

    // Started now and awaited once Postgres is up: a Python server's start-up then costs the demo no time.
    const caldavStarting = resolveLocalCalDav({
      pathEnv: env.PATH,
      dir: path.join(paths.dataDir, 'caldav'),
      username: DEMO_CALDAV_USER,
      password: secrets.caldavPassword,
      logger,
    });
    releasers.add('caldav server', async () => {
      const local = await caldavStarting;
      if (local.state === 'started') await local.server.stop();
    });

    // Redis first: it is quick to find, and when there is none the demo stops before initialising Postgres.
    const redis = await resolveLocalRedis({ env, logger });
    releasers.add('redis server', () => redis.stop());
    const redisPrefix = env.REDIS_PREFIX || demoRedisPrefix(paths.dataDir);
    out.write(`${describeRedis(redis, redisPrefix)}\n`);
    if (stopRequested()) return;

    const postgres = await resolveLocalPostgres({
      env,
      dataDir: paths.postgresDir,
      password: secrets.postgresPassword,
      migrationsDir: paths.migrationsDir,
      logger,
    });
    releasers.add('postgres server', () => postgres.stop());
    out.write(`${describePostgres(postgres)}\n`);
    const caldav = await caldavStarting;
    out.write(`${describeLocalCalDav(caldav)}\n`);
    if (stopRequested()) return;

    const {
      port: webPort,
      warning: portWarning,
      held,
    } = await chooseDemoWebPort({
      holdPort: holdFreeLoopbackPort,
      requested: requestedWebPort(env, (value) => loadConfig({ WEB_PORT: value }, ['web']).web.port),
      recordFile: paths.webPortFile,
      holderOf: describeListener,
    });
    // Held until the web role listens: the simulator below listens on port 0, and the kernel may hand it a port
    // just released. A port WEB_PORT named is held here if it is free; if it is taken, the web role's listen
    // says so.
    const webPortHold = held ?? (await holdLoopbackPort(webPort));
    releasers.add('web port placeholder', () => webPortHold?.release());
    if (portWarning !== undefined) out.write(`${portWarning}\n`);
    const publicBaseUrl = `http://127.0.0.1:${webPort}`;
    await claim.recordWebUrl(publicBaseUrl);
    // The simulator starts in the present, so its simulated world is the same whether or not a history follows.
    const clock = createDemoClock();
    // Its bookings, changes and grants are kept in the data directory, so a restart continues the same world.
    const simulatorHadState = await exists(paths.simulatorStateFile);
    const simulator = await startSimulator({
      stateFile: paths.simulatorStateFile,
      port: 0,
      users: DEMO_WORLD.users,
      seed: DEMO_WORLD.seed,
      now: clock.now,
      // The sign-in page marks the accounts the demo connects: signing in as one of them shows their feeds.
      signInNote: (_user, index) =>
        index < (options.accounts ?? DEMO_WORLD.accounts) ? 'connected by the demo' : undefined,
      redirectUris: [`${publicBaseUrl}/oauth/callback`],
      logger: logger.child({ role: 'simulator' }),
    });
    releasers.add('simulator', () => simulator.close());
    out.write(
      `Calendbook simulator: ${simulator.origin} (${simulator.users.length} users, control API /__sim/; ` +
        `${simulatorHadState ? 'its bookings and changes restored from' : 'its world kept in'} ` +
        `${fromCwd(paths.simulatorStateFile, process.cwd())})\n`,
    );

    const config = loadConfig(
      demoEnvironment({
        env,
        databaseUrl: postgres.url,
        redisUrl: redis.url,
        redisPrefix,
        logLevel: level,
        simulator,
        webPort,
        publicBaseUrl,
        secrets,
      }),
      DAEMON_SECTIONS,
    );
    const upstreamTransport = switchableFetch(globalThis.fetch);
    const slotfeed = composeSlotfeed(config, releasers, logger, clock, upstreamTransport.fetch);
    const { clients, stores } = slotfeed;
    const progress = stores.syncProgress;
    // A database that has never seen a connection gets a history; a re-run keeps the one it has, and finishes
    // it when an earlier run stopped half way (history-record.ts).
    const historyDays = options.historyDays ?? DEMO_HISTORY.days;
    const unfinished = await readHistoryRecord(paths.historyFile).then((r) => (r?.finished ? undefined : r));
    const plan =
      historyDays > 0 && (await progress.connectionCount()) === 0
        ? planHistory(clock.now(), historyDays, DEMO_HISTORY.syncsPerDay)
        : unfinished && (await progress.connectionCount()) > 0
          ? resumeHistoryPlan(unfinished, clock.now())
          : undefined;
    const record = (roundsDone: number): Promise<void> =>
      plan === undefined
        ? Promise.resolve()
        : writeHistoryRecord(paths.historyFile, historyRecordOf(plan, roundsDone));
    await record(plan?.roundsDone ?? 0);
    // Travelled before the roles start, so that no part of slotfeed sees its clock go backwards.
    if (plan) clock.travelTo(historyResumesAt(plan));
    await webPortHold?.release();
    await startRoles(['scheduler', 'worker', 'web'], config, slotfeed, releasers, clock);
    out.write(`slotfeed: web on ${publicBaseUrl}, sync worker and scheduler running\n`);
    if (config.webhooks.allowPrivateTargets) {
      out.write('Webhooks: receivers on this machine (127.0.0.1, localhost) are allowed, in the demo only\n');
    }
    out.write(`${describeHistoryPlan(plan, historyDays)}\n`);
    if (stopRequested()) return;

    // From here on the CLI can reach the demo; `npm run demo` built dist/, which is what a person runs.
    const cli = cliInvocation({
      dataDir: paths.dataDir,
      // The script this demo was started with (dist/cli.js of the checkout `npm run demo` ran in).
      cliScript: process.argv[1] ?? path.join(PROJECT_ROOT, 'dist', 'cli.js'),
      cwd: process.cwd(),
    });
    const cliEnvironment = {
      DATABASE_URL: config.database.url,
      REDIS_URL: config.redis.url,
      REDIS_PREFIX: config.redis.prefix,
      PUBLIC_BASE_URL: config.web.publicBaseUrl,
      TOKEN_ENCRYPTION_KEY: secrets.tokenEncryptionKey,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' as const,
      CALDAV_ALLOW_PRIVATE_TARGETS: 'true' as const,
      SLOTFEED_DEMO_PID: String(process.pid),
      // Not read by the CLI: for a person's curl to the simulator's control API (docs/simulator.md).
      SIMULATOR_URL: simulator.origin,
    };
    await writeCliEnvFile(paths.cliEnvFile, cliEnvFileText(cliEnvironment, `${cli} connections list`));
    releasers.add('CLI env file', () => removeCliEnvFile(paths.cliEnvFile));

    const accounts = simulator.users.slice(0, options.accounts ?? DEMO_WORLD.accounts);
    out.write(
      `Connecting ${accounts.length} accounts through /connect → Calendbook sign-in → /oauth/callback\n`,
    );
    let since = clock.now();
    // The history's syncs, the connect flow's first ones included, reach the simulator without a socket; the
    // present's go over HTTP again.
    if (plan) upstreamTransport.use(simulator.inProcessFetch);
    const connected: ConnectedAccount[] = [];
    for (const account of accounts) {
      connected.push(
        await connectDemoAccount({ webUrl: publicBaseUrl, progress, feeds: stores.feeds }, account),
      );
    }
    if (plan) {
      const started = performance.now();
      const history = await replayHistory(
        {
          clock,
          control: simulator.control,
          progress,
          syncQueue: clients.syncShards,
          maxAttempts: config.sync.maxAttempts,
          bands: config.sync.bands,
          out,
          stopRequested,
          seed: DEMO_WORLD.seed,
          recorded: record,
        },
        plan,
        connected.map((c) => ({ userId: c.account.id, connectionId: c.connectionId })),
      );
      clock.backToPresent();
      upstreamTransport.use(globalThis.fetch);
      out.write(`${describeHistory(plan, history, performance.now() - started)}\n`);
      if (stopRequested()) return;
      // The history's syncs were the connect flow's; the present needs one of its own.
      since = clock.now();
      await enqueueSyncs(
        clients.syncShards,
        connected.map((c) => c.connectionId),
        config.sync.maxAttempts,
      );
    }
    // The calendar is added while the first syncs run; its first push follows within seconds.
    const first = connected[0];
    const calendar =
      caldav.state === 'started' && first !== undefined
        ? setUpDemoCalendar({
            local: caldav,
            destinations: slotfeed.services.caldavDestinations,
            feeds: stores.feeds,
            account: { name: first.account.name, connectionId: first.connectionId },
            cli,
          })
        : undefined;
    const { rows, complete } = await waitForFirstSyncs({
      progress,
      targets: connected.map((c) => ({ connectionId: c.connectionId, label: c.account.name })),
      since,
      out,
      timeoutMs: (options.syncTimeoutSeconds ?? 120) * 1000,
      stopRequested,
    });
    if (stopRequested()) return;
    if (!complete) out.write('Not every first sync succeeded; the feeds below fill in once they do.\n');
    if (calendar !== undefined) out.write(`${await calendar}\n`);

    out.write(
      formatDemoSummary({
        webUrl: publicBaseUrl,
        adminToken: secrets.adminToken,
        cli,
        feeds: connected.map((c) => {
          const links = feedLinksFor(
            publicBaseUrl,
            c.feedToken,
            feedCalendarName({ displayName: c.account.name, email: c.account.email }),
          );
          return {
            name: c.account.name,
            email: c.account.email,
            https: links.https,
            webcal: links.webcal,
            sync: rows.find((r) => r.connectionId === c.connectionId),
            reconnected: c.reconnected,
          };
        }),
      }),
    );
    await shutdown;
  } finally {
    if (signal !== undefined) out.write('Stopping the demo…\n');
    const failures = await releasers.releaseAll(logger);
    if (signal !== undefined) {
      out.write(
        failures.length === 0 ? 'Stopped; nothing left running.\n' : 'Stopped, with errors (see above).\n',
      );
    }
  }
}

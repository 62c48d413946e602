// `/`: what slotfeed is, for the people whose free time it publishes and those who subscribe to it, with the
// two ways in (connect an account, sign in to one already connected). The administrator's pages live under
// /admin and are only linked from the footer of this page.
import type { FastifyInstance } from 'fastify';
import { ADMIN_HOME } from './admin/admin-pages.js';
import { html, sendPage } from './html.js';

export function registerLandingPage(app: FastifyInstance): void {
  app.get('/', async (_request, reply) =>
    sendPage(reply, 200, {
      title: 'Your free time as a calendar feed',
      body: html`<section class="hero">
          <h1>Your free time, as a calendar anyone can subscribe to</h1>
          <p class="lead">
            slotfeed reads the times you can be booked on Calendbook and publishes them as a calendar feed.
            Colleagues, clients and assistants subscribe to it in Google Calendar, Apple Calendar, Outlook or
            Thunderbird, and see when you are free, kept up to date by itself.
          </p>
          <div class="actions">
            <a class="button primary" id="connect" href="/connect">Connect your Calendbook account</a>
            <a class="button" id="sign-in" href="/signin">Sign in</a>
          </div>
        </section>
        <div class="grid">
          <section class="card">
            <h2>Connect once</h2>
            <p>
              Sign in with Calendbook and allow slotfeed to read your event types and availability. No new
              password: you sign in with Calendbook every time.
            </p>
          </section>
          <section class="card">
            <h2>Subscribe or share</h2>
            <p>
              Calendar apps subscribe to a private feed address; anyone else opens a share link: a page of
              your free week in their own time zone. Both show when you are free, never what you are doing,
              and you replace or revoke either at any time on your page.
            </p>
          </section>
          <section class="card">
            <h2>Stays current</h2>
            <p>
              slotfeed checks Calendbook on a schedule; when someone books you, the time disappears from the
              feed at the next check.
            </p>
          </section>
        </div>
        <p class="muted small">
          Running this installation? <a href="${ADMIN_HOME}">Administrator sign-in</a>
        </p>`,
    }),
  );
}

# slotfeed: multi-stage build on the current Node LTS. The build stage installs everything, generates the Prisma
# client and compiles TypeScript; the runtime stage carries production dependencies only and runs as a non-root user.
# Build: docker build -t slotfeed .    Run: docker run --env-file .env -p 3000:3000 slotfeed start --migrate

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
# postinstall runs `prisma generate` (needs prisma/ and prisma.config.ts, copied above).
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production WEB_HOST=0.0.0.0 WEB_PORT=3000
# Memory: a worker's RSS after a 1,000-connection round fell from ~500 MiB to under 300 MiB with these two
# (npm run bench; docs/performance.md). glibc's per-thread malloc arenas fragment under libuv's thread pool, and
# V8's default young generation (up to 3 × 32 MiB semi-spaces) lets the heap grow far past what is live.
ENV MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=4
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; no install scripts (the Prisma client was generated in the build stage).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY prisma ./prisma
# The pages' stylesheet and script (src/web/assets.ts serves them from here).
COPY public ./public
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.WEB_PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["start", "--migrate"]

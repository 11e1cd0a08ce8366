# One image for every role: `node dist/workers/<role>.js` (see docker-compose.yml).
# Build: TypeScript → dist/, with the Lua scripts next to the modules that run them (npm run build). Runtime: Node 20 on Debian with the system Chromium for the crawler
# (puppeteer never downloads a browser).

FROM node:20-bookworm-slim AS build
WORKDIR /app
ENV PUPPETEER_SKIP_DOWNLOAD=true
COPY package.json package-lock.json .puppeteerrc.cjs prisma.config.ts ./
COPY src/setup ./src/setup
COPY prisma ./prisma
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY workers ./workers
COPY dashboards ./dashboards
RUN node src/setup/prisma-generate.mjs --force && npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ca-certificates fonts-liberation dumb-init \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production \
    PUPPETEER_SKIP_DOWNLOAD=true \
    PUPPETEER_EXECUTABLE_PATH=/usr/bin/chromium \
    HOST=0.0.0.0 \
    PORT=3000 \
    LOG_PRETTY=false
COPY --from=build /app/package.json /app/.puppeteerrc.cjs ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma ./prisma
USER node
EXPOSE 3000
ENTRYPOINT ["dumb-init", "--"]
CMD ["node", "dist/workers/all.js"]

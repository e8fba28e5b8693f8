# Portcullis as a container (docs/deploying.md "Container"). Two stages: the build stage compiles
# dist/ (the service and the admin console) with the dev dependencies; the runtime stage holds
# the production install (`npm ci --omit=dev`), dist/ and bin/, and runs as the unprivileged
# `node` user. The entrypoint is exec form: node is the process the runtime signals (no shell in
# between to swallow SIGTERM), and SIGTERM drains connections (docs/operations.md "Shutdown").

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY packages ./packages
COPY src ./src
COPY rest-bridge ./rest-bridge
COPY console ./console
COPY bin ./bin
# `prepare` (scripts/build.mjs) compiles dist/: the service, its migrations, the admin console.
RUN npm ci --no-audit --no-fund

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATABASE_URL=sqlite:/data/portcullis.db
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build.mjs scripts/build-console.mjs scripts/build-client.mjs scripts/build-verify.mjs ./scripts/
# The lockfile names the light packages' workspaces: their manifests only (nothing of them is installed).
COPY packages/client/package.json ./packages/client/
COPY packages/verify/package.json ./packages/verify/
# `prepare` finds no src/ here and builds nothing; better-sqlite3 fetches its prebuilt binary.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/auth/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "--max-semi-space-size=2", "--heap-growing-percent=30", "bin/portcullis.cjs"]
CMD ["serve"]

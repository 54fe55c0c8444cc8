# pod-decorator: `pod-decorator serve` (admission webhooks + controllers) on Node 24 LTS.
# Build: docker build -t pod-decorator:0.1.0 .   (the chart's default image is pod-decorator:<appVersion>)

# Compile TypeScript with every dependency, then keep only the production ones.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/.cache

# The runtime: node and the compiled program, owned by root and only readable by the user
# it runs as, so nothing in the image can be changed by the process.
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# npm and corepack are not needed to run the program.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# Nothing is written at run time (certificates live in memory or come from a mounted
# Secret, logs go to stdout), so the root filesystem can be mounted read-only.
USER 65532:65532
# 9443: admission webhooks (and /healthz, /readyz) over HTTPS; 8081: /healthz and /readyz over
# HTTP from the health thread (the probes); 8080: /metrics over HTTP.
EXPOSE 9443 8081 8080
# --no-maglev: V8's mid-tier compiler held ~15 MiB more under admission load (its code and
# compilation memory) for no throughput the webhook benchmarks could measure (make bench;
# docs/operations.md, Sizing). NODE_OPTIONS cannot carry it, so the entrypoint does.
ENTRYPOINT ["node", "--no-maglev", "/app/dist/cli/main.js", "serve"]

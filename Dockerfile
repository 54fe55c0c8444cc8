# pod-decorator: `pod-decorator serve` (admission webhook + controllers) on Node 24 LTS.
FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./package.json
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# Nothing is written at run time (certificates live in memory), so the root
# filesystem can be mounted read-only.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]

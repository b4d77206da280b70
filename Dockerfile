FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
# The lock file lacks other platforms' optional packages, which `npm ci` refuses; `npm install` installs the locked versions.
RUN npm ci --ignore-scripts --no-audit --no-fund || npm install --ignore-scripts --no-audit --no-fund
COPY . .
RUN mkdir -p build && npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/build ./build
# The sanctions snapshot screened against at start (data/sanctions/SOURCE.md says where it comes from).
COPY --from=build /app/data ./data
COPY --from=build /app/bin ./bin
COPY --from=build /app/package.json ./
EXPOSE 4000 4001
USER node
CMD ["node", "bin/keel.js", "start"]

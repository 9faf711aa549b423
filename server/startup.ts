import { parseConfig, SETTINGS, type Config } from './config';

/**
 * startConfig is the configuration a server process starts with. An invalid
 * or unsafe one never heals by waiting, so the process stops with exit code 2
 * and the reason; both `npm start` and the bare Next.js server (node
 * server.js) go through here.
 */
export function startConfig(env: Record<string, string | undefined> = process.env): Config {
  try {
    return parseConfig(env);
  } catch (e) {
    console.error(`refwatch: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  }
}

/** warnAboutExposure logs, once at start, that the server is open beyond loopback without a token. */
export function warnAboutExposure(config: Config): void {
  if (!config.insecureAllowAnonymous) return;
  console.warn(
    `refwatch: WARNING: serving ${config.host} without a token (${SETTINGS.insecureAllowAnonymous.flag}): anyone who reaches this address reads everything refwatch shows. Keep a proxy that authenticates users in front.`,
  );
}

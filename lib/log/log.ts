import { formatTime, RefwatchError } from '../model';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** Fields of a log line: flat values, so that a JSON line stays greppable and a text line readable. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/**
 * Logger is where refwatch says what happened to its watches and leadership.
 * Each method takes a sentence a person reads and fields a machine filters on.
 * An implementation must not throw. Adapt pino, winston or a controller's own
 * logger with four one-line methods.
 */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const LEVELS: Record<LogLevel | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface LoggerOptions {
  /** Lines below this level are dropped. Default: REFWATCH_LOG_LEVEL, else info. */
  level?: LogLevel | 'silent';
  /** json: one JSON object per line; text: a line for a person. Default: text on a terminal, json otherwise. */
  format?: 'json' | 'text';
  /** Where lines go. Default: process.stderr. */
  write?: (line: string) => void;
  now?: () => number;
}

/** parseLogLevel reads REFWATCH_LOG_LEVEL (or another setting's value), naming the setting when it is wrong. */
export function parseLogLevel(
  value: string | undefined,
  setting = 'REFWATCH_LOG_LEVEL',
): LogLevel | 'silent' | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim().toLowerCase();
  if (v in LEVELS) return v as LogLevel | 'silent';
  throw new RefwatchError(
    'InvalidLogLevel',
    `${setting}=${value} is not a log level: use debug, info, warn, error or silent`,
    { field: setting, example: `${setting}=info` },
  );
}

/** formatJsonLine renders one line as JSON: time, level and msg first, then the fields. */
export function formatJsonLine(at: number, level: LogLevel, msg: string, fields: LogFields = {}): string {
  return JSON.stringify({ time: formatTime(at), level, msg, ...definedOnly(fields) });
}

/** formatTextLine renders one line for a terminal: `time LEVEL msg key=value ...`, quoting values with spaces. */
export function formatTextLine(at: number, level: LogLevel, msg: string, fields: LogFields = {}): string {
  const kv = Object.entries(definedOnly(fields)).map(
    ([k, v]) => `${k}=${typeof v === 'string' && /[\s"=]/.test(v) ? JSON.stringify(v) : String(v)}`,
  );
  return [formatTime(at), level.toUpperCase().padEnd(5), msg, ...kv].join(' ');
}

/**
 * createLogger writes lines at or above a level, as JSON lines or text. It is
 * a dozen lines on purpose: a library in someone else's process should not
 * bring a logging framework's weight, worker threads or transports.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const min = LEVELS[opts.level ?? parseLogLevel(process.env.REFWATCH_LOG_LEVEL) ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const format = opts.format ?? (opts.write === undefined && process.stderr.isTTY ? 'text' : 'json');
  const render = format === 'json' ? formatJsonLine : formatTextLine;
  const now = opts.now ?? Date.now;
  const at = (level: LogLevel) => (msg: string, fields?: LogFields) => {
    if (LEVELS[level] < min) return;
    try {
      write(render(now(), level, msg, fields));
    } catch {
      // A closed stderr must not take a controller down.
    }
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let shared: Logger | undefined;

/** defaultLogger is the process's logger for components given none: created on first use, so REFWATCH_LOG_LEVEL is read then. */
export function defaultLogger(): Logger {
  return (shared ??= createLogger());
}

function definedOnly(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = v;
  return out;
}

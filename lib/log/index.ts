export {
  createLogger,
  defaultLogger,
  formatJsonLine,
  formatTextLine,
  parseLogLevel,
  type LogFields,
  type LogLevel,
  type Logger,
  type LoggerOptions,
} from './log';

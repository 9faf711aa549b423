import type http from 'node:http';
import { finished } from 'node:stream';

/** ndjsonLines splits a response into its non-empty lines. */
export async function* ndjsonLines(res: http.IncomingMessage, wrap: (e: unknown) => Error): AsyncGenerator<string> {
  res.setEncoding('utf8');
  let rest = '';
  try {
    for await (const chunk of res) {
      const text = rest + (chunk as string);
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== '') yield line;
      }
      rest = text.slice(start);
    }
  } catch (e) {
    throw wrap(e);
  } finally {
    if (!res.complete) res.destroy();
  }
  if (rest.trim() !== '') yield rest;
}

/**
 * eachNdjsonLine hands each non-empty line of a response to onLine as its
 * chunk arrives, the lines ndjsonLines yields, in a call each rather than
 * two promises each. It resolves when the server ends the response, and
 * rejects with what wrap makes of a reset or an abort, or with what onLine
 * threw: then no further line is handed over and the response is destroyed.
 */
export function eachNdjsonLine(
  res: http.IncomingMessage,
  onLine: (line: string) => void,
  wrap: (e: unknown) => Error,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let rest = '';
    let done = false;
    const fail = (e: unknown) => {
      if (done) return;
      done = true;
      res.off('data', onData);
      if (!res.complete) res.destroy();
      reject(e);
    };
    const hand = (line: string): boolean => {
      if (line.trim() === '') return true;
      try {
        onLine(line);
        return true;
      } catch (e) {
        fail(e);
        return false;
      }
    };
    const onData = (chunk: string) => {
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (!hand(line)) return;
      }
      rest = text.slice(start);
    };
    res.setEncoding('utf8');
    res.on('data', onData);
    finished(res, (err) => {
      if (done) return;
      if (err) return fail(wrap(err));
      if (!hand(rest)) return;
      done = true;
      resolve();
    });
  });
}

import type http from 'node:http';

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

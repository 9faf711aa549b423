/// <reference lib="webworker" />
// The layered layout runs here, off the page's thread: ELK takes hundreds of milliseconds even on small graphs.
import type { ELK } from 'elkjs/lib/elk-api';
import { layoutLayered, type ElkLayouter, type LayeredRequest, type LayeredResponse } from './layered';

const scope = self as unknown as DedicatedWorkerGlobalScope;

async function answer(ev: MessageEvent<LayeredRequest>): Promise<void> {
  const req = ev.data;
  let res: LayeredResponse;
  try {
    const { positions, engine } = await layoutLayered(req, elk);
    res = { id: req.id, positions: [...positions], engine };
  } catch (e) {
    res = { id: req.id, error: e instanceof Error ? e.message : String(e) };
  }
  scope.postMessage(res);
}

// ELK (1.5 MB) is loaded on the first graph small enough for it: a big graph is laid out without waiting for it.
let loaded: Promise<ELK> | undefined;
const elk: ElkLayouter = {
  async layout(graph) {
    loaded ??= import('elkjs/lib/elk.bundled.js').then(({ default: ELKConstructor }) => {
      const elk = new ELKConstructor();
      // ELK's in-thread worker, made by that constructor, claims self.onmessage for its own protocol: take it back.
      scope.onmessage = answer;
      return elk;
    });
    return (await loaded).layout(graph);
  },
};

scope.onmessage = answer;

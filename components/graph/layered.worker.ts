/// <reference lib="webworker" />
// The layered layout runs here, off the page's thread: ELK takes hundreds of milliseconds even on small graphs.
import ELK from 'elkjs/lib/elk.bundled.js';
import { layoutLayered, type LayeredRequest, type LayeredResponse } from './layered';

const elk = new ELK();
const scope = self as unknown as DedicatedWorkerGlobalScope;

// Assigned after the imports ran: elk.bundled, loaded in a worker, claims self.onmessage for its own protocol; this one replaces it.
scope.onmessage = async (ev: MessageEvent<LayeredRequest>) => {
  const req = ev.data;
  let res: LayeredResponse;
  try {
    const { positions, engine } = await layoutLayered(req, elk);
    res = { id: req.id, positions: [...positions], engine };
  } catch (e) {
    res = { id: req.id, error: e instanceof Error ? e.message : String(e) };
  }
  scope.postMessage(res);
};

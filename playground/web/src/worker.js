// The interpreter's worker: runs the compiler's `run` request off the main
// thread, so that the page stays responsive and a run that takes too long
// can be stopped (the page terminates this worker).
import { Compiler } from './wasm.js';

let compiler = null;

self.onmessage = async (event) => {
  const { id, module, request } = event.data;
  try {
    if (module) {
      compiler = await Compiler.create(module);
      self.postMessage({ id, ready: true });
      return;
    }
    const t0 = performance.now();
    const { json, blob } = compiler.call(request);
    const ms = performance.now() - t0;
    self.postMessage({ id, json, blob, ms }, [blob]);
  } catch (err) {
    compiler = null;
    self.postMessage({ id, error: String(err.message || err) });
  }
};

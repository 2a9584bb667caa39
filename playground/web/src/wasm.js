// The glue between the page and the compiler's wasm exports
// (playground/src/wasm.rs): a JSON request in, a JSON answer and a binary
// blob out (playground/src/lib.rs, Response::encode). No wasm-bindgen: the
// module imports nothing, so it instantiates with an empty import object.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class Compiler {
  constructor(instance) {
    this.exports = instance.exports;
  }

  static async create(module) {
    return new Compiler(await WebAssembly.instantiate(module, {}));
  }

  // Answers one request: { json, blob } where blob is an ArrayBuffer that
  // the answer's offset/bytes fields point into. A trap (a panic, which the
  // compiler promises never to raise) throws an Error carrying its message;
  // the instance must not be used after that.
  call(request) {
    const e = this.exports;
    const bytes = encoder.encode(JSON.stringify(request));
    const ptr = e.phobos_alloc(bytes.length);
    new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
    let at;
    try {
      at = e.phobos_handle(ptr, bytes.length);
    } catch (err) {
      const p = e.phobos_panic_message();
      const n = e.phobos_panic_len();
      const why = n > 0 ? decoder.decode(new Uint8Array(e.memory.buffer, p, n)) : String(err);
      throw new Error(`internal compiler error: ${why}`);
    }
    const len = e.phobos_response_len();
    const view = new Uint8Array(e.memory.buffer, at, len);
    const jsonLen = new DataView(e.memory.buffer, at, 4).getUint32(0, true);
    const json = JSON.parse(decoder.decode(view.subarray(4, 4 + jsonLen)));
    const blobAt = (4 + jsonLen + 3) & ~3;
    const blob = view.slice(blobAt).buffer;
    return { json, blob };
  }
}

export async function loadModule(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: ${response.status} ${response.statusText}`);
  return WebAssembly.compileStreaming
    ? WebAssembly.compileStreaming(response)
    : WebAssembly.compile(await response.arrayBuffer());
}

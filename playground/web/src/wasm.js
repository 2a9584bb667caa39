// The glue between the page and the compiler's wasm exports
// (playground/src/wasm.rs): a JSON request and a binary blob in, a JSON
// answer and a binary blob out (playground/src/lib.rs, Response::encode). No wasm-bindgen: the
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

  // Answers one request, with `data` (a typed array of 32-bit words, a
  // figure's) as its blob: { json, blob } where blob is an ArrayBuffer that
  // the answer's offset/bytes fields point into. The request goes in as the
  // answer comes out: the JSON's length, the JSON, padding to 4 bytes, the
  // blob. A trap (a panic, which the compiler promises never to raise)
  // throws an Error carrying its message; the instance must not be used
  // after that.
  call(request, data = null) {
    const e = this.exports;
    const text = encoder.encode(JSON.stringify(request));
    const blobAt = (4 + text.length + 3) & ~3;
    const extra = data ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(0);
    const total = blobAt + extra.length;
    const ptr = e.phobos_alloc(total);
    const into = new Uint8Array(e.memory.buffer, ptr, total);
    new DataView(e.memory.buffer, ptr, 4).setUint32(0, text.length, true);
    into.set(text, 4);
    into.fill(32, 4 + text.length, blobAt);
    into.set(extra, blobAt);
    let at;
    try {
      at = e.phobos_handle(ptr, total);
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
    const outAt = (4 + jsonLen + 3) & ~3;
    const blob = view.slice(outAt).buffer;
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

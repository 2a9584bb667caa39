// The tile figure on the page. The drawing is the compiler's, written once
// in Rust (compiler/core/src/figure, the `figure` request), which Python's
// `phobos.figure` draws with too: the tile and its legend as SVG text, and
// the caption. Here that text is parsed as XML (never as HTML; the compiler
// escapes every name in it) and put in place; the page's CSS themes it
// through the classes its shapes carry (style.css).

// The figure of an output (`{ name, shape, elem, words }`), asked of the
// compiler once and kept on the output. `call` is the page's compiler call.
export function figureOf(call, output) {
  if (!output.figure) {
    output.figure = call({ op: 'figure', name: output.name, shape: output.shape, elem: output.elem }, output.words).json;
  }
  return output.figure;
}

function parseSvg(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (root.nodeName !== 'svg') throw new Error(`the figure is not SVG: ${root.textContent}`);
  return document.importNode(root, true);
}

// Puts a figure answer's tile into `host` and its legend into `legend`.
export function draw(host, legend, figure) {
  host.replaceChildren();
  legend.replaceChildren();
  if (!figure.ok) {
    host.textContent = `no figure: ${figure.error}`;
    return;
  }
  host.appendChild(parseSvg(figure.svg));
  legend.appendChild(parseSvg(figure.legend));
}

// The values of an output, as numbers, from its 32-bit words: for the list
// of differing elements under the run, which names a few values in text.
export function values(output, words) {
  const buf = words.buffer.slice(words.byteOffset, words.byteOffset + words.byteLength);
  switch (output.elem) {
    case 'f32':
      return Float32Array.from(new Float32Array(buf));
    case 'i32':
      return Float64Array.from(new Int32Array(buf));
    case 'f64':
      return new Float64Array(buf);
    case 'i64':
      return Float64Array.from(new BigInt64Array(buf), Number);
    case 'u64':
      return Float64Array.from(new BigUint64Array(buf), Number);
    default:
      return Float64Array.from(new Uint32Array(buf));
  }
}

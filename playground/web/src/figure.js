// The tile figure: one output tensor drawn as a tile of cells, in SVG (crisp
// at any zoom), shaded as the random-numbers page shades it: `uniform` by its
// value in [0, 1), `randn` from -3 to 3, `dropout` filled where kept and empty
// where dropped. Any other output is a heat map over its own range with a
// value scale; one of more than MAX_SVG_CELLS cells is drawn on a canvas,
// one pixel a cell, scaled without smoothing.

const SVG = 'http://www.w3.org/2000/svg';
const MAX_SVG_CELLS = 4096;

// The values of an output, as numbers, from its 32-bit words.
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

// How an output is shaded: by its name, as the seed's figure does.
export function kindOf(name) {
  return ['uniform', 'randn', 'dropout'].includes(name) ? name : 'heat';
}

// Rows and columns of the tile: the last axis across, the others down.
function grid(shape) {
  if (shape.length === 0) return [1, 1];
  const cols = shape[shape.length - 1];
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  return [rows, cols];
}

function fmt(x, digits = 3) {
  if (!Number.isFinite(x)) return String(x);
  return x.toFixed(digits);
}

// The caption under the figure, from the values themselves.
export function caption(name, vals) {
  const n = vals.length;
  if (n === 0) return `${name}: no elements.`;
  let sum = 0;
  for (const v of vals) sum += v;
  const mean = sum / n;
  const kind = kindOf(name);
  if (kind === 'uniform') {
    const grid23 = vals.every((v) => v >= 0 && v < 1 && Number.isInteger(v * 8388608));
    return `uniform: ${n} counters, mean ${fmt(mean)}${grid23 ? '; each a multiple of 2^-23 in [0, 1).' : '.'}`;
  }
  if (kind === 'randn') {
    let sq = 0;
    let inside = 0;
    for (const v of vals) {
      sq += (v - mean) * (v - mean);
      if (v >= -3 && v <= 3) inside++;
    }
    return `randn: ${n} counters, mean ${fmt(mean)}, standard deviation ${fmt(Math.sqrt(sq / n))}; ${inside} of ${n} in [-3, 3].`;
  }
  if (kind === 'dropout') {
    const kept = vals.filter((v) => v !== 0).length;
    const distinct = [...new Set(vals.filter((v) => v !== 0))];
    const each = distinct.length === 1 ? `; every kept value is ${fmt(distinct[0], 1)}` : '';
    return `dropout: ${n} counters, ${kept} kept (${fmt((100 * kept) / n, 1)}%)${each}.`;
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of vals) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return `${name}: ${n} values, mean ${fmt(mean)}, from ${fmt(lo)} to ${fmt(hi)}.`;
}

// A perceptual ramp (viridis, five stops) for heat maps.
const RAMP = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

function ramp(t) {
  if (!Number.isFinite(t)) return 'rgb(255,0,255)';
  const x = Math.min(Math.max(t, 0), 1) * (RAMP.length - 1);
  const i = Math.min(Math.floor(x), RAMP.length - 2);
  const f = x - i;
  const c = RAMP[i].map((a, k) => Math.round(a + f * (RAMP[i + 1][k] - a)));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

function el(tag, attrs = {}, parent = null) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

// Draws `vals` (of an output of `shape` named `name`) into `host`, and the
// legend into `legend`.
export function draw(host, legend, name, shape, vals) {
  host.replaceChildren();
  legend.replaceChildren();
  const [rows, cols] = grid(shape);
  const kind = kindOf(name);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of vals) {
    if (Number.isFinite(v)) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (lo === Infinity) [lo, hi] = [0, 0];
  const scale = (v) => (hi > lo ? (v - lo) / (hi - lo) : 0.5);
  if (kind === 'heat' && rows * cols > MAX_SVG_CELLS) {
    const canvas = document.createElement('canvas');
    canvas.width = cols;
    canvas.height = rows;
    canvas.className = 'heat-canvas';
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `${name}: heat map of ${rows} by ${cols}`);
    const ctx = canvas.getContext('2d');
    const img = ctx.createImageData(cols, rows);
    for (let i = 0; i < rows * cols; i++) {
      const m = /rgb\((\d+),(\d+),(\d+)\)/.exec(ramp(scale(vals[i])));
      img.data.set([+m[1], +m[2], +m[3], 255], 4 * i);
    }
    ctx.putImageData(img, 0, 0);
    host.appendChild(canvas);
  } else {
    const cell = 14;
    const gap = 2;
    const svg = el('svg', {
      viewBox: `0 0 ${cols * (cell + gap) - gap} ${rows * (cell + gap) - gap}`,
      class: `tile tile-${kind}`,
      role: 'img',
      'aria-label': `${name}: a tile of ${rows} rows of ${cols}`,
      'data-rows': rows,
      'data-cols': cols,
    });
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const v = vals[r * cols + c];
        const attrs = { x: c * (cell + gap), y: r * (cell + gap), width: cell, height: cell, rx: 2 };
        if (kind === 'uniform') {
          attrs.class = 'cell';
          attrs['fill-opacity'] = fmt(Math.min(Math.max(v, 0), 1), 3);
        } else if (kind === 'randn') {
          attrs.class = v < 0 ? 'cell neg' : 'cell pos';
          attrs['fill-opacity'] = fmt(Math.min(Math.abs(v) / 3, 1), 3);
        } else if (kind === 'dropout') {
          attrs.class = v !== 0 ? 'cell kept' : 'cell dropped';
          attrs.x += 0.5;
          attrs.y += 0.5;
          attrs.width -= 1;
          attrs.height -= 1;
        } else {
          attrs.fill = ramp(scale(v));
        }
        const rect = el('rect', attrs, svg);
        el('title', {}, rect).textContent = `[${r}, ${c}] = ${v}`;
      }
    }
    host.appendChild(svg);
  }
  legend.appendChild(legendFor(kind, lo, hi));
}

function legendFor(kind, lo, hi) {
  const wrap = document.createElement('div');
  wrap.className = 'legend-scale';
  const swatch = (cls, label) => {
    const s = document.createElement('span');
    s.className = 'swatch-item';
    const svg = el('svg', { viewBox: '0 0 14 14', class: `tile tile-${kind} swatch` });
    el('rect', { x: 0.5, y: 0.5, width: 13, height: 13, rx: 2, class: `cell ${cls}` }, svg);
    s.append(svg, document.createTextNode(label));
    return s;
  };
  const bar = (cls, left, mid, right) => {
    const b = document.createElement('span');
    b.className = `scale-bar ${cls}`;
    const labels = document.createElement('span');
    labels.className = 'scale-labels';
    for (const t of [left, mid, right]) {
      const l = document.createElement('span');
      l.textContent = t;
      labels.appendChild(l);
    }
    const box = document.createElement('span');
    box.className = 'scale';
    box.append(b, labels);
    return box;
  };
  if (kind === 'uniform') wrap.append(bar('bar-uniform', '0', '0.5', '1'));
  else if (kind === 'randn') wrap.append(bar('bar-randn', '-3', '0', '3'));
  else if (kind === 'dropout') wrap.append(swatch('kept', 'kept'), swatch('dropped', 'dropped'));
  else wrap.append(bar('bar-heat', fmt(lo), fmt((lo + hi) / 2), fmt(hi)));
  return wrap;
}

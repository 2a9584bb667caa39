// The playground page: a CodeMirror editor whose source the compiler (wasm,
// on this thread) checks as you type, with diagnostics inline; the WGSL of
// the selected configuration beside it; and Run (Ctrl/Cmd+Enter), which runs
// the kernel on WebGPU with that WGSL when the browser has it and on the
// wasm interpreter (in a worker) always, draws the figure, and says whether
// the two agree bit for bit. Nothing here builds HTML from text: every
// string from the source or the URL goes in through textContent, and the
// figure's SVG, which the compiler writes with every name escaped, is
// parsed as XML (figure.js).
import { EditorState } from '@codemirror/state';
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  HighlightStyle, syntaxHighlighting, bracketMatching, indentOnInput,
} from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { searchKeymap } from '@codemirror/search';
import { phobos } from './lang.js';
import { Compiler, loadModule } from './wasm.js';
import { openGpu, runPlan, abandonGpu, planLimits } from './gpu.js';
import { values, draw, figureOf } from './figure.js';
import randomTile from '../../examples/random_tile.ph';
import tandemNoise from '../../examples/tandem_noise.ph';
import dropoutRows from '../../../examples/dropout_rows.ph';
import softmaxDropout from '../../../examples/softmax_dropout.ph';
import layernormDropout from '../../../examples/layernorm_dropout.ph';
import biasGeluDropout from '../../../examples/bias_gelu_dropout.ph';
import dropoutBackward from '../../../examples/dropout_backward.ph';

// The seed's figure first (the default), then the repository's examples:
// the seed's dropout kernel, a Tandem draw, and the fused kernels.
const EXAMPLES = [
  { id: 'random_tile', title: 'random tile (the figure)', source: randomTile },
  { id: 'dropout_rows', title: 'dropout_rows', source: dropoutRows },
  { id: 'tandem_noise', title: 'Tandem noise', source: tandemNoise },
  { id: 'softmax_dropout', title: 'softmax + dropout (fused)', source: softmaxDropout },
  { id: 'layernorm_dropout', title: 'layer norm + dropout (fused)', source: layernormDropout },
  { id: 'bias_gelu_dropout', title: 'bias + GELU + dropout (fused)', source: biasGeluDropout },
  { id: 'dropout_backward', title: 'dropout backward', source: dropoutBackward },
];
const SEEDS = [1, 2, 3];
// The interpreter's run is stopped after this long (the compiler also
// refuses launches over its work bound before they start).
const RUN_TIMEOUT_MS = 20000;
// WebGPU is given this long to create the pipeline and run; past it the
// page stops using WebGPU (gpu.js, abandonGpu) and shows the interpreter's
// result.
const GPU_TIMEOUT_MS = 20000;
// The largest source a permalink may carry, in characters of the fragment.
const MAX_FRAGMENT = 256 * 1024;
const NARROW = window.matchMedia('(max-width: 640px)');

const $ = (id) => document.getElementById(id);

const state = {
  compiler: null,
  module: null,
  worker: null,
  workerReady: null,
  nextId: 1,
  pending: new Map(),
  check: null, // the last check answer
  kernel: null, // the selected kernel's description
  config: {},
  dimsEdited: new Set(),
  seed: 1,
  last: null, // the last good run: { outputs: [{ name, shape, elem, words, figure }], ... }
  shown: null, // the output the figure shows
  view: null,
  running: false,
};

function setStatus(text, kind = 'info') {
  const s = $('status');
  s.textContent = text;
  s.dataset.kind = kind;
}

// ---------------------------------------------------------------- theme

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $('theme').textContent = theme === 'dark' ? 'Light' : 'Dark';
  $('theme').setAttribute('aria-pressed', String(theme === 'dark'));
}

function initTheme() {
  let saved = null;
  try {
    saved = localStorage.getItem('phobos-theme');
  } catch {
    saved = null;
  }
  const dark = window.matchMedia('(prefers-color-scheme: dark)').matches;
  applyTheme(saved === 'dark' || saved === 'light' ? saved : dark ? 'dark' : 'light');
  $('theme').addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    applyTheme(next);
    try {
      localStorage.setItem('phobos-theme', next);
    } catch {
      // Storage may be off; the toggle still works for this page.
    }
  });
}

// ---------------------------------------------------------------- permalinks

function encodeSource(text) {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function decodeSource(b64) {
  const std = b64.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(std + '='.repeat((4 - (std.length % 4)) % 4));
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

// The source and seed a permalink carries, or an error message; null when
// the URL has no fragment.
function readFragment() {
  const hash = window.location.hash.slice(1);
  if (!hash) return null;
  if (hash.length > MAX_FRAGMENT) {
    return { error: `its source is longer than ${MAX_FRAGMENT} characters; the default example is shown instead` };
  }
  const params = new URLSearchParams(hash);
  const code = params.get('code');
  const example = params.get('example');
  const seed = Number(params.get('seed'));
  const out = { seed: SEEDS.includes(seed) ? seed : 1 };
  if (example && EXAMPLES.some((e) => e.id === example)) {
    out.source = EXAMPLES.find((e) => e.id === example).source;
    out.example = example;
    return out;
  }
  if (code === null) return { error: 'it has no source (#code=...); the default example is shown instead' };
  try {
    out.source = decodeSource(code);
  } catch {
    return { error: 'its source is not valid base64url UTF-8; the default example is shown instead' };
  }
  return out;
}

function permalink() {
  const source = state.view.state.doc.toString();
  return `#code=${encodeSource(source)}&seed=${state.seed}`;
}

function syncFragment() {
  window.history.replaceState(null, '', permalink());
}

// ---------------------------------------------------------------- worker

function startWorker() {
  if (state.worker) state.worker.terminate();
  for (const { reject } of state.pending.values()) reject(new Error('the interpreter was restarted'));
  state.pending.clear();
  const worker = new Worker('worker.js', { type: 'module' });
  state.worker = worker;
  worker.onmessage = (event) => {
    const p = state.pending.get(event.data.id);
    if (!p) return;
    state.pending.delete(event.data.id);
    if (event.data.error) p.reject(new Error(event.data.error));
    else p.resolve(event.data);
  };
  worker.onerror = (event) => {
    for (const { reject } of state.pending.values()) reject(new Error(event.message || 'the interpreter worker failed'));
    state.pending.clear();
  };
  state.workerReady = post({ module: state.module });
}

function post(message) {
  const id = state.nextId++;
  return new Promise((resolve, reject) => {
    state.pending.set(id, { resolve, reject });
    state.worker.postMessage({ id, ...message });
  });
}

async function interpret(request) {
  await state.workerReady;
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      startWorker();
      reject(new Error(`the interpreter was stopped after ${RUN_TIMEOUT_MS / 1000} s: the run did not finish`));
    }, RUN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([post({ request }), timeout]);
  } catch (err) {
    if (!String(err.message).includes('stopped after')) startWorker();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------- compiler

function call(request, data = null) {
  try {
    return state.compiler.call(request, data);
  } catch (err) {
    // A trap leaves the instance unusable: start a fresh one.
    Compiler.create(state.module).then((c) => {
      state.compiler = c;
    });
    return { json: { ok: false, error: err.message }, blob: new ArrayBuffer(0) };
  }
}

// `// dims: M=64 N=32` lines give a source's default extents.
function dimsDefaults(source) {
  const out = {};
  for (const m of source.matchAll(/^\s*\/\/\s*dims:(.*)$/gm)) {
    for (const pair of m[1].split(/[\s,]+/)) {
      const [k, v] = pair.split('=');
      if (k && /^\d+$/.test(v || '')) out[k] = Number(v);
    }
  }
  return out;
}

function figureDims(dims) {
  if (!(dims.includes('ROWS') && dims.includes('COLS'))) return {};
  return NARROW.matches ? { ROWS: 12, COLS: 16 } : { ROWS: 8, COLS: 32 };
}

const lintSource = (view) => {
  const source = view.state.doc.toString();
  const { json } = call({ op: 'check', source });
  onChecked(source, json);
  const len = view.state.doc.length;
  const out = [];
  for (const d of json.diagnostics || []) {
    const primary = (d.labels || []).find((l) => l.user);
    const from = primary ? Math.min(primary.from, len) : 0;
    const to = primary ? Math.min(Math.max(primary.to, from), len) : Math.min(len, 1);
    const extra = [primary && primary.message, d.help && `help: ${d.help}`].filter((x) => x);
    out.push({
      from,
      to,
      severity: d.severity === 'warning' ? 'warning' : 'error',
      source: d.code,
      message: [d.message, ...extra].join('\n'),
    });
  }
  if (!json.ok && json.error && out.length === 0) {
    out.push({ from: 0, to: Math.min(len, 1), severity: 'error', message: json.error });
  }
  return out;
};

function onChecked(source, json) {
  renderDiagnostics(json);
  syncFragment();
  // The menu names an example only while the editor holds it unchanged.
  const menu = $('examples');
  const shown = EXAMPLES.find((e) => e.id === menu.value);
  if (shown && shown.source !== source) menu.selectedIndex = -1;
  if (!json.ok) {
    // Keep the last good kernel's launch form and seeds while the source
    // is broken; the figure keeps the last good run.
    setStatus('The source has errors: see the diagnostics. The figure shows the last good run.', 'error');
    return;
  }
  state.check = json;
  const kernels = json.kernels || [];
  const sel = $('kernel');
  const previous = sel.value;
  sel.replaceChildren(...kernels.map((k) => new Option(k.name, k.name)));
  if (kernels.some((k) => k.name === previous)) sel.value = previous;
  sel.disabled = kernels.length < 2;
  state.kernel = kernels.find((k) => k.name === sel.value) || null;
  renderLaunchForm(source);
  updateWgsl(source);
  if (!state.running && $('status').dataset.kind === 'error') setStatus('', 'info');
}

function renderDiagnostics(json) {
  const list = $('diagnostics');
  list.replaceChildren();
  const diags = json.diagnostics || [];
  $('diag-count').textContent = diags.length === 0 ? 'no diagnostics' : `${diags.length} diagnostic${diags.length > 1 ? 's' : ''}`;
  for (const d of diags) {
    const li = document.createElement('li');
    li.className = `diag diag-${d.severity}`;
    const pre = document.createElement('pre');
    pre.textContent = d.rendered;
    li.appendChild(pre);
    const primary = (d.labels || []).find((l) => l.user);
    if (primary) {
      li.tabIndex = 0;
      li.title = 'Go to the place';
      const go = () => {
        state.view.dispatch({ selection: { anchor: primary.from, head: primary.to }, scrollIntoView: true });
        state.view.focus();
      };
      li.addEventListener('click', go);
      li.addEventListener('keydown', (e) => e.key === 'Enter' && go());
    }
    list.appendChild(li);
  }
}

function renderLaunchForm(source) {
  const form = $('launch');
  const k = state.kernel;
  const before = {};
  for (const input of form.querySelectorAll('input')) before[input.name] = input.value;
  form.replaceChildren();
  const config = $('config');
  config.replaceChildren();
  if (!k) return;
  const newConfig = {};
  for (const t of k.tune) {
    const label = document.createElement('label');
    label.textContent = `${t.name} `;
    const s = document.createElement('select');
    s.name = t.name;
    for (const v of t.values) s.appendChild(new Option(String(v), String(v)));
    if (t.values.includes(state.config[t.name])) s.value = String(state.config[t.name]);
    newConfig[t.name] = Number(s.value);
    s.addEventListener('change', () => {
      state.config[t.name] = Number(s.value);
      updateWgsl(state.view.state.doc.toString());
    });
    label.appendChild(s);
    config.appendChild(label);
  }
  state.config = newConfig;
  const defaults = { ...dimsDefaults(source), ...figureDims(k.dims) };
  const field = (name, value, kind) => {
    const label = document.createElement('label');
    label.textContent = `${name} `;
    const input = document.createElement('input');
    input.name = name;
    input.dataset.kind = kind;
    input.value = value;
    input.size = 6;
    input.spellcheck = false;
    input.addEventListener('input', () => {
      if (kind === 'dim') state.dimsEdited.add(name);
      if (name === 'seed' && SEEDS.includes(Number(input.value))) {
        state.seed = Number(input.value);
        renderSeeds();
      }
    });
    input.addEventListener('keydown', (e) => e.key === 'Enter' && run());
    label.appendChild(input);
    form.appendChild(label);
  };
  for (const d of k.dims) {
    const kept = state.dimsEdited.has(d) && before[d] !== undefined;
    field(d, kept ? before[d] : String(defaults[d] ?? 64), 'dim');
  }
  for (const p of k.params.filter((p) => p.kind === 'scalar')) {
    const value = p.name === 'seed' ? String(state.seed) : before[p.name] ?? '0';
    field(p.name, value, 'arg');
  }
  renderSeeds();
}

function launchRequest(op) {
  const dims = {};
  const args = {};
  for (const input of $('launch').querySelectorAll('input')) {
    if (input.dataset.kind === 'dim') {
      dims[input.name] = /^\d+$/.test(input.value.trim()) ? Number(input.value) : input.value;
    } else {
      args[input.name] = input.value;
    }
  }
  return {
    op,
    source: state.view.state.doc.toString(),
    kernel: state.kernel ? state.kernel.name : null,
    config: state.config,
    dims,
    args,
  };
}

function updateWgsl(source) {
  const k = state.kernel;
  if (!k) return;
  const { json } = call({ op: 'build', source, kernel: k.name, config: state.config });
  const pane = $('wgsl');
  if (json.ok) {
    // The plan first (where each value lives, and why), then the WGSL.
    pane.textContent = `${json.plan.replace(/^/gm, '// ')}\n${json.wgsl}`;
    const cfg = Object.entries(json.config).map(([n, v]) => `${n}=${v}`).join(', ');
    $('wgsl-info').textContent = `${k.name}${cfg ? ` [${cfg}]` : ''} · workgroup ${json.workgroup_size} · grid (${json.grid.join(', ')}) · ${json.wgsl.split('\n').length} lines, as phobosc build writes it`;
  } else {
    pane.textContent = '';
    $('wgsl-info').textContent = `no WGSL: ${json.error}`;
  }
}

// ---------------------------------------------------------------- running

function decode(json, blob) {
  return (json.outputs || []).map((o) => ({
    name: o.name,
    shape: o.shape,
    elem: o.elem,
    words: new Uint32Array(blob, o.offset, o.bytes / 4),
  }));
}

async function run() {
  if (state.running) return;
  const source = state.view.state.doc.toString();
  const check = call({ op: 'check', source }).json;
  // The linter checks after a pause in typing; a run right after an edit
  // takes the kernels, dims and parameters of the text it runs.
  onChecked(source, check);
  if (!check.ok) {
    setStatus('Not run: the source has errors (see the diagnostics). The figure shows the last good run.', 'error');
    document.body.dataset.state = 'error';
    return;
  }
  state.running = true;
  document.body.dataset.state = 'running';
  $('run').disabled = true;
  setStatus('Running...', 'info');
  try {
    await runOnce();
  } catch (err) {
    setStatus(`Not run: ${err.message}`, 'error');
    document.body.dataset.state = 'error';
  } finally {
    state.running = false;
    $('run').disabled = false;
    if (document.body.dataset.state === 'running') document.body.dataset.state = 'done';
  }
}

async function runOnce() {
  const request = launchRequest('run');
  const gpu = await openGpu();
  let gpuRun = null;
  let gpuWhy = gpu.error || null;
  const plan = gpu.device ? call({ ...request, op: 'plan', limits: planLimits(gpu) }) : null;
  // What this device's WebGPU cannot take still runs on the interpreter;
  // a launch past the playground's bounds does not run at all.
  if (plan && !plan.json.ok && !plan.json.interpreter) throw new Error(plan.json.error);
  if (plan && !plan.json.ok) gpuWhy = plan.json.error;
  if (plan && plan.json.ok) {
    let timer;
    const slow = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('slow')), GPU_TIMEOUT_MS);
    });
    try {
      gpuRun = await Promise.race([runPlan(gpu, plan.json, plan.blob), slow]);
      gpuRun.specialized = plan.json.specialized;
      gpuRun.workgroupMemory = plan.json.workgroup_memory;
    } catch (err) {
      if (err.message === 'slow') {
        gpuWhy = `the browser took more than ${GPU_TIMEOUT_MS / 1000} s to create the pipeline and run it, so this page stops using WebGPU until it is reloaded`;
        abandonGpu(gpu, gpuWhy);
      } else {
        gpuWhy = err.message;
      }
    } finally {
      clearTimeout(timer);
    }
  }
  let interp = null;
  let interpWhy = null;
  try {
    const answer = await interpret(request);
    if (answer.json.ok) interp = { json: answer.json, outputs: decode(answer.json, answer.blob), ms: answer.ms };
    else interpWhy = answer.json.error;
  } catch (err) {
    interpWhy = err.message;
  }
  const host = await hostRun(request);
  if (!gpuRun && !interp) throw new Error(interpWhy || gpuWhy);
  // The figure shows what ran on the GPU when it ran, else the interpreter's.
  const outputs = gpuRun
    ? [...gpuRun.outputs].map(([name, words]) => {
        const ref = interp && interp.outputs.find((o) => o.name === name);
        const plan = ref || { shape: [words.length], elem: 'f32' };
        return { name, shape: plan.shape, elem: plan.elem, words };
      })
    : interp.outputs;
  if (gpuRun && !interp) {
    // Shapes come from the plan when the interpreter did not run.
    const plan = call({ ...request, op: 'plan', limits: planLimits(gpu) }).json;
    for (const o of outputs) {
      const b = plan.buffers.find((x) => x.name === o.name);
      o.shape = b.shape;
      o.elem = b.elem;
    }
  }
  state.last = { outputs, seed: state.seed };
  if (!outputs.some((o) => o.name === state.shown)) state.shown = outputs.length ? outputs[0].name : null;
  renderFigure();
  renderRunInfo(gpu, gpuRun, gpuWhy, interp, interpWhy);
  renderHost(host, interp);
  setStatus('Ran.', 'ok');
}

// The same launch on the machine that serves the page (`phobosc serve`'s
// POST /api/run: its GPU through wgpu in exact mode, else Cranelift), or
// null when the page is served by something else.
async function hostRun(request) {
  const { op, ...launch } = request;
  let response;
  try {
    response = await fetch('api/run', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(launch),
    });
  } catch (err) {
    return { ok: false, error: err.message };
  }
  if ([404, 405, 501].includes(response.status)) return null;
  try {
    return await response.json();
  } catch {
    return { ok: false, error: `${response.status} ${response.statusText}` };
  }
}

function renderHost(host, interp) {
  const box = $('host');
  box.replaceChildren();
  delete box.dataset.total;
  delete box.dataset.identical;
  if (!host) return;
  const b = document.createElement('b');
  b.textContent = 'This host ';
  const span = document.createElement('span');
  box.append(b, span);
  if (!host.ok) {
    span.textContent = `not run: ${host.error}`;
    return;
  }
  let text = `phobosc serve on ${host.backend} (${host.device}): ${host.ms.toFixed(2)} ms`;
  if (interp && host.outputs.every((o) => o.words)) {
    let total = 0;
    let same = 0;
    for (const ref of interp.outputs) {
      const got = host.outputs.find((o) => o.name === ref.name);
      for (let i = 0; i < ref.words.length; i++) {
        total++;
        if (got && got.words[i] === ref.words[i]) same++;
      }
    }
    box.dataset.total = String(total);
    box.dataset.identical = String(same);
    text += `; bit-identical to the interpreter on ${same} of ${total} words`;
  }
  span.textContent = text;
}

function renderRunInfo(gpu, gpuRun, gpuWhy, interp, interpWhy) {
  const lines = [];
  const info = $('run-info');
  info.replaceChildren();
  const line = (label, text, attrs = {}) => {
    const p = document.createElement('p');
    const b = document.createElement('b');
    b.textContent = `${label} `;
    const span = document.createElement('span');
    span.textContent = text;
    for (const [k, v] of Object.entries(attrs)) span.dataset[k] = v;
    p.append(b, span);
    info.appendChild(p);
    lines.push(text);
  };
  if (gpuRun) {
    line('WebGPU', `${gpu.name}: ${gpuRun.runMs.toFixed(2)} ms to run (pipeline ${gpuRun.compileMs.toFixed(1)} ms)${gpuRun.specialized ? '; WGSL specialised for these dims' : ''}; planned within this device's ${gpuRun.workgroupMemory} bytes of workgroup memory`, { adapter: gpu.name });
  } else {
    line('WebGPU', `not used: ${gpuWhy}`);
  }
  if (interp) {
    line('Interpreter', `wasm, ${interp.ms.toFixed(2)} ms`);
  } else {
    line('Interpreter', `not run: ${interpWhy}`);
  }
  const agreement = $('agreement');
  agreement.replaceChildren();
  delete agreement.dataset.total;
  delete agreement.dataset.identical;
  if (gpuRun && interp) {
    let total = 0;
    let same = 0;
    const differ = [];
    for (const ref of interp.outputs) {
      const got = gpuRun.outputs.get(ref.name);
      const step = ref.elem.endsWith('64') ? 2 : 1;
      const n = ref.words.length / step;
      for (let i = 0; i < n; i++) {
        let eq = true;
        for (let w = 0; w < step; w++) eq = eq && got && got[i * step + w] === ref.words[i * step + w];
        total++;
        if (eq) same++;
        else if (differ.length < 8) differ.push({ name: ref.name, i, ref, got });
      }
    }
    agreement.dataset.total = String(total);
    agreement.dataset.identical = String(same);
    const head = document.createElement('p');
    head.className = same === total ? 'agree' : 'disagree';
    head.textContent = same === total
      ? `WebGPU and the interpreter: bit-identical on ${same} of ${total}.`
      : `WebGPU and the interpreter: bit-identical on ${same} of ${total}; ${total - same} differ.`;
    agreement.appendChild(head);
    if (same !== total) {
      const why = document.createElement('p');
      why.textContent = 'WGSL cannot forbid a driver to contract a*b+c into one rounding or to flush subnormals, which exact mode forbids in the SPIR-V that phobosc runs natively; the browser takes only WGSL. First differences:';
      agreement.appendChild(why);
      const ul = document.createElement('ul');
      for (const d of differ) {
        const li = document.createElement('li');
        const a = values(d.ref, d.ref.words)[d.i];
        const b = d.got ? values(d.ref, d.got)[d.i] : NaN;
        li.textContent = `${d.name}[${d.i}]: interpreter ${a}, WebGPU ${b}`;
        ul.appendChild(li);
      }
      agreement.appendChild(ul);
    }
  } else {
    const p = document.createElement('p');
    p.textContent = gpuRun
      ? 'Not compared: the interpreter did not run.'
      : 'Ran on the interpreter only (the reference); nothing to compare.';
    agreement.appendChild(p);
  }
  const checks = $('checks');
  checks.replaceChildren();
  for (const c of (interp && interp.json.checks) || []) {
    const li = document.createElement('li');
    // As `phobosc run` reports them: a check may state a fraction (about
    // 90% kept), so only one that could not run is marked.
    const pct = c.total > 0 ? ((100 * c.holds) / c.total).toFixed(2) : '100.00';
    li.textContent = c.error
      ? `check \`${c.name}\`: not run: ${c.error}`
      : `check \`${c.name}\`: true for ${c.holds} of ${c.total} (${pct}%)${c.holds === c.total ? ' (all)' : ''}`;
    li.className = c.error ? 'check-fail' : 'check-ok';
    checks.appendChild(li);
  }
  return lines;
}

// ---------------------------------------------------------------- figure

function renderFigure() {
  const last = state.last;
  const tabs = $('fig-tabs');
  tabs.replaceChildren();
  if (!last || last.outputs.length === 0) return;
  for (const o of last.outputs) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = o.name;
    b.className = 'tab';
    b.setAttribute('aria-pressed', String(o.name === state.shown));
    b.addEventListener('click', () => {
      state.shown = o.name;
      renderFigure();
    });
    tabs.appendChild(b);
  }
  const o = last.outputs.find((x) => x.name === state.shown) || last.outputs[0];
  const random = last.outputs.every((x) => figureOf(call, x).shading !== 'heat');
  $('fig-kicker').textContent = random ? 'FIG / STDLIB / RANDOM' : `FIG / OUTPUT / ${o.name.toUpperCase()}`;
  $('fig-formula').textContent = statementOf(o.name);
  const figure = figureOf(call, o);
  draw($('fig-tile'), $('fig-legend'), figure);
  $('fig-caption').textContent = figure.ok ? figure.caption : '';
  $('figure').dataset.output = o.name;
  $('figure').dataset.seed = String(last.seed);
}

// The statement of the source that writes `name`, for the figure's label.
function statementOf(name) {
  const source = state.view.state.doc.toString();
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`^\\s*${escaped}\\s*(\\[[^\\n]*?\\])?\\s*=\\s*(.+)$`, 'm').exec(source);
  return m ? `${name}${m[1] || ''} = ${m[2].trim()}` : name;
}

function renderSeeds() {
  const box = $('seeds');
  box.replaceChildren();
  const k = state.kernel;
  const hasSeed = k && k.params.some((p) => p.kind === 'scalar' && p.name === 'seed');
  box.hidden = !hasSeed;
  if (!hasSeed) return;
  const label = document.createElement('span');
  label.textContent = 'seed';
  box.appendChild(label);
  for (const s of SEEDS) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = String(s);
    b.className = 'seed';
    b.dataset.seed = String(s);
    b.setAttribute('aria-pressed', String(s === state.seed));
    b.addEventListener('click', () => {
      state.seed = s;
      const input = $('launch').querySelector('input[name="seed"]');
      if (input) input.value = String(s);
      renderSeeds();
      syncFragment();
      run();
    });
    box.appendChild(b);
  }
}

// ---------------------------------------------------------------- setup

function editorTheme() {
  const style = HighlightStyle.define([
    { tag: tags.keyword, color: 'var(--syn-keyword)', fontWeight: '600' },
    { tag: tags.typeName, color: 'var(--syn-type)' },
    { tag: tags.number, color: 'var(--syn-number)' },
    { tag: tags.comment, color: 'var(--syn-comment)', fontStyle: 'italic' },
    { tag: tags.meta, color: 'var(--syn-meta)' },
    { tag: tags.atom, color: 'var(--syn-atom)' },
    { tag: tags.function(tags.variableName), color: 'var(--syn-fn)' },
    { tag: tags.annotation, color: 'var(--syn-meta)' },
    { tag: tags.operator, color: 'var(--syn-op)' },
  ]);
  return [
    syntaxHighlighting(style),
    EditorView.theme({
      '&': { height: '100%', backgroundColor: 'var(--panel)', color: 'var(--ink)' },
      '.cm-content': { caretColor: 'var(--ink)', fontFamily: 'var(--mono)' },
      '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', border: 'none' },
      '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--active-line)' },
      '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: 'var(--selection)' },
      '.cm-tooltip': { backgroundColor: 'var(--panel)', color: 'var(--ink)', border: '1px solid var(--line)' },
    }),
  ];
}

function setSource(source) {
  const view = state.view;
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: source } });
}

function initEditor(source) {
  const runKey = { key: 'Mod-Enter', run: () => (run(), true), preventDefault: true };
  state.view = new EditorView({
    parent: $('editor'),
    state: EditorState.create({
      doc: source,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        indentOnInput(),
        bracketMatching(),
        phobos,
        editorTheme(),
        linter(lintSource, { delay: 250 }),
        lintGutter(),
        keymap.of([runKey, ...defaultKeymap, ...historyKeymap, ...searchKeymap, indentWithTab]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': 'Phobos source' }),
      ],
    }),
  });
  // The first check now, not after the linter's delay.
  const diags = lintSource(state.view);
  state.view.dispatch(setDiagnostics(state.view.state, diags));
}

async function main() {
  initTheme();
  const select = $('examples');
  for (const e of EXAMPLES) select.appendChild(new Option(e.title, e.id));
  const fragment = readFragment();
  let source = EXAMPLES[0].source;
  if (fragment && fragment.error) {
    const notice = $('notice');
    notice.textContent = `This link could not be opened: ${fragment.error}.`;
    notice.hidden = false;
  } else if (fragment) {
    source = fragment.source;
    state.seed = fragment.seed;
    select.value = fragment.example || '';
    if (!fragment.example) select.selectedIndex = -1;
  }
  setStatus('Loading the compiler...', 'info');
  state.module = await loadModule('phobos_playground.wasm');
  state.compiler = await Compiler.create(state.module);
  startWorker();
  initEditor(source);
  select.addEventListener('change', () => {
    const e = EXAMPLES.find((x) => x.id === select.value);
    if (!e) return;
    state.dimsEdited.clear();
    setSource(e.source);
    const diags = lintSource(state.view);
    state.view.dispatch(setDiagnostics(state.view.state, diags));
    run();
  });
  $('kernel').addEventListener('change', () => {
    state.kernel = (state.check.kernels || []).find((k) => k.name === $('kernel').value) || null;
    renderLaunchForm(state.view.state.doc.toString());
    updateWgsl(state.view.state.doc.toString());
  });
  $('run').addEventListener('click', run);
  $('share').addEventListener('click', async () => {
    syncFragment();
    const url = window.location.href;
    try {
      await navigator.clipboard.writeText(url);
      setStatus('Permalink copied: the source is in the URL fragment, which is never sent to a server.', 'ok');
    } catch {
      setStatus('Permalink: the URL in the address bar now holds the source.', 'ok');
    }
  });
  window.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
      e.preventDefault();
      run();
    }
  });
  NARROW.addEventListener('change', () => {
    renderLaunchForm(state.view.state.doc.toString());
    run();
  });
  openGpu().then((gpu) => {
    $('adapter').textContent = gpu.device ? `WebGPU: ${gpu.name}` : `No WebGPU (${gpu.error}): runs use the wasm interpreter`;
  });
  document.body.dataset.state = 'ready';
  await run();
}

main().catch((err) => {
  setStatus(`The playground could not start: ${err.message}`, 'error');
  document.body.dataset.state = 'error';
});

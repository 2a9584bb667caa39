// Chromium's WebGPU accepts every module `phobosc build` writes (issue 28):
// every example, ok fixture and spelling, in every configuration of every
// kernel's @autotune space, in exact and fast mode, built with the defaults
// (WebGPU's default limits), then made into a shader module and a compute
// pipeline by headless Chromium on SwiftShader, on a device with WebGPU's
// default limits, inside error scopes. A module that is refused, that
// loses the device or that takes the page down fails the test, named by
// file, kernel, configuration and precision.
//
//   PHOBOSC=target/debug/phobosc node --test playground/web/tests/modules.mjs
//
// CHROMIUM names the browser (default /usr/bin/chromium); PHOBOS_MODULES
// (below) tries other files. Modules with the
// same WGSL (a configuration or precision that changes nothing) are
// created once. The slowest module's time is reported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const phobosc = path.resolve(repo, process.env.PHOBOSC || 'target/debug/phobosc');

// How long one module may take to become a pipeline before the test calls
// it refused (SwiftShader compiles each pipeline on the page's 2 cores).
const MODULE_MS = 120000;

let server;
let base;
let browser;
let out;

before(async () => {
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'phobos-modules-'));
  server = spawn(phobosc, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise((resolve, reject) => {
    let text = '';
    server.stdout.on('data', (d) => {
      text += d;
      const m = /the playground is at (\S+)/.exec(text);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`phobosc serve exited with ${code}: ${text}`)));
    setTimeout(() => reject(new Error(`phobosc serve did not start: ${text}`)), 30000).unref();
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--enable-unsafe-webgpu', '--no-sandbox'],
  });
});

after(async () => {
  await browser?.close();
  server?.kill();
  if (out) fs.rmSync(out, { recursive: true, force: true });
});

// PHOBOS_MODULES=FILE,FILE... builds those files instead (paths from the
// repository's root, or absolute), to try a kernel alone; a `.wgsl` file
// is created as it is, entry point `main`.
const sources = () => process.env.PHOBOS_MODULES?.split(',') ?? [
  ...['examples', 'tests/fixtures/ok', 'tests/spellings'].flatMap((dir) =>
    fs.readdirSync(path.join(repo, dir)).filter((f) => f.endsWith('.ph')).map((f) => `${dir}/${f}`)),
];

// Sources whose modules SwiftShader takes minutes over (matrix products
// over loops with exact `exp`, `log` and division, 16-bit conversions):
// all of them took over 25 minutes, and only their first configuration,
// specialised, in both precisions (8 modules) over 4, on this 2-core
// machine. They are left out unless PHOBOS_SLOW_SOURCES=1, which creates
// that reduced set; `tests/webgpu_limits.rs` checks every configuration of
// them against WebGPU's default limits, and tests/wgsl_valid.rs runs Tint.
const SLOW = new Set([
  'examples/matmul.ph',
  'examples/attention_dropout.ph',
  'examples/attention_dropout_backward.ph',
  // The attention forward spelled as users write it: the example's kernel.
  'tests/spellings/attention.ph',
]);
const withSlow = process.env.PHOBOS_SLOW_SOURCES === '1';

// `phobosc build` of every source in both precisions, with its dims
// symbolic and specialised to its `// dims:` line (as a launch specialises
// it, and as the playground runs it): the modules by WGSL text, each with
// the names of every build that wrote it. What the GPU backend does not
// lower yet is refused by name and reported, never written; any other
// refusal fails.
function buildAll() {
  const modules = new Map();
  const refused = [];
  const unsupported = [];
  for (const file of sources()) {
    // A WGSL file is taken as it is (for reducing a module by hand).
    if (file.endsWith('.wgsl')) {
      const code = fs.readFileSync(path.resolve(repo, file), 'utf8');
      modules.set(code, { code, entryPoint: 'main', names: [file] });
      continue;
    }
    const line = /^\/\/ dims: *(.*)$/m.exec(fs.readFileSync(path.resolve(repo, file), 'utf8'));
    const dims = line ? line[1].split(',').map((d) => d.trim()).filter((d) => d) : [];
    const slow = SLOW.has(file);
    if (slow && !withSlow) continue;
    for (const [precision, given] of [['exact', []], ['fast', []], ['exact', dims], ['fast', dims]]) {
      if (given === dims && dims.length === 0) continue;
      if (slow && given !== dims) continue;
      const what = `${precision}${given.length ? `, --dim ${given.join(' --dim ')}` : ''}`;
      const dir = path.join(out, `${file.replaceAll('/', '_')}-${precision}-${given.length}`);
      try {
        execFileSync(phobosc, ['build', file, '-o', dir, '--target', 'wgsl', '--precision', precision,
          ...given.flatMap((d) => ['--dim', d])], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] });
      } catch (e) {
        const message = `${file} (${what}): ${String(e.stderr).trim()}`;
        (/not supported on the GPU backend yet/.test(message) ? unsupported : refused).push(message);
        continue;
      }
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
      for (const k of manifest.kernels) {
        for (const c of slow ? k.configurations.slice(0, 1) : k.configurations) {
          const config = Object.entries(c.config).map(([n, v]) => `${n}=${v}`).join(', ');
          const name = `${file} \`${k.name}\` [${config}] ${what}`;
          const code = fs.readFileSync(path.join(dir, c.wgsl), 'utf8');
          const m = modules.get(code) ?? { code, entryPoint: manifest.entry_point, names: [] };
          m.names.push(name);
          modules.set(code, m);
        }
      }
    }
  }
  return { modules: [...modules.values()], refused, unsupported };
}

// A page of the server's origin (a secure context, so WebGPU is there)
// holding a device with WebGPU's default limits, which it replaces when
// the device is lost.
async function openPage() {
  const page = await browser.newPage();
  await page.goto(new URL('phobos-modules-test', base).href);
  const adapter = await page.evaluate(async () => {
    const adapter = await navigator.gpu?.requestAdapter();
    if (!adapter) return null;
    globalThis.fresh = async () => {
      const device = await (await navigator.gpu.requestAdapter()).requestDevice();
      globalThis.lost = null;
      device.lost.then((info) => { if (globalThis.device === device) globalThis.lost = `${info.reason}: ${info.message}`; });
      globalThis.device = device;
    };
    await globalThis.fresh();
    const info = adapter.info ?? {};
    return `${info.vendor} ${info.architecture} ${info.description}`.trim();
  });
  return { page, adapter };
}

// Creates the module and its pipeline; the errors it gave, [] if none.
async function create(page, m) {
  return page.evaluate(async ({ code, entryPoint }) => {
    const errors = [];
    if (globalThis.lost) await globalThis.fresh();
    const device = globalThis.device;
    const scopes = ['validation', 'internal', 'out-of-memory'];
    scopes.forEach((s) => device.pushErrorScope(s));
    try {
      const module = device.createShaderModule({ code });
      const info = await module.getCompilationInfo();
      for (const msg of info.messages) {
        if (msg.type === 'error') errors.push(`${msg.lineNum}:${msg.linePos}: ${msg.message}`);
      }
      device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint } });
    } catch (e) {
      errors.push(`exception: ${e.message}`);
    }
    for (const s of scopes.reverse()) {
      try {
        const e = await device.popErrorScope();
        if (e) errors.push(`${s} error: ${e.message}`);
      } catch (e) {
        errors.push(`popErrorScope (${s}): ${e.message}`);
      }
    }
    // A loss is reported when the device's promise settles; give it a turn.
    await new Promise((r) => setTimeout(r, 0));
    if (globalThis.lost) errors.push(`the device was lost: ${globalThis.lost}`);
    return errors;
  }, { code: m.code, entryPoint: m.entryPoint });
}

test('Chromium accepts every module phobosc build writes, at every configuration', async (t) => {
  const t0 = Date.now();
  const { modules, refused, unsupported } = buildAll();
  const built = Date.now() - t0;
  let { page, adapter } = await openPage();
  assert.ok(adapter !== null, 'Chromium gave no WebGPU adapter');
  const failures = [...refused];
  let slowest = { ms: 0, name: '' };
  for (const m of modules) {
    const start = Date.now();
    let errors;
    try {
      errors = await Promise.race([
        create(page, m),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`no pipeline after ${MODULE_MS / 1000} s`)), MODULE_MS)),
      ]);
    } catch (e) {
      // The page or its WebGPU instance went down, or the module took too
      // long: the next module gets a page of its own.
      errors = [`the page failed: ${e.message.split('\n')[0]}`];
      await page.close().catch(() => {});
      ({ page } = await openPage());
    }
    const ms = Date.now() - start;
    if (ms > slowest.ms) slowest = { ms, name: m.names[0] };
    if (ms > 10000) t.diagnostic(`${(ms / 1000).toFixed(1)} s: ${m.names[0]}`);
    if (errors.length > 0) failures.push(`${m.names.join('; ')}:\n  ${errors.join('\n  ')}`);
  }
  await page.close();
  const names = modules.reduce((n, m) => n + m.names.length, 0);
  for (const u of unsupported) t.diagnostic(`not lowered by the GPU backend yet: ${u}`);
  t.diagnostic(`${adapter}: ${names} modules built in ${(built / 1000).toFixed(1)} s, ${modules.length} distinct WGSL `
    + `created in ${((Date.now() - t0 - built) / 1000).toFixed(1)} s; slowest ${(slowest.ms / 1000).toFixed(1)} s: ${slowest.name}`);
  assert.deepEqual(failures, [], `Chromium refused ${failures.length} module(s)`);
});

// The modules of tests/slow/ record what SwiftShader's WebGPU cannot make a
// pipeline of in reasonable time (docs/playground.md, "Modules SwiftShader
// is too slow for"); each takes minutes, so this runs only when
// PHOBOS_SLOW_MODULES=1, and fails while Chromium still takes more than a
// minute over any of them: rerun it on a new Chromium.
test('the modules SwiftShader was too slow for', { skip: !process.env.PHOBOS_SLOW_MODULES }, async (t) => {
  const dir = path.join(here, 'slow');
  const report = [];
  const failures = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.wgsl'))) {
    const { page } = await openPage();
    const code = fs.readFileSync(path.join(dir, file), 'utf8');
    const start = Date.now();
    let errors;
    try {
      errors = await Promise.race([
        create(page, { code, entryPoint: 'main' }),
        new Promise((_, reject) => setTimeout(() => reject(new Error('no pipeline after 60 s')), 60000)),
      ]);
    } catch (e) {
      errors = [e.message.split('\n')[0]];
    }
    const line = `${file}: ${((Date.now() - start) / 1000).toFixed(1)} s${errors.length ? `: ${errors.join('; ')}` : ''}`;
    (errors.length ? failures : report).push(line);
    await page.close().catch(() => {});
  }
  report.forEach((r) => t.diagnostic(`now accepted: ${r}`));
  assert.deepEqual(failures, [], 'still too slow for SwiftShader');
});

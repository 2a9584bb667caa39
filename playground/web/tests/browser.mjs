// The playground in a real browser: Debian's chromium driven by
// playwright-core, headless, with --enable-unsafe-webgpu (SwiftShader's
// WebGPU adapter, no GPU needed), against `phobosc serve`.
//
//   PHOBOSC=target/debug/phobosc node --test playground/web/tests/browser.mjs
//
// CHROMIUM names the browser (default /usr/bin/chromium); screenshots go to
// SCREENSHOTS (default playground/web/screenshots/). Every page fails its
// test on a console error, an uncaught exception or a request that leaves
// the server's host. Screenshots are of the viewport: headless Chromium's
// full-page captures repaint only part of the page (the status line and the
// Run button showed an earlier frame).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const phobosc = path.resolve(repo, process.env.PHOBOSC || 'target/debug/phobosc');
const shots = path.resolve(repo, process.env.SCREENSHOTS || 'playground/web/screenshots');
fs.mkdirSync(shots, { recursive: true });

let server;
let base;
let browser;

before(async () => {
  server = spawn(phobosc, ['serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  base = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = /the playground is at (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`phobosc serve exited with ${code}: ${out}`)));
    setTimeout(() => reject(new Error(`phobosc serve did not start: ${out}`)), 30000);
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill();
});

function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--enable-unsafe-webgpu', '--no-sandbox'],
  });
}

// A page that records what must never happen.
async function open(t, { width = 1280, height = 1060, hash = '', on = browser, noGpu = false } = {}) {
  const context = await on.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  if (noGpu) await page.addInitScript(() => delete Navigator.prototype.gpu);
  const problems = [];
  const origin = new URL(base).origin;
  page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')) problems.push(`off-host request: ${u}`);
  });
  t.after(async () => {
    await context.close().catch(() => {});
    assert.deepEqual(problems, [], 'the page logged errors or left the host');
  });
  await page.goto(base + hash);
  await settled(page);
  return page;
}

async function settled(page) {
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state), null, { timeout: 120000 });
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, { timeout: 120000 });
}

async function caption(page) {
  return (await page.textContent('#fig-caption')).trim();
}

// The launch on `phobosc serve`'s own backend (native, exact), for checking
// what the page shows against a path that shares nothing with the browser.
async function hostRun(body) {
  const r = await fetch(new URL('api/run', base), { method: 'POST', body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

const source = () => fs.readFileSync(path.join(repo, 'playground/examples/random_tile.ph'), 'utf8');

test('the default example runs and shows the seed caption', async (t) => {
  const page = await open(t);
  assert.equal(await page.getAttribute('body', 'data-state'), 'done', await page.textContent('#status'));
  assert.equal(await caption(page), 'uniform: 256 counters, mean 0.513; each a multiple of 2^-23 in [0, 1).');
  assert.equal(await page.getAttribute('#fig-tile svg', 'data-rows'), '8');
  assert.equal(await page.getAttribute('#fig-tile svg', 'data-cols'), '32');
  assert.equal(await page.locator('#fig-tile rect').count(), 256);
  assert.match(await page.textContent('#wgsl'), /@compute @workgroup_size\(/);
  assert.match(await page.textContent('#checks'), /true for 256 of 256/);
  await page.screenshot({ path: path.join(shots, 'default.png') });
});

test('seeds 1, 2 and 3: captions match the host backend', async (t) => {
  const page = await open(t);
  for (const seed of [1, 2, 3]) {
    await page.click(`#seeds button[data-seed="${seed}"]`);
    await page.waitForFunction((s) => document.getElementById('figure').dataset.seed === String(s), seed);
    await settled(page);
    const host = await hostRun({ source: source(), dims: { ROWS: 8, COLS: 32 }, args: { seed } });
    assert.equal(host.json.ok, true, JSON.stringify(host.json));
    const u = host.json.outputs.find((o) => o.name === 'uniform');
    const f32 = new Float32Array(new Uint32Array(u.words).buffer);
    const mean = f32.reduce((a, b) => a + b, 0) / f32.length;
    const text = await caption(page);
    assert.equal(text, `uniform: 256 counters, mean ${mean.toFixed(3)}; each a multiple of 2^-23 in [0, 1).`);
    if (seed === 1) assert.match(text, /mean 0\.513/);
    for (const name of ['randn', 'dropout']) {
      await page.click(`#fig-tabs button:text-is("${name}")`);
      assert.match(await caption(page), new RegExp(`^${name}: 256 counters`));
      await page.screenshot({ path: path.join(shots, `seed${seed}-${name}.png`) });
    }
    await page.click('#fig-tabs button:text-is("uniform")');
  }
});

test('WebGPU and the interpreter agree as the page says', async (t) => {
  const page = await open(t);
  const adapter = await page.textContent('#run-info');
  assert.match(adapter, /WebGPU .*ms to run/, 'the run went through WebGPU');
  // Planned within the limits the page asked the adapter for, at least
  // WebGPU's default 16,384 bytes.
  const memory = /planned within this device's (\d+) bytes of workgroup memory/.exec(adapter);
  assert.ok(memory && Number(memory[1]) >= 16384, adapter);
  const total = await page.getAttribute('#agreement', 'data-total');
  const same = await page.getAttribute('#agreement', 'data-identical');
  assert.equal(total, '768');
  assert.equal(same, total);
  assert.match(await page.textContent('#agreement'), /bit-identical on 768 of 768/);
  // The figure draws the WebGPU result: each cell's value equals the host
  // backend's bits for the same launch.
  const host = await hostRun({ source: source(), dims: { ROWS: 8, COLS: 32 }, args: { seed: 1 } });
  const u = new Float32Array(new Uint32Array(host.json.outputs[0].words).buffer);
  const titles = await page.locator('#fig-tile rect title').allTextContents();
  assert.equal(titles.length, 256);
  titles.forEach((title, i) => assert.equal(Number(title.split('= ')[1]), u[i], title));
  assert.equal(await page.getAttribute('#host', 'data-identical'), '768');
});

test('every example of the menu runs on WebGPU and agrees with the interpreter', async (t) => {
  const page = await open(t);
  const menu = await page.locator('#examples option').evaluateAll((os) => os.map((o) => o.value));
  // The seed's figure, its dropout kernel, a Tandem draw and the fused
  // kernels of examples/.
  assert.deepEqual(menu, [
    'random_tile', 'dropout_rows', 'tandem_noise',
    'softmax_dropout', 'layernorm_dropout', 'bias_gelu_dropout', 'dropout_backward',
  ]);
  // The default example last, to come back to the figure.
  for (const example of [...menu.slice(1), 'random_tile']) {
    await page.selectOption('#examples', example);
    await page.waitForFunction(() => document.body.dataset.state === 'running', null, { timeout: 10000 }).catch(() => {});
    await settled(page);
    const total = Number(await page.getAttribute('#agreement', 'data-total'));
    const same = Number(await page.getAttribute('#agreement', 'data-identical'));
    assert.ok(total > 0, `${example}: compared ${total} (${await page.textContent('#run-info')})`);
    assert.equal(same, total, `${example}: ${await page.textContent('#agreement')}`);
    assert.equal(await page.getAttribute('#host', 'data-identical'), String(total));
    assert.equal(await page.getAttribute('body', 'data-state'), 'done', `${example}: ${await page.textContent('#status')}`);
    if (example !== 'random_tile') {
      // A heat map with a value scale, one image past 4,096 cells
      // (64 rows of 256, the dims the page gives a kernel without a
      // `// dims:` line).
      const text = await caption(page);
      const n = Number(/^[A-Z]+: (\d+) values, mean -?\d/.exec(text)?.[1]);
      assert.ok(n > 0, `${example}: ${text}`);
      const image = await page.locator('#fig-tile svg.heat-map image').count();
      assert.equal(image, n > 4096 ? 1 : 0, `${example}: ${n} cells`);
      assert.equal(await page.locator('#fig-tile rect').count(), n > 4096 ? 0 : n, `${example}: a rect a cell`);
      assert.equal(await page.locator('#fig-legend .bar-heat').count(), 1);
      assert.doesNotMatch(await page.textContent('#checks'), /not run/);
    }
    await page.screenshot({ path: path.join(shots, `example-${example}.png`) });
  }
});

test('every fixture and example: WebGPU agrees with the interpreter or says why it did not run', async (t) => {
  // A browser of its own, so that a module SwiftShader is slow to compile
  // ends with it instead of slowing the other tests' WebGPU. After such a
  // module (the page gives WebGPU 20 s, then uses none until it is
  // reloaded, while SwiftShader keeps the GPU process busy, and with it the
  // page's rendering) the browser is started afresh for the next file.
  let own;
  let page;
  const fresh = async () => {
    await own?.close();
    own = await launchBrowser();
    page = await open(t, { on: own });
  };
  await fresh();
  t.after(() => own.close());
  const files = [
    ...fs.readdirSync(path.join(repo, 'tests/fixtures/ok')).map((f) => `tests/fixtures/ok/${f}`),
    ...fs.readdirSync(path.join(repo, 'examples')).filter((f) => f.endsWith('.ph')).map((f) => `examples/${f}`),
  ].filter((f) => f.endsWith('.ph'));
  // These kept SwiftShader creating their pipelines for minutes, stored 4
  // elements at a time (compiler/gpu/src/lower/stmt.rs, QUAD_EXACT_CALLS):
  // they must now run on WebGPU, not fall back to the interpreter.
  // They go first, so that they never follow a slow module.
  const mustRun = ['examples/random_tile.ph', 'tests/fixtures/ok/randn_rows.ph'];
  files.sort((a, b) => mustRun.includes(b) - mustRun.includes(a));
  const report = [];
  for (const file of files) {
    await page.click('.cm-content');
    await page.keyboard.press('Control+a');
    await page.keyboard.insertText(fs.readFileSync(path.join(repo, file), 'utf8'));
    await page.waitForFunction(() => !document.getElementById('status').textContent.startsWith('The source has errors'));
    await page.evaluate(() => { document.body.dataset.state = 'ready'; });
    await page.keyboard.press('Control+Enter');
    await settled(page);
    const info = await page.innerText('#run-info');
    const total = Number(await page.getAttribute('#agreement', 'data-total'));
    const same = Number(await page.getAttribute('#agreement', 'data-identical'));
    report.push(`${file}: ${total ? `${same} of ${total} identical` : info}`);
    const slow = /stops using WebGPU until it is reloaded/.test(info);
    assert.doesNotMatch(info, /lost|refused the WGSL|WebGPU: /, `${file}: ${info}`);
    assert.equal(await page.getAttribute('body', 'data-state'), 'done', `${file}: ${await page.textContent('#status')}`);
    if (mustRun.includes(file)) assert.ok(total > 0, `${file} did not run on WebGPU: ${info}`);
    if (total) assert.equal(same, total, `${file}: ${await page.textContent('#agreement')}`);
    if (slow) await fresh();
  }
  t.diagnostic(report.join('\n'));
});

test('an error shows its diagnostic at the right place and keeps the figure', async (t) => {
  const page = await open(t);
  const before = await caption(page);
  const text = source().replace('randn(seed, iota(0)', 'randn(sed, iota(0)');
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(text);
  await page.waitForSelector('.cm-lintRange-error', { timeout: 10000 });
  // The mark covers exactly the unknown name, on its line.
  const marked = await page.locator('.cm-lintRange-error').allTextContents();
  assert.deepEqual(marked, ['sed']);
  const line = await page.locator('.cm-line:has(.cm-lintRange-error)').textContent();
  assert.equal(line.trim(), 'randn[:, :] = randn(sed, iota(0) * COLS + iota(1))');
  assert.match(await page.textContent('#diagnostics'), /E0100/);
  assert.equal(await page.locator('#seeds button').count(), 3, 'the launch form stays');
  await page.keyboard.press('Control+Enter');
  assert.match(await page.textContent('#status'), /Not run: the source has errors/);
  assert.equal(await caption(page), before, 'the last good figure stays');
  await page.screenshot({ path: path.join(shots, 'diagnostic.png') });
});

test('a huge launch, or one that would run for hours, is refused with a message and keeps the figure', async (t) => {
  const page = await open(t);
  const before = await caption(page);
  // 10^5 x 10^5 floats, three times: far past the 128 MiB of one launch.
  await page.fill('#launch input[name="ROWS"]', '100000');
  await page.fill('#launch input[name="COLS"]', '100000');
  await page.press('#launch input[name="COLS"]', 'Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  assert.match(await page.textContent('#status'), /^Not run: `uniform` with shape \[100000, 100000\] would take the launch's tensors past 128 MiB, the playground's bound; use smaller dims$/);
  assert.equal(await caption(page), before, 'the last good figure stays');
  // Nested loops over a dim of 10^5: 10^10 iterations, within the memory
  // bound and far past the work bounds of WebGPU and of the interpreter.
  const loops = '@grid(1)\nkernel k(X: tensor<i32>[N], Y: tensor<i32>[1]) {\n  var a: i32 = 0\n  for i in 0 .. N {\n    for j in 0 .. N {\n      a = a + 1\n    }\n  }\n  Y[0] = a\n}\n';
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(loops);
  await page.waitForSelector('#launch input[name="N"]');
  await page.fill('#launch input[name="N"]', '100000');
  await page.evaluate(() => { document.body.dataset.state = 'ready'; });
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  assert.match(await page.textContent('#status'), /^Not run: this launch would evaluate about \d+ expression nodes, more than the playground's bound of 17179869184 for WebGPU; use smaller dims$/);
  assert.equal(await caption(page), before, 'the last good figure stays');
  assert.equal(await page.inputValue('#examples'), '', 'the menu names no example once the source is edited');
  await page.screenshot({ path: path.join(shots, 'refused.png') });
});

test('a kernel past the device\'s workgroup memory runs on the interpreter, and the page says why', async (t) => {
  const page = await open(t);
  // `t` (read through a slice, so kept in workgroup memory) takes 128 KiB:
  // more than WebGPU lets any device give a workgroup.
  const big = '// dims: M=8\n@autotune(R in [8])\nkernel big(X: tensor<f32>[M, 4096], Y: tensor<f32>[M, 4096]) {\n  let r = ctx.block.x * R\n  let t = X[r :+ R, :] * 2.0\n  Y[r :+ R, :] = t + t[:, 0 :+ 1]\n}\n';
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(big);
  await page.waitForSelector('#launch input[name="M"]');
  await page.evaluate(() => { document.body.dataset.state = 'ready'; });
  await page.keyboard.press('Control+Enter');
  await page.waitForFunction(() => document.body.dataset.state === 'done');
  const info = await page.textContent('#run-info');
  assert.match(info, /WebGPU not used: .*needs \d+ bytes of workgroup memory/, info);
  assert.match(info, /Interpreter wasm/, info);
});

test('the narrow layout draws twelve rows of 16', async (t) => {
  const page = await open(t, { width: 390, height: 1200 });
  assert.equal(await page.getAttribute('#fig-tile svg', 'data-rows'), '12');
  assert.equal(await page.getAttribute('#fig-tile svg', 'data-cols'), '16');
  assert.match(await caption(page), /^uniform: 192 counters, mean \d\.\d{3}; each a multiple of 2\^-23 in \[0, 1\)\.$/);
  assert.match(await page.textContent('#agreement'), /bit-identical on 576 of 576/);
  await page.screenshot({ path: path.join(shots, 'narrow.png') });
});

test('a permalink carries the source and the seed', async (t) => {
  const page = await open(t);
  const edited = source().replace('dropout(1.0, 0.5,', 'dropout(1.0, 0.25,') + '// é: a permalink keeps UTF-8\n';
  await page.click('.cm-content');
  await page.keyboard.press('Control+a');
  await page.keyboard.insertText(edited);
  await page.click('#seeds button[data-seed="2"]');
  await settled(page);
  const url = page.url();
  assert.match(url, /#code=[A-Za-z0-9_-]+&seed=2$/);
  const again = await open(t, { hash: new URL(url).hash });
  assert.equal(await again.evaluate(() => document.querySelector('.cm-content').innerText.replace(/\u00a0/g, ' ')).then((s) => s.trim()), edited.trim());
  assert.equal(await again.getAttribute('#figure', 'data-seed'), '2');
  // A damaged link says so and shows the default example.
  const bad = await open(t, { hash: '#code=%%%not-base64' });
  assert.match(await bad.textContent('#notice'), /not valid base64url UTF-8/);
  assert.equal(await bad.getAttribute('#agreement', 'data-identical'), '768');
  assert.match(await bad.textContent('.cm-content'), /kernel random_tile/);
  const html = await open(t, { hash: `#code=${Buffer.from('<img src=x onerror=alert(1)>').toString('base64url')}` });
  assert.equal(await html.locator('img').count(), 0, 'nothing from the URL becomes HTML');
  assert.match(await html.textContent('.cm-content'), /<img src=x onerror=alert\(1\)>/);
  assert.match(await html.textContent('#diagnostics'), /E0002/);
  const long = await open(t, { hash: `#code=${'A'.repeat(300 * 1024)}` });
  assert.match(await long.textContent('#notice'), /longer than/);
});

test('without WebGPU the interpreter draws the figure and the page says so', async (t) => {
  const page = await open(t, { noGpu: true });
  assert.equal(await caption(page), 'uniform: 256 counters, mean 0.513; each a multiple of 2^-23 in [0, 1).');
  assert.match(await page.textContent('#run-info'), /WebGPU not used: this browser has no WebGPU/);
  assert.match(await page.textContent('#agreement'), /Ran on the interpreter only/);
  assert.equal(await page.getAttribute('#host', 'data-identical'), '768');
  assert.match(await page.textContent('#adapter'), /No WebGPU/);
});

test('dark mode', async (t) => {
  const page = await open(t);
  await page.click('#theme');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
  await page.screenshot({ path: path.join(shots, 'dark.png') });
});

test('the server refuses bad requests and stays up', async () => {
  const post = (body, headers = {}) => fetch(new URL('api/run', base), { method: 'POST', body, headers });
  let r = await post('{');
  assert.equal(r.status, 400);
  assert.match((await r.json()).error, /malformed request/);
  r = await post('x'.repeat(300 * 1024));
  assert.equal(r.status, 413);
  r = await post(JSON.stringify({ source: source(), dims: { ROWS: 1 << 30, COLS: 1 << 30 } }));
  assert.match((await r.json()).error, /bound/);
  r = await post(JSON.stringify({ source: 'kernel k(', dims: {} }));
  assert.match((await r.json()).error, /E0002/);
  r = await fetch(new URL(`/${'a'.repeat(100000)}`, base));
  assert.ok(r.status >= 400, `a 100 KB path: ${r.status}`);
  r = await fetch(new URL('/../../etc/passwd', base));
  assert.equal(r.status, 404);
  r = await fetch(base);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-security-policy'), /default-src 'self'/);
});

// Checks WGSL files with Tint, the WGSL compiler of Chromium and Dawn, through
// dawn.node (the npm package `webgpu`) on Dawn's null backend: no GPU is
// needed, and shader-module creation runs Tint's parser, resolver and
// constant evaluation exactly as a browser does. Each file is also made into
// a compute pipeline with entry point `main`.
//
//   node check.mjs FILE.wgsl...
//
// Prints `ok FILE` or `error FILE` followed by Tint's messages, and exits
// with 1 if any file was refused.
import { create, globals } from 'webgpu';
import fs from 'node:fs';

Object.assign(globalThis, globals);
const gpu = create(['backend=null']);
const adapter = await gpu.requestAdapter();
if (!adapter) {
  console.error('dawn.node gave no adapter on its null backend');
  process.exit(2);
}
const device = await adapter.requestDevice();
let refused = 0;
for (const file of process.argv.slice(2)) {
  const code = fs.readFileSync(file, 'utf8');
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code });
  const info = await module.getCompilationInfo();
  const moduleError = await device.popErrorScope();
  const messages = info.messages
    .filter((m) => m.type === 'error')
    .map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`);
  if (messages.length === 0 && !moduleError) {
    device.pushErrorScope('validation');
    device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const pipelineError = await device.popErrorScope();
    if (pipelineError) messages.push(pipelineError.message);
  } else if (messages.length === 0) {
    messages.push(moduleError.message);
  }
  if (messages.length === 0) {
    console.log(`ok ${file}`);
  } else {
    refused += 1;
    console.log(`error ${file}`);
    for (const m of messages) console.log(`  ${m.split('\n').join('\n  ')}`);
  }
}
device.destroy();
// dawn.node keeps the event loop alive; leave once the work is done.
process.exit(refused === 0 ? 0 : 1);

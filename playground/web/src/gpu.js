// Runs a launch plan (the compiler's `plan` answer) on WebGPU: the WGSL
// `phobosc build` writes, an explicit bind group layout (binding 0 the
// uniform block, then each tensor's storage buffer), one dispatch, and the
// written tensors read back as 32-bit words.

// The limits a launch is planned within, asked of the adapter at their
// highest: the compiler's (`maxComputeWorkgroupStorageSize`,
// `maxComputeInvocationsPerWorkgroup`) and the ones they need beside them.
const PLANNED_LIMITS = [
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
];

// The plan request's `limits`: what the device holds.
export function planLimits(gpu) {
  const l = gpu.device.limits;
  return {
    maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
    maxComputeInvocationsPerWorkgroup: Math.min(l.maxComputeInvocationsPerWorkgroup, l.maxComputeWorkgroupSizeX),
  };
}

let gpuPromise = null;
let abandoned = null;

// The adapter and device, once per page; `{ error }` when the browser has
// no WebGPU, gives no adapter, or WebGPU was abandoned. `lost` is set when
// the device is lost.
export function openGpu() {
  if (abandoned) return Promise.resolve({ error: abandoned });
  if (!gpuPromise) gpuPromise = open();
  return gpuPromise;
}

// Stops using WebGPU for the rest of the page's life: a pipeline that takes
// minutes to create keeps the browser's GPU process busy (SwiftShader has
// been seen to drop the whole WebGPU instance after 150 s), so later runs
// would only queue behind it. Reloading the page tries again.
export function abandonGpu(gpu, reason) {
  abandoned = reason;
  gpuPromise = null;
  try {
    gpu.device.destroy();
  } catch {
    // Already lost.
  }
}

async function open() {
  if (!('gpu' in navigator)) return { error: 'this browser has no WebGPU' };
  let adapter;
  try {
    adapter = await navigator.gpu.requestAdapter();
  } catch (err) {
    return { error: `WebGPU gave no adapter: ${err.message || err}` };
  }
  if (!adapter) return { error: 'WebGPU gave no adapter' };
  // The adapter's own limits, not WebGPU's defaults, so that kernels are
  // planned within what this device holds (the plan request's `limits`).
  const requiredLimits = {};
  for (const name of PLANNED_LIMITS) {
    if (adapter.limits[name] !== undefined) requiredLimits[name] = adapter.limits[name];
  }
  let device;
  try {
    device = await adapter.requestDevice({ requiredLimits });
  } catch {
    device = await adapter.requestDevice();
  }
  const info = adapter.info || {};
  const name = [info.vendor, info.architecture, info.description, info.device]
    .filter((s) => s)
    .join(' ');
  const gpu = { adapter, device, name: name || 'unnamed adapter', lost: null };
  device.lost.then((l) => {
    gpu.lost = l.message || l.reason || 'lost';
    gpuPromise = null;
  });
  return gpu;
}

// Runs `plan` with its `blob`; returns { outputs: Map name -> Uint32Array,
// compileMs, runMs } or throws an Error saying what WebGPU refused.
export async function runPlan(gpu, plan, blob) {
  const { device } = gpu;
  if (gpu.lost) throw new Error(`the WebGPU device was lost: ${gpu.lost}`);
  const limits = device.limits;
  for (const b of plan.buffers) {
    if (b.size > limits.maxStorageBufferBindingSize) {
      throw new Error(
        `tensor \`${b.name}\` takes ${b.size} bytes, more than this device binds (${limits.maxStorageBufferBindingSize})`,
      );
    }
  }
  if (plan.buffers.length > limits.maxStorageBuffersPerShaderStage) {
    throw new Error(
      `${plan.buffers.length} tensors, more storage buffers than this device binds (${limits.maxStorageBuffersPerShaderStage})`,
    );
  }
  const t0 = performance.now();
  device.pushErrorScope('validation');
  device.pushErrorScope('internal');
  device.pushErrorScope('out-of-memory');
  const module = device.createShaderModule({ code: plan.wgsl });
  const layout = device.createBindGroupLayout({
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      ...plan.buffers.map((b) => ({
        binding: b.binding,
        visibility: GPUShaderStage.COMPUTE,
        buffer: { type: b.read_only ? 'read-only-storage' : 'storage' },
      })),
    ],
  });
  let pipeline;
  try {
    pipeline = await device.createComputePipelineAsync({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: plan.entry_point },
    });
  } catch (err) {
    await popAll(device);
    const info = await module.getCompilationInfo();
    const msgs = info.messages.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('\n');
    throw new Error(`WebGPU refused the WGSL: ${msgs || err.message}`);
  }
  const compileMs = performance.now() - t0;
  const usage = GPUBufferUsage;
  const uniform = device.createBuffer({
    size: plan.uniform.bytes,
    usage: usage.UNIFORM | usage.COPY_DST,
  });
  device.queue.writeBuffer(uniform, 0, blob, plan.uniform.offset, plan.uniform.bytes);
  const buffers = plan.buffers.map((b) => {
    const buffer = device.createBuffer({
      size: b.size,
      usage: usage.STORAGE | usage.COPY_SRC | usage.COPY_DST,
    });
    if (b.init && b.init.bytes > 0) {
      device.queue.writeBuffer(buffer, 0, blob, b.init.offset, b.init.bytes);
    }
    return buffer;
  });
  const bindGroup = device.createBindGroup({
    layout,
    entries: [
      { binding: 0, resource: { buffer: uniform } },
      ...plan.buffers.map((b, i) => ({ binding: b.binding, resource: { buffer: buffers[i] } })),
    ],
  });
  const written = plan.buffers.map((b, i) => [b, buffers[i]]).filter(([b]) => b.written);
  const readbacks = written.map(([b]) =>
    device.createBuffer({ size: b.size, usage: usage.MAP_READ | usage.COPY_DST }),
  );
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  const [x, y, z] = plan.workgroups;
  if (x > 0 && y > 0 && z > 0) pass.dispatchWorkgroups(x, y, z);
  pass.end();
  written.forEach(([b, buffer], i) => encoder.copyBufferToBuffer(buffer, 0, readbacks[i], 0, b.size));
  const t1 = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  const runMs = performance.now() - t1;
  const errors = await popAll(device);
  if (errors.length > 0) throw new Error(`WebGPU: ${errors.join('; ')}`);
  const outputs = new Map();
  for (let i = 0; i < written.length; i++) {
    const [b] = written[i];
    await readbacks[i].mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(readbacks[i].getMappedRange().slice(0, b.bytes));
    readbacks[i].unmap();
    outputs.set(b.name, words);
    readbacks[i].destroy();
  }
  uniform.destroy();
  buffers.forEach((b) => b.destroy());
  if (gpu.lost) throw new Error(`the WebGPU device was lost: ${gpu.lost}`);
  return { outputs, compileMs, runMs };
}

async function popAll(device) {
  const out = [];
  for (let i = 0; i < 3; i++) {
    const e = await device.popErrorScope();
    if (e) out.push(e.message);
  }
  return out;
}

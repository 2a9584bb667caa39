//! Moving tensors between host and device: uploads, read-backs and the
//! host copies around them.
//!
//! Tensors over one transfer piece (64 MiB) move in pieces, so that
//! staging memory stays a few pieces beside tensors of gigabytes:
//! - **Upload** ([`Gpu::upload`]): each piece is copied into a mapped
//!   staging buffer (`MAP_WRITE | COPY_SRC`) on all cores, then the device
//!   copies it into the tensor's buffer while the host fills the next
//!   staging buffer of a ring of [`UPLOAD_RING`]. A tensor whose bits are
//!   all zero is not copied at all (wgpu zero-fills buffers); finding out
//!   is a scan on all cores that stops at the first nonzero byte.
//! - **Read-back** ([`Gpu::scan_buffer`]): pieces through two `MAP_READ`
//!   staging buffers, so the device copies the next piece while the host
//!   takes this one. A launch with a [`crate::Transfers`] sink hands each
//!   piece to it; the same piece is copied into the host tensor on other
//!   threads meanwhile, unless the sink takes that tensor alone
//!   ([`crate::Transfers::sink_only`]): then its host tensor is never
//!   written (no pass over fresh pages, no second copy of the output in
//!   memory). A tensor may also stay on the device for the caller to read
//!   when it likes ([`crate::Transfers::on_device`],
//!   [`Gpu::read_resident`]); [`Gpu::read_back_stale`] fills such host
//!   tensors later if they are wanted.
//! - **Neither**: an input the launch generates on the device
//!   ([`Gpu::generate_input`], [`crate::Transfers::generated`]), or a
//!   tensor the caller made zero ([`crate::Transfers::zeroed`]), is not
//!   uploaded at all.
//!
//! Copies on several threads matter because a single core copies into
//! freshly allocated pages at a fraction of memory bandwidth (each 4 KiB
//! page faults on first touch): measured on the H200's host, a 3 GiB
//! output took 5.3 s to read back this way on one thread.

use super::dispatch::{Prepared, Resident, bytes_of, bytes_of_mut};
use super::{Gpu, GpuError};
use crate::RuntimeError;
use phobos_core::ir::{Kernel, ParamKind};
use phobos_core::launch::Arg;
use phobos_core::tensor::Data;
use phobos_core::types::Scalar;
use std::sync::atomic::{AtomicBool, Ordering};
use wgpu::MapRangeError;

/// The bytes moved between host and device at once: uploads and readbacks
/// of larger tensors go in pieces of this size (a multiple of
/// `wgpu::COPY_BUFFER_ALIGNMENT`).
pub(super) const TRANSFER_PIECE: usize = 64 << 20;

/// Staging buffers an upload fills in turn: the host fills one while the
/// device copies the others.
const UPLOAD_RING: usize = 3;

/// The fewest bytes worth a thread of their own in a host copy or scan.
const BYTES_PER_THREAD: usize = 4 << 20;

/// Threads for a host pass over `bytes` bytes: the host's cores, fewer for
/// small passes.
fn threads_for(bytes: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(bytes / BYTES_PER_THREAD).max(1)
}

/// The parts of a host pass over `len` bytes, one a thread: offsets are
/// multiples of 4 KiB (so a mapped buffer's parts start where wgpu lets a
/// view start), lengths multiples of 4 but for the last.
fn parts(len: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    let chunk = len
        .div_ceil(threads_for(len))
        .next_multiple_of(4096)
        .max(4096);
    (0..len)
        .step_by(chunk)
        .map(move |at| at..(at + chunk).min(len))
}

/// Copies `src` into `dst` (of the same length) on several threads.
fn par_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "a copy between slices of one length");
    if threads_for(src.len()) == 1 {
        dst.copy_from_slice(src);
        return;
    }
    std::thread::scope(|s| {
        let mut rest = dst;
        for r in parts(src.len()) {
            let (head, tail) = rest.split_at_mut(r.len());
            rest = tail;
            let from = &src[r];
            s.spawn(move || head.copy_from_slice(from));
        }
    });
}

/// Copies `src` into the first bytes of `staging`, mapped for writing, on
/// several threads, each through a view of its own part.
fn par_copy_mapped(staging: &wgpu::Buffer, src: &[u8]) -> Result<(), MapRangeError> {
    std::thread::scope(|s| {
        let copies: Vec<_> = parts(src.len())
            .map(|r| {
                s.spawn(move || {
                    let mut view = staging.get_mapped_range_mut(r.start as u64..r.end as u64)?;
                    view.copy_from_slice(&src[r]);
                    Ok(())
                })
            })
            .collect();
        copies
            .into_iter()
            .try_for_each(|c| c.join().expect("a copy thread does not panic"))
    })
}

/// Whether every element's bits are zero, scanned on several threads that
/// stop once any finds a nonzero byte.
fn all_zero(data: &Data) -> bool {
    let Some(bytes) = bytes_of(data) else {
        let Data::Bool(v) = data else {
            unreachable!("only bools have no bytes")
        };
        return v.iter().all(|b| !b);
    };
    // In blocks, each OR-ed together (which vectorizes), checking between
    // blocks whether another thread already found a nonzero byte.
    const BLOCK: usize = 1 << 16;
    let found = AtomicBool::new(false);
    let zero = |part: &[u8]| {
        for block in part.chunks(BLOCK) {
            if found.load(Ordering::Relaxed) {
                return;
            }
            if block.iter().fold(0u8, |a, b| a | b) != 0 {
                found.store(true, Ordering::Relaxed);
                return;
            }
        }
    };
    let threads = threads_for(bytes.len());
    if threads == 1 {
        zero(bytes);
    } else {
        std::thread::scope(|s| {
            for part in bytes.chunks(bytes.len().div_ceil(threads)) {
                s.spawn(|| zero(part));
            }
        });
    }
    !found.load(Ordering::Relaxed)
}

/// [`phobos_core::inputs::kernel_source`]'s kernel for `elem`, checked
/// once a process; `None` for the types it does not cover.
fn generator(elem: Scalar) -> Option<&'static Kernel> {
    use std::sync::OnceLock;
    static KERNELS: [OnceLock<Option<Kernel>>; 3] = [const { OnceLock::new() }; 3];
    let slot = match elem {
        Scalar::F32 => 0,
        Scalar::I32 => 1,
        Scalar::U32 => 2,
        _ => return None,
    };
    KERNELS[slot]
        .get_or_init(|| {
            let src = phobos_core::inputs::kernel_source(elem)?;
            let (program, diags) = phobos_core::Program::parse("generated.ph", &src);
            assert!(diags.is_empty(), "the generator checks: {diags:?}");
            let kernel = program.kernel(phobos_core::inputs::GENERATOR, &[]);
            Some(kernel.expect("the generator checks"))
        })
        .as_ref()
}

/// A `map_async` request: its callback's result arrives here.
struct Mapping(std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>);

/// Requests `range` of `buffer` mapped in `mode` once the work submitted
/// so far that uses it has finished ([`Gpu::wait_mapped`] awaits it).
fn map(
    buffer: &wgpu::Buffer,
    mode: wgpu::MapMode,
    range: impl std::ops::RangeBounds<wgpu::BufferAddress>,
) -> Mapping {
    let (sent, received) = std::sync::mpsc::channel();
    buffer.map_async(mode, range, move |r| {
        // The receiver is gone only when the transfer already failed.
        let _ = sent.send(r);
    });
    Mapping(received)
}

/// Storage buffers are padded to a multiple of 4 bytes and at least 16.
fn padded(bytes: u64) -> u64 {
    bytes.next_multiple_of(4).max(16)
}

impl Gpu {
    /// A storage buffer holding `t`, for launches on buffers of the
    /// runtime's own ([`Gpu::prepare_on`]); `name` names it in errors.
    pub(crate) fn upload(
        &self,
        name: &str,
        t: &phobos_core::tensor::Tensor,
    ) -> Result<wgpu::Buffer, GpuError> {
        let buffer = self.zeroed(name, t)?;
        let bytes = bytes_of(&t.data).expect("zeroed refused bools");
        // wgpu zero-fills a buffer nothing was written to (WebGPU requires
        // it), so a tensor of zeros, such as an output that starts empty,
        // is not copied at all.
        if crate::phases::time("zero check", || all_zero(&t.data)) {
            return Ok(buffer);
        }
        // Copies move multiples of 4 bytes: an odd count of 16-bit
        // elements ends in a padded word.
        let padded_bytes;
        let bytes = if bytes.len().is_multiple_of(4) {
            bytes
        } else {
            padded_bytes = [bytes, &[0; 3][..4 - bytes.len() % 4]].concat();
            &padded_bytes[..]
        };
        // wgpu reports a refused write only to an error scope (an odd byte
        // count once went unnoticed): the upload fails, naming the tensor.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let written = if bytes.len() <= TRANSFER_PIECE {
            self.queue.write_buffer(&buffer, 0, bytes);
            Ok(())
        } else {
            self.upload_in_pieces(name, &buffer, bytes)
        };
        // The scope is popped on every path, so none is left open.
        let refused = pollster::block_on(scope.pop());
        written?;
        if let Some(e) = refused {
            return Err(GpuError::Wgpu(format!("uploading `{name}`: {e}")));
        }
        Ok(buffer)
    }

    /// A storage buffer for `t`, holding zeros (wgpu zero-fills it): for a
    /// tensor the caller made all zero ([`crate::Transfers::zeroed`]),
    /// and where uploads and generated inputs go. `name` names it in
    /// errors.
    pub(crate) fn zeroed(
        &self,
        name: &str,
        t: &phobos_core::tensor::Tensor,
    ) -> Result<wgpu::Buffer, GpuError> {
        if t.elem() == Scalar::Bool {
            return Err(GpuError::Lower(format!(
                "bool tensor `{name}`: not supported on the GPU yet"
            )));
        }
        Ok(self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(name),
            size: padded((t.len() * t.elem().size()) as u64),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        }))
    }

    /// A storage buffer holding [`phobos_core::inputs::tensor`]'s values
    /// in the type and shape of `t` (a placeholder, whose values are not
    /// read): generated on the device by
    /// [`phobos_core::inputs::kernel_source`]'s kernel, which keeps its
    /// bits, or for the types that kernel does not cover generated on the
    /// host and uploaded. `name` names it in errors.
    pub(crate) fn generate_input(
        &self,
        name: &str,
        t: &phobos_core::tensor::Tensor,
        precision: crate::Precision,
    ) -> Result<wgpu::Buffer, RuntimeError> {
        let elem = t.elem();
        let Some(generator) = generator(elem) else {
            let host = crate::phases::time("host", || phobos_core::inputs::tensor(elem, &t.shape));
            return Ok(self.upload(name, &host)?);
        };
        let n = t.len();
        let buffer = self.zeroed(name, t)?;
        let arg = super::GpuArg::Tensor {
            buffer: &buffer,
            elem,
            shape: &[n],
        };
        // Integer operations and a bitcast only: the same bits in either
        // precision, so the launch's, which this device runs.
        self.dispatch(generator, &[arg], precision)?;
        // Waited for here, so that its time is this phase's and not the
        // launch's kernel's; the launch would wait for it anyway.
        crate::phases::time("kernel", || self.wait())?;
        Ok(buffer)
    }

    /// Copies `bytes` (a multiple of 4 long) into `buffer` through a ring
    /// of staging buffers: each piece is copied on all cores into a mapped
    /// staging buffer, which the device then copies into `buffer` while
    /// the host fills the next; a staging buffer is filled again once its
    /// copy finished and it is mapped anew.
    fn upload_in_pieces(
        &self,
        name: &str,
        buffer: &wgpu::Buffer,
        bytes: &[u8],
    ) -> Result<(), GpuError> {
        let pieces: Vec<&[u8]> = bytes.chunks(TRANSFER_PIECE).collect();
        let ring: Vec<wgpu::Buffer> = (0..pieces.len().min(UPLOAD_RING))
            .map(|_| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("phobos upload"),
                    size: TRANSFER_PIECE as u64,
                    usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: true,
                })
            })
            .collect();
        // Per staging buffer: its last copy, and its mapping requested after it.
        let mut copies: Vec<(wgpu::SubmissionIndex, Option<Mapping>)> =
            Vec::with_capacity(ring.len());
        for (k, piece) in pieces.iter().enumerate() {
            let slot = k % ring.len();
            let staging = &ring[slot];
            if k >= ring.len() {
                // Its last copy finished and it was mapped again.
                let (index, mapping) = &copies[slot];
                let mapping = mapping.as_ref().expect("mapped again for this piece");
                self.wait_mapped(index.clone(), mapping, name)?;
            }
            let len = piece.len() as u64;
            crate::phases::time("staging copy", || par_copy_mapped(staging, piece)).map_err(
                |e| GpuError::Wgpu(format!("mapping a staging buffer for `{name}`: {e}")),
            )?;
            staging.unmap();
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let at = (k * TRANSFER_PIECE) as u64;
            encoder.copy_buffer_to_buffer(staging, 0, buffer, at, len);
            let index = self.queue.submit([encoder.finish()]);
            let mapping =
                (k + ring.len() < pieces.len()).then(|| map(staging, wgpu::MapMode::Write, ..));
            if copies.len() <= slot {
                copies.push((index, mapping));
            } else {
                copies[slot] = (index, mapping);
            }
        }
        Ok(())
    }

    /// Waits for the submission `index` and then for `mapping`, requested
    /// after it. Its callback may run in another thread's poll (the check
    /// lines poll while `phobosc run` reads outputs back), finishing just
    /// after this thread's wait returns: so the callback's result is
    /// awaited too, polling meanwhile, rather than assumed.
    fn wait_mapped(
        &self,
        index: wgpu::SubmissionIndex,
        mapping: &Mapping,
        name: &str,
    ) -> Result<(), GpuError> {
        self.wait_for(index)?;
        self.await_mapping(mapping, name)
    }

    /// Waits for `mapping`'s callback, polling meanwhile, after the
    /// submission it follows finished ([`Gpu::wait_mapped`]).
    fn await_mapping(&self, mapping: &Mapping, name: &str) -> Result<(), GpuError> {
        loop {
            match mapping.0.recv_timeout(std::time::Duration::from_millis(1)) {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(e)) => {
                    return Err(GpuError::Wgpu(format!(
                        "mapping a staging buffer for `{name}`: {e}"
                    )));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    self.device
                        .poll(wgpu::PollType::Poll)
                        .map_err(|e| GpuError::Lost(e.to_string()))?;
                    self.check_lost()?;
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(GpuError::Wgpu(format!(
                        "mapping a staging buffer for `{name}`: the request was dropped"
                    )));
                }
            }
        }
    }

    /// Waits for one submission (and the buffer mappings it held up); a
    /// lost device is an error.
    fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<(), GpuError> {
        crate::phases::time("device wait", || {
            self.device
                .poll(wgpu::PollType::Wait {
                    submission_index: Some(index),
                    timeout: None,
                })
                .map_err(|e| GpuError::Lost(e.to_string()))
        })?;
        self.check_lost()
    }

    /// The first `bytes` bytes of one of the caller's buffers (which needs
    /// `BufferUsages::COPY_SRC`), after the work submitted so far: the
    /// read-back of [`Gpu::dispatch`]'s outputs.
    pub fn read_buffer(&self, buffer: &wgpu::Buffer, bytes: u64) -> Result<Vec<u8>, GpuError> {
        if bytes > buffer.size() {
            return Err(GpuError::Wgpu(format!(
                "reading {bytes} bytes of a buffer of {}",
                buffer.size()
            )));
        }
        // Copies move whole 4-byte words.
        let copied = bytes
            .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
            .min(buffer.size());
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("phobos read_buffer"),
            size: copied.max(wgpu::COPY_BUFFER_ALIGNMENT),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, copied);
        self.queue.submit([encoder.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(format!("reading a buffer back: {e}")));
        }
        let mapping = map(&staging, wgpu::MapMode::Read, ..);
        self.wait()?;
        self.await_mapping(&mapping, "a buffer")?;
        let view = staging
            .get_mapped_range(..)
            .map_err(|e| GpuError::Wgpu(format!("mapping a read-back buffer: {e}")))?;
        Ok(view[..bytes as usize].to_vec())
    }

    /// Bytes `range` of `buffer` (which needs `BufferUsages::COPY_SRC`)
    /// after the work submitted so far, in pieces of at most 64 MiB: the
    /// slab one device of a split launch wrote (`crate::split`). The range
    /// need not start or end on a 4-byte word; `name` names the tensor in
    /// errors.
    pub fn read_range(
        &self,
        buffer: &wgpu::Buffer,
        range: std::ops::Range<u64>,
        name: &str,
    ) -> Result<Vec<u8>, GpuError> {
        if range.start > range.end || range.end > buffer.size() {
            return Err(GpuError::Wgpu(format!(
                "reading bytes {range:?} of `{name}`'s buffer of {}",
                buffer.size()
            )));
        }
        let mut out = Vec::with_capacity((range.end - range.start) as usize);
        let align = wgpu::COPY_BUFFER_ALIGNMENT;
        let mut at = range.start;
        while at < range.end {
            // Copies move whole words from a word-aligned offset.
            let from = at - at % align;
            let to = range
                .end
                .min(from + TRANSFER_PIECE as u64)
                .next_multiple_of(align)
                .min(buffer.size());
            let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("phobos read_range"),
                size: to - from,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(buffer, from, &staging, 0, to - from);
            let index = self.queue.submit([encoder.finish()]);
            let mapping = map(&staging, wgpu::MapMode::Read, ..);
            self.wait_mapped(index, &mapping, name)?;
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| GpuError::Wgpu(format!("mapping `{name}`: {e}")))?;
            let end = range.end.min(to);
            out.extend_from_slice(&view[(at - from) as usize..(end - from) as usize]);
            at = end;
        }
        Ok(out)
    }

    /// Copies every tensor the kernel stores to from the device into `args`.
    pub fn read_back(
        &self,
        kernel: &Kernel,
        prepared: &Prepared,
        args: &mut [Arg],
    ) -> Result<(), RuntimeError> {
        self.read_back_into(kernel, prepared, args, None)
    }

    /// [`Gpu::read_back`], handing `streaming`'s sink each piece as it
    /// arrives: while it takes a piece of a large tensor, the device copies
    /// the next and other threads copy this one into `args`, unless the
    /// sink takes that tensor alone.
    pub(super) fn read_back_into(
        &self,
        kernel: &Kernel,
        prepared: &Prepared,
        args: &mut [Arg],
        mut streaming: Option<crate::Transfers<'_>>,
    ) -> Result<(), RuntimeError> {
        let sink_only = |i: usize| streaming.as_ref().is_some_and(|s| s.sink_only.contains(&i));
        let sink_only: Vec<bool> = (0..kernel.params.len()).map(sink_only).collect();
        let on_device = |i: usize| streaming.as_ref().is_some_and(|s| s.on_device.contains(&i));
        let on_device: Vec<bool> = (0..kernel.params.len()).map(on_device).collect();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let mut staged = Vec::new();
        let mut large = Vec::new();
        for (i, p) in kernel.params.iter().enumerate() {
            let (ParamKind::Tensor { written: true, .. }, Some(buffer), false) =
                (&p.kind, &prepared.owned[i], on_device[i])
            else {
                continue;
            };
            if buffer.size() > TRANSFER_PIECE as u64 {
                large.push((i, buffer));
                continue;
            }
            let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("phobos readback"),
                size: buffer.size(),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
            staged.push((i, staging));
        }
        self.queue.submit([encoder.finish()]);
        let mappings: Vec<Mapping> = (staged.iter())
            .map(|(_, staging)| map(staging, wgpu::MapMode::Read, ..))
            .collect();
        self.wait()?;
        for ((i, staging), mapping) in staged.into_iter().zip(&mappings) {
            self.await_mapping(mapping, &kernel.params[i].name)?;
            let Arg::Tensor(t) = &mut args[i] else {
                unreachable!("bound as a tensor")
            };
            let out = bytes_of_mut(&mut t.data).expect("bool tensors are refused when prepared");
            let view = staging
                .get_mapped_range(..)
                .map_err(|e| GpuError::Wgpu(format!("mapping `{}`: {e}", kernel.params[i].name)))?;
            let piece = &view[..out.len()];
            if !sink_only[i] {
                out.copy_from_slice(piece);
            }
            if let Some(s) = streaming.as_mut() {
                (s.sink)(i, 0, piece);
            }
        }
        // Larger tensors in pieces.
        for (i, buffer) in large {
            let Arg::Tensor(t) = &mut args[i] else {
                unreachable!("bound as a tensor")
            };
            let out = bytes_of_mut(&mut t.data).expect("bool tensors are refused when prepared");
            let bytes = out.len() as u64;
            self.scan_buffer(buffer, bytes, &kernel.params[i].name, |at, piece| {
                let to = &mut out[at as usize..at as usize + piece.len()];
                match (streaming.as_mut(), sink_only[i]) {
                    (Some(s), true) => (s.sink)(i, at, piece),
                    // The sink writes while other threads copy.
                    (Some(s), false) => std::thread::scope(|scope| {
                        scope.spawn(|| par_copy(to, piece));
                        (s.sink)(i, at, piece);
                    }),
                    (None, _) => crate::phases::time("host copy", || par_copy(to, piece)),
                }
            })?;
        }
        Ok(())
    }

    /// Hands `f` the bytes of tensor parameter `param` as the launch that
    /// left `resident` stored them, in pieces in order with their offsets
    /// ([`Gpu::scan_buffer`]): `bytes` is the tensor's size. For the
    /// tensors a launch left on the device ([`crate::Transfers::on_device`]),
    /// read where and when the caller likes; this may run on another thread
    /// while kernels that read the same buffers run. Run it on the device
    /// that ran the launch.
    pub fn read_resident(
        &self,
        resident: &Resident,
        param: usize,
        bytes: u64,
        f: impl FnMut(u64, &[u8]),
    ) -> Result<(), GpuError> {
        let name = format!("parameter {param}");
        let buffer = resident
            .buffer(param)
            .ok_or_else(|| GpuError::Wgpu(format!("{name} was not left on the device")))?;
        self.scan_buffer(buffer, bytes, &name, f)
    }

    /// Reads back into `args` (the arguments of the launch that left
    /// `resident`) the tensors that launch handed to its sink alone
    /// or left on the device ([`crate::Transfers::sink_only`],
    /// [`crate::Transfers::on_device`]), so that they hold its results;
    /// afterwards [`Resident::host_current`] is true. Nothing to do, and
    /// nothing read, when it already is. Run it on the device that ran the
    /// launch.
    pub fn read_back_stale(&self, resident: &Resident, args: &mut [Arg]) -> Result<(), GpuError> {
        let mut stale = resident.stale.lock().unwrap_or_else(|e| e.into_inner());
        while let Some((param, name)) = stale.last() {
            let buffer = resident
                .buffer(*param)
                .expect("a stale tensor has a buffer");
            let Some(Arg::Tensor(t)) = args.get_mut(*param) else {
                return Err(GpuError::Wgpu(format!(
                    "filling `{name}` on the host: argument {param} is not a tensor"
                )));
            };
            let out = bytes_of_mut(&mut t.data).expect("bool tensors are refused when prepared");
            let bytes = out.len() as u64;
            self.scan_buffer(buffer, bytes, name, |at, piece| {
                par_copy(&mut out[at as usize..at as usize + piece.len()], piece)
            })?;
            stale.pop();
        }
        Ok(())
    }

    /// Reads the first `bytes` bytes of `buffer` (which needs
    /// `BufferUsages::COPY_SRC`) after the work submitted so far, handing
    /// `f` each piece in order with its offset: pieces of at most 64 MiB,
    /// through two staging buffers, so that the device copies the next
    /// piece while `f` takes this one and host memory never holds more
    /// than two pieces. `name` names the tensor in errors.
    pub(crate) fn scan_buffer(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
        name: &str,
        mut f: impl FnMut(u64, &[u8]),
    ) -> Result<(), GpuError> {
        if bytes > buffer.size() {
            return Err(GpuError::Wgpu(format!(
                "reading {bytes} bytes of `{name}`'s buffer of {}",
                buffer.size()
            )));
        }
        let piece = TRANSFER_PIECE as u64;
        let pieces = bytes.div_ceil(piece);
        let staging: Vec<wgpu::Buffer> = (0..pieces.min(2))
            .map(|_| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("phobos readback"),
                    size: bytes
                        .min(piece)
                        .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        // Copies move whole 4-byte words, within the buffer.
        let copied = |k: u64| {
            (bytes - k * piece)
                .min(piece)
                .next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
                .min(buffer.size() - k * piece)
        };
        let copy = |k: u64| {
            let (at, len) = (k * piece, copied(k));
            let to = &staging[(k % 2) as usize];
            let mut encoder = self.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(buffer, at, to, 0, len);
            let index = self.queue.submit([encoder.finish()]);
            (index, map(to, wgpu::MapMode::Read, ..len))
        };
        let mut submitted: std::collections::VecDeque<_> = (0..pieces.min(2)).map(copy).collect();
        for k in 0..pieces {
            let (index, mapping) = submitted.pop_front().expect("two copies ahead");
            self.wait_mapped(index, &mapping, name)?;
            let at = k * piece;
            let len = (bytes - at).min(piece) as usize;
            let to = &staging[(k % 2) as usize];
            {
                let view = to
                    .get_mapped_range(..copied(k))
                    .map_err(|e| GpuError::Wgpu(format!("mapping `{name}`: {e}")))?;
                f(at, &view[..len]);
            }
            to.unmap();
            if k + 2 < pieces {
                submitted.push_back(copy(k + 2));
            }
        }
        Ok(())
    }
}

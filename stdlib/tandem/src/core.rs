//! The Tandem step: the ChaCha quarter round on a 128-bit state, the Weyl
//! increment, the feed-forward, chunk seeding and the warm-up.
//!
//! Everything here is 32-bit wrapping integer arithmetic (add, xor, rotate,
//! multiply by a constant), because WGSL has no 64-bit integers and no
//! `mulhi`; SPEC.md section 3 is the normative text for this file.

/// Golden-ratio Weyl constant added (times the step number) into word 0 of
/// the state before each step of a chunk.
pub const WEYL_STREAM: u32 = 0x9E37_79B9;

/// Weyl constant of the key derivation rounds. It differs from
/// [`WEYL_STREAM`] so that no derivation passes through the same
/// intermediate states as some chunk's warm-up (sqrt(3) fraction, as SHA-256).
pub const WEYL_DERIVE: u32 = 0xBB67_AE85;

/// Steps run after seeding a chunk whose outputs are discarded.
pub const WARM_UP_STEPS: u32 = 8;

/// The default chunk length in 16-byte blocks.
pub const DEFAULT_K: u32 = 32;

/// The largest chunk length allowed (the largest one tested with PractRand).
pub const MAX_K: u32 = 4096;

/// Chunks per interleaved group: one step of a group is 8 blocks = 128 bytes.
pub const GROUP_CHUNKS: u64 = 8;

/// One 16-byte output block: four 32-bit words, word 0 first in memory.
pub type Block = [u32; 4];

/// ChaCha's quarter round on (a, b, c, d) with rotations 16, 12, 8, 7.
#[inline(always)]
pub fn quarter_round(s: &mut Block) {
    s[0] = s[0].wrapping_add(s[1]);
    s[3] = (s[3] ^ s[0]).rotate_left(16);
    s[2] = s[2].wrapping_add(s[3]);
    s[1] = (s[1] ^ s[2]).rotate_left(12);
    s[0] = s[0].wrapping_add(s[1]);
    s[3] = (s[3] ^ s[0]).rotate_left(8);
    s[2] = s[2].wrapping_add(s[3]);
    s[1] = (s[1] ^ s[2]).rotate_left(7);
}

/// One round: add `weyl` into word 0, then two quarter rounds. Returns the
/// round's input (after the Weyl add) so the caller can feed it forward.
#[inline(always)]
pub fn round(s: &mut Block, weyl: u32) -> Block {
    s[0] = s[0].wrapping_add(weyl);
    let input = *s;
    quarter_round(s);
    quarter_round(s);
    input
}

/// Word-wise wrapping sum, the feed-forward of the step.
#[inline(always)]
fn add_words(a: Block, b: Block) -> Block {
    [
        a[0].wrapping_add(b[0]),
        a[1].wrapping_add(b[1]),
        a[2].wrapping_add(b[2]),
        a[3].wrapping_add(b[3]),
    ]
}

/// A chunk being stepped: its state and the number of steps taken so far.
#[derive(Clone, Debug)]
pub struct Chunk {
    state: Block,
    steps: u32,
}

impl Chunk {
    /// Seeds chunk `chunk` of `key` and runs the eight warm-up steps.
    ///
    /// `k_tag` is the stream's `K` (0 for a continuation sequence). Mixing it
    /// in makes streams of one key with different `K` disjoint: otherwise
    /// chunk `c`'s first blocks would be shared by every `K`.
    pub fn new(key: Block, k_tag: u32, chunk: u64) -> Chunk {
        let mut c = Chunk {
            state: [
                key[0],
                key[1] ^ k_tag,
                key[2] ^ chunk as u32,
                key[3] ^ (chunk >> 32) as u32,
            ],
            steps: 0,
        };
        for _ in 0..WARM_UP_STEPS {
            c.step();
        }
        c
    }

    /// Step number `t` (1-based, counting the warm-up): the state moves to
    /// the permuted state and the output is the permuted state plus the
    /// round's input (feed-forward), so the output never reveals the state.
    #[inline(always)]
    pub fn step(&mut self) -> Block {
        self.steps = self.steps.wrapping_add(1);
        let input = round(&mut self.state, self.steps.wrapping_mul(WEYL_STREAM));
        add_words(self.state, input)
    }

    /// Skips `n` steps (used by random access into a chunk).
    pub fn skip(&mut self, n: u32) {
        for _ in 0..n {
            self.step();
        }
    }
}

/// Where stream block `b` comes from under chunk length `k`:
/// `(chunk index, block index within the chunk)`.
///
/// Groups of 8 chunks are interleaved: block `j` of chunks `8G..8G+7` are
/// the 8 consecutive stream blocks `8*K*G + 8*j + 0..8`.
#[inline]
pub fn locate(b: u64, k: u32) -> (u64, u32) {
    let per_group = GROUP_CHUNKS * u64::from(k);
    let group = b / per_group;
    let within = b % per_group;
    let j = (within / GROUP_CHUNKS) as u32;
    let lane = within % GROUP_CHUNKS;
    (group * GROUP_CHUNKS + lane, j)
}

/// Block `b` of the stream of `key` with chunk length `k`, computed
/// directly: seed the chunk, warm up, and step to the block.
pub fn block_at(key: Block, k: u32, b: u64) -> Block {
    let (chunk, j) = locate(b, k);
    let mut c = Chunk::new(key, k, chunk);
    c.skip(j);
    c.step()
}

/// Reads a stream sequentially a whole group at a time. A fill's
/// consecutive blocks belong to different chunks (the 8 lanes of a step), so
/// caching one chunk would recompute the warm-up for every block; caching
/// the group's `8*K` blocks amortises seeding over `K` steps.
#[derive(Clone, Debug)]
pub struct GroupCursor {
    key: Block,
    k: u32,
    group: Option<u64>,
    blocks: Vec<Block>,
}

impl GroupCursor {
    pub fn new(key: Block, k: u32) -> GroupCursor {
        GroupCursor {
            key,
            k,
            group: None,
            blocks: vec![[0; 4]; (GROUP_CHUNKS * u64::from(k)) as usize],
        }
    }

    /// Stream block `b`; equal to [`block_at`] by construction.
    #[inline]
    pub fn block(&mut self, b: u64) -> Block {
        let per_group = GROUP_CHUNKS * u64::from(self.k);
        let group = b / per_group;
        if self.group != Some(group) {
            self.fill_group(group);
        }
        self.blocks[(b % per_group) as usize]
    }

    fn fill_group(&mut self, group: u64) {
        for lane in 0..GROUP_CHUNKS {
            let mut c = Chunk::new(self.key, self.k, group * GROUP_CHUNKS + lane);
            for j in 0..u64::from(self.k) {
                self.blocks[(j * GROUP_CHUNKS + lane) as usize] = c.step();
            }
        }
        self.group = Some(group);
    }
}

impl BlockSource for GroupCursor {
    #[inline]
    fn block(&mut self, b: u64) -> Block {
        GroupCursor::block(self, b)
    }
}

/// Random access without a cache: each block is computed from its chunk's
/// seed, the cheapest way to get one element.
#[derive(Clone, Copy, Debug)]
pub struct Direct {
    pub key: Block,
    pub k: u32,
}

impl BlockSource for Direct {
    fn block(&mut self, b: u64) -> Block {
        block_at(self.key, self.k, b)
    }
}

/// Anything that yields stream blocks by index, and the word and 64-bit
/// draw views of the same bytes (little-endian).
pub trait BlockSource {
    /// Stream block `b`.
    fn block(&mut self, b: u64) -> Block;

    /// 32-bit word `n` of the stream (word `n % 4` of block `n / 4`).
    #[inline]
    fn word(&mut self, n: u64) -> u32 {
        self.block(n >> 2)[(n & 3) as usize]
    }

    /// 64-bit draw `d`: words `2d` (low half) and `2d + 1` (high half).
    #[inline]
    fn draw_u64(&mut self, d: u64) -> u64 {
        let b = self.block(d >> 1);
        let w = ((d & 1) * 2) as usize;
        u64::from(b[w]) | (u64::from(b[w + 1]) << 32)
    }
}

/// The continuation sequence of a key: chunk 0 seeded with `K` tag 0 (which
/// no stream uses) and stepped without limit (blocks from steps 9, 10, 11,
/// ...), read word by word. Rejections and
/// ziggurat misses continue here, on a key derived from the element index,
/// so their results do not depend on `K` or on the position of the fill.
#[derive(Clone, Debug)]
pub struct Continuation {
    chunk: Chunk,
    block: Block,
    used: usize,
}

impl Continuation {
    pub fn new(key: Block) -> Continuation {
        Continuation {
            chunk: Chunk::new(key, 0, 0),
            block: [0; 4],
            used: 4,
        }
    }

    /// The next 32-bit word of the sequence.
    pub fn next_u32(&mut self) -> u32 {
        if self.used == 4 {
            self.block = self.chunk.step();
            self.used = 0;
        }
        self.used += 1;
        self.block[self.used - 1]
    }

    /// The next 64-bit draw: two consecutive words, low half first. Callers
    /// never mix 32- and 64-bit reads on one sequence, so a 64-bit draw always
    /// starts at an even word.
    pub fn next_u64(&mut self) -> u64 {
        let lo = self.next_u32();
        let hi = self.next_u32();
        u64::from(lo) | (u64::from(hi) << 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_interleaves_groups_of_eight() {
        assert_eq!(locate(0, 32), (0, 0));
        assert_eq!(locate(7, 32), (7, 0));
        assert_eq!(locate(8, 32), (0, 1));
        assert_eq!(locate(255, 32), (7, 31));
        assert_eq!(locate(256, 32), (8, 0));
        assert_eq!(locate(9, 1), (9, 0));
    }

    #[test]
    fn cursor_matches_direct_blocks() {
        let key = [1, 2, 3, 4];
        for k in [1, 2, 32] {
            let mut cur = GroupCursor::new(key, k);
            for b in (0..600).chain([1 << 40, u64::MAX]) {
                assert_eq!(cur.block(b), block_at(key, k, b), "k={k} b={b}");
            }
        }
    }

    #[test]
    fn continuation_is_chunk_zero_unbounded() {
        let key = [9, 8, 7, 6];
        let mut c = Continuation::new(key);
        let mut chunk = Chunk::new(key, 0, 0);
        for j in 0..5000 {
            let got = [c.next_u32(), c.next_u32(), c.next_u32(), c.next_u32()];
            assert_eq!(got, chunk.step(), "block {j}");
        }
        // Tag 0 keeps it apart from every stream's chunk 0.
        assert_ne!(Continuation::new(key).next_u32(), block_at(key, 1, 0)[0]);
    }

    #[test]
    fn streams_of_other_k_share_no_blocks() {
        let key = [0; 4];
        assert_ne!(block_at(key, 1, 0), block_at(key, 32, 0));
        assert_ne!(block_at(key, 32, 0), block_at(key, 64, 0));
    }
}

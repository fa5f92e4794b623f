//! How many samples of each kind a run takes: the full run and `--quick`.

/// How many samples of each kind.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plan {
    /// `--quick`: few samples; the run only has to complete.
    pub(super) quick: bool,
    /// Cold opens of the 1 KiB bundle, and opens from the warm pool.
    pub(super) opens: usize,
    /// Opens of each larger bundle, and of pre-started raw views with the bridge.
    pub(super) sized_opens: usize,
    /// Patches per state size (a quarter of them for states over 100 kB).
    pub(super) patches: usize,
    /// Timestamped page events.
    pub(super) pings: usize,
    /// Fresh processes per variant for the first Surface after start.
    pub(super) firsts: usize,
    /// Patches sent back to back in the patch flood.
    pub(super) patch_flood: usize,
    /// How long the page floods events, ms.
    pub(super) event_flood_ms: u64,
    /// The numbers of Surfaces whose memory is measured.
    pub(super) memory_counts: &'static [usize],
    /// Many Surfaces (#29): how many are opened in one conversation, and how many at most are
    /// shown at a time.
    pub(super) many: (usize, usize),
}

/// The full run: `scripts/bench.sh`, BENCHMARKS.md.
pub(super) const FULL: Plan = Plan {
    quick: false,
    opens: 30,
    sized_opens: 10,
    patches: 200,
    pings: 100,
    firsts: 5,
    patch_flood: 1000,
    event_flood_ms: 2000,
    memory_counts: &[1, 10, 16],
    many: (200, 16),
};

/// `--quick`: what `scripts/test.sh` runs once.
pub(super) const QUICK: Plan = Plan {
    quick: true,
    opens: 3,
    sized_opens: 1,
    patches: 10,
    pings: 10,
    firsts: 1,
    patch_flood: 50,
    event_flood_ms: 300,
    memory_counts: &[1, 2],
    many: (24, 4),
};

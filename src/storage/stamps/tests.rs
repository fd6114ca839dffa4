//! The stamps against a naive model, their memory use, and their checks
//! against planted faults.

use super::block::Block;
use super::scan::newer_than;
use super::tick::AtomicTick;
use super::*;

/// The rows a naive model says changed after `since`.
fn naive(model: &[u32], len: usize, since: u32) -> Vec<usize> {
    (0..len).filter(|&row| model[row] > since).collect()
}

fn found(stamps: &mut Stamps, len: usize, since: u32, shift: u32) -> Vec<usize> {
    let mut rows = Vec::new();
    stamps.changed_blocks(len, Tick::new(since), |start, mut mask| {
        assert_eq!(start % (1 << shift), 0, "blocks start at multiples of their size");
        while mask != 0 {
            rows.push(start + mask.trailing_zeros() as usize);
            mask &= mask - 1;
        }
    });
    rows
}

#[test]
fn changed_rows_match_a_naive_model_through_marks_moves_and_rebases() {
    // Blocks of 64 rows and of 4 (a chunk of few, large rows): 8 and
    // 128 blocks, so the scan's groups of 64 blocks are crossed. The
    // floor rises now and then; consumers look at or after it.
    for shift in [6, 2] {
        let capacity = 512;
        let floor = Floor::default();
        let group = LastMark::default();
        let mut stamps = Stamps::new(capacity, shift, floor.clone(), group.clone());
        let mut model = vec![0u32; capacity];
        let mut tick = 1;
        let mut len = capacity;
        // A small deterministic generator: no dependency for tests.
        let mut state = 0x9E37_79B9_u32 ^ shift;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as usize % bound
        };
        // Under Miri, fewer rounds, each row read back every fourth:
        // the same paths, crossing the same block and group bounds.
        let (rounds, every) = if cfg!(miri) { (160, 4) } else { (5_000, 1) };
        for round in 0..rounds {
            match next(7) {
                0 | 1 => {
                    let row = next(len);
                    stamps.mark(row as u32, Tick::new(tick));
                    model[row] = tick;
                }
                2 => {
                    let start = next(len);
                    let count = next(len - start + 1);
                    stamps.mark_range(start, count, Tick::new(tick));
                    model[start..start + count].fill(tick);
                }
                3 => {
                    // The last row moves into a hole, or a row is cleared.
                    let row = next(len);
                    let stamp = if next(2) == 0 { model[len - 1] } else { 0 };
                    stamps.set(row as u32, Tick::new(stamp));
                    model[row] = stamp;
                }
                4 => {
                    tick += 1;
                    if next(3) == 0 {
                        // The oldest consumer looked: the floor rises, not past
                        // the last tick ended.
                        floor.set(Tick::new(
                            floor.get().get() + next((tick - floor.get().get()) as usize) as u32,
                        ));
                    }
                }
                5 => {
                    // Rows leave and come back, fresh.
                    let new_len = 1 + next(capacity);
                    for (row, stamp) in model.iter_mut().enumerate().take(new_len).skip(len.min(new_len)) {
                        stamps.set(row as u32, Tick::NEVER);
                        *stamp = 0;
                    }
                    len = new_len;
                }
                _ => {
                    let base = next(tick as usize) as u32;
                    stamps.rebase(Tick::new(base));
                    // As an archetype does: its last mark, the columns' largest.
                    group.set(stamps.latest());
                    for stamp in &mut model {
                        *stamp = stamp.saturating_sub(base);
                    }
                    tick -= base;
                    floor.set(floor.get().rebased(Tick::new(base)));
                }
            }
            let since = floor.get().get() + next((tick - floor.get().get()) as usize + 1) as u32;
            assert_eq!(
                found(&mut stamps, len, since, shift),
                naive(&model, len, since),
                "since {since}, floor {}",
                floor.get().get()
            );
            // Exact above the floor; at or below it, anything at or below.
            if round % every != 0 {
                continue;
            }
            assert_eq!(
                stamps.check(Tick::new(tick), &floor, Some(&group)),
                Ok(()),
                "round {round}"
            );
            for (row, &stamp) in model.iter().enumerate().take(len) {
                let got = stamps.get(row as u32).get();
                if stamp > floor.get().get() {
                    assert_eq!(got, stamp, "row {row}");
                } else {
                    assert!(got <= floor.get().get(), "row {row}: {got} above the floor for {stamp}");
                }
                assert_eq!(stamps.is_live(row as u32), stamp > floor.get().get());
            }
        }
    }
}

#[test]
fn rows_get_entries_of_their_own_only_when_one_leaves_its_blocks_mask() {
    let mut stamps = Stamps::new(256, 6, Floor::default(), LastMark::default());
    // Four block summaries and one span's.
    let blocks = 4 * size_of::<Block>() + size_of::<AtomicTick>();
    assert_eq!(stamps.bytes(), blocks, "a new column's stamps: the block summaries");
    // Whole blocks written, tick after tick: summaries only.
    for tick in 1..4 {
        stamps.mark_range(0, 256, Tick::new(tick));
    }
    stamps.set(255, Tick::NEVER);
    assert_eq!(stamps.bytes(), blocks);
    assert_eq!(found(&mut stamps, 256, 2, 6), (0..255).collect::<Vec<_>>());
    // One row written at a later tick: the others of its block keep 3.
    stamps.mark(5, Tick::new(4));
    assert_eq!(stamps.bytes(), blocks + 256 * size_of::<AtomicTick>());
    assert_eq!(
        (stamps.get(5).get(), stamps.get(6).get(), stamps.get(255).get()),
        (4, 3, 0)
    );
    assert_eq!(found(&mut stamps, 256, 3, 6), [5]);
}

#[test]
fn rows_left_at_or_below_the_floor_get_no_entries() {
    let floor = Floor::default();
    let mut stamps = Stamps::new(256, 6, floor.clone(), LastMark::default());
    let blocks = 4 * size_of::<Block>() + size_of::<AtomicTick>();
    // A scattered write, a row per block per tick, the one consumer
    // looking after each tick: every block's tick moves, no entry kept.
    for tick in 1..10u32 {
        for block in 0..4 {
            stamps.mark(block * 64 + tick, Tick::new(tick));
        }
        floor.set(Tick::new(tick));
    }
    assert_eq!(stamps.bytes(), blocks, "no row entries");
    for block in 0..4 {
        stamps.mark(block * 64 + 10, Tick::new(10));
    }
    assert_eq!(found(&mut stamps, 256, 9, 6), [10, 74, 138, 202]);
    // The consumer has not looked since tick 10: rows leaving the mask
    // at tick 11 keep 10 in entries of their own.
    stamps.mark(5, Tick::new(11));
    assert_eq!(stamps.bytes(), blocks + 256 * size_of::<AtomicTick>());
    assert_eq!((stamps.get(10).get(), stamps.get(5).get()), (10, 11));
    assert_eq!(found(&mut stamps, 256, 9, 6), [5, 10, 74, 138, 202]);
}

#[test]
fn growing_keeps_every_stamp_and_block() {
    let mut stamps = Stamps::new(64, 6, Floor::default(), LastMark::default());
    stamps.mark(3, Tick::new(5));
    stamps.mark(60, Tick::new(7));
    stamps.grow(200);
    assert!(stamps.capacity() >= 200);
    stamps.mark(130, Tick::new(9));
    assert_eq!(found(&mut stamps, 200, 4, 6), [3, 60, 130]);
    assert_eq!(found(&mut stamps, 200, 6, 6), [60, 130]);
    assert_eq!(found(&mut stamps, 200, 9, 6), Vec::<usize>::new());
}

#[test]
fn the_simd_compare_matches_the_scalar_one() {
    let stamps: Vec<u32> = (0..64).map(|i| (i * 37) % 50).collect();
    for len in [0, 1, 3, 4, 5, 31, 64] {
        for since in [0, 10, 25, 49, 50] {
            let expected = (0..len).fold(0u64, |m, i| m | (u64::from(stamps[i] > since) << i));
            assert_eq!(
                newer_than(&stamps[..len], Tick::new(since)),
                expected,
                "len {len} since {since}"
            );
        }
    }
}

#[test]
fn the_checks_find_each_planted_fault() {
    let (floor, group) = (Floor::default(), LastMark::default());
    // Block 0: row 3 stamped 2, then row 5 at 5 (row 3 keeps 2 in its
    // entry, out of the mask: its block's prev is 2); block 1: row 70 at 4.
    let stamped = || {
        let stamps = Stamps::new(128, 6, floor.clone(), group.clone());
        stamps.mark(3, Tick::new(2));
        stamps.mark(70, Tick::new(4));
        stamps.mark(5, Tick::new(5));
        stamps
    };
    let now = Tick::new(5);
    assert_eq!(stamped().check(now, &floor, Some(&group)), Ok(()));
    let broken = |stamps: &Stamps, now: Tick, floor: &Floor| {
        stamps
            .check(now, floor, Some(&group))
            .expect_err("a planted fault is found")
    };
    // A block summary out of order: a bound on the other rows after the
    // block's largest stamp.
    let stamps = stamped();
    stamps.blocks[0].prev.store(Tick::new(6));
    assert!(broken(&stamps, now, &floor).contains("not in order"));
    // A span below one of its blocks (a scan would skip a changed block).
    let stamps = stamped();
    stamps.spans[0].store(Tick::new(3));
    assert!(broken(&stamps, now, &floor).contains("its span's 3"));
    // A row out of its block's mask stamped after the block's prev.
    let stamps = stamped();
    stamps.rows.get().expect("row 3 has an entry")[3].store(Tick::new(4));
    assert!(broken(&stamps, now, &floor).contains("row 3 of change stamps"));
    // A stamp after the current tick (a mark with a wrong tick).
    assert!(broken(&stamped(), Tick::new(4), &floor).contains("after the current tick"));
    // Stamps that do not share the context's floor.
    assert!(broken(&stamped(), now, &Floor::default()).contains("floor"));
    // The clock: a floor not before the current tick.
    let clock = Clock::new();
    assert_eq!(clock.check(), Ok(()));
    clock.floor().set(Tick::FIRST);
    assert!(clock.check().expect_err("a floor at now").contains("floor"));
}

//! steady_frame: one frame of a game with every reactive piece in use at
//! once (see `common/frame.rs`): 10,000 replaces seen by a reactive system
//! and an entity index, a flag toggled on 1,000 entities, 100 pooled `Vec`
//! components churned, and a command buffer that despawns and spawns
//! sparks while a query iterates them. Once warm it allocates nothing
//! (`tests/steady_state.rs` checks that).
//!
//! API measured: `Context::modify_with` per mover (the README's observed
//! write) with a `Reactive` system and an `EntityIndex` following;
//! `Context::set_flag`; `Context::remove`, `Context::pool().take()`
//! (pooled) and `Context::add`; a query iterated while a `CommandBuffer`
//! records `destroy_entity` and `create_entity_with`, then `playback`.
//!
//! Baseline: the same work by hand (`common::frame::Baseline`): `Vec`s, a
//! dirty list, a foldhash map from cell to ids kept current on each move, a
//! `bool` per mover, a free list of trail buffers, a `Vec` of sparks.

mod common;

use common::frame::{Baseline, CHURNED, Game, MOVERS, Pos, SPARKS, Selected, Spark, TAGGED, Trail, cell};
use common::report_ratios;
use criterion::Criterion;

/// Runs both for a few frames and checks that they did the same work.
fn check(game: &mut Game, baseline: &mut Baseline) {
    for _ in 0..3 {
        game.frame();
        baseline.frame();
    }
    assert_eq!(game.seen(), baseline.seen(), "the same movers seen, the same sum");
    assert_eq!(game.context.pool::<Trail>().len(), 0, "every pooled trail is in use");
    let context = &game.context;
    for (i, &e) in game.movers().iter().enumerate().step_by(97) {
        let p = context.get::<Pos>(e).unwrap();
        let here = context.index(game.by_cell).unwrap().get(&cell(p)).len();
        assert_eq!(here, baseline.by_cell[&cell(p)].len(), "mover {i}'s cell holds as many");
        assert_eq!(context.has::<Selected>(e), i < TAGGED);
        assert_eq!(context.get::<Trail>(e).ok().map(|t| &t.0[..]), baseline.trail(i));
    }
    let sparks: Vec<Spark> = context.query::<&Spark>().iter().copied().collect();
    assert_eq!(sparks.len(), SPARKS);
    assert!(sparks.iter().all(|s| baseline.sparks().contains(s)));
    assert_eq!(context.len(), MOVERS + SPARKS);
    assert_eq!(context.query::<&Trail>().iter().count(), CHURNED);
    context.check_invariants().unwrap();
}

fn bench(c: &mut Criterion) {
    let mut game = Game::new();
    let mut baseline = Baseline::new();
    check(&mut game, &mut baseline);

    let mut group = c.benchmark_group("steady_frame");
    group.sample_size(20);
    group.bench_function("baseline_by_hand", |b| {
        b.iter(|| {
            let (seen, _) = baseline.seen();
            baseline.frame();
            assert_eq!(baseline.seen().0, seen + MOVERS);
        })
    });
    group.bench_function("reactecs", |b| {
        b.iter(|| {
            let (seen, _) = game.seen();
            game.frame();
            assert_eq!(game.seen().0, seen + MOVERS);
        })
    });
    group.finish();
    game.context.check_invariants().unwrap();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
    report_ratios("steady_frame", "baseline_by_hand", &["reactecs"]);
}
